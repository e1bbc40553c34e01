import Foundation

/// Resolution as a pure step machine (docs/spec.md §5): a run's state and one input
/// in, the next step out. No clock, no app code, no output: the engine's
/// actor gathers the inputs (an app's own resolution, an answer heard) and
/// carries the steps out. Runs that do not come from a phrase (a shortcut
/// step, an automation, an external caller) go through the same steps.
enum RunMachine {
    /// What the engine does next with a run.
    enum Step: Sendable {
        /// Resolve the next parameter (or finish when none is left).
        case resolveNext(Run)
        /// Ask for `definition`'s value (a list of `options` when given), after saying `preface`.
        case ask(Run, ParameterDefinition, prompt: String?, options: [ParameterOption]?, preface: String?)
        /// Ask whether a guessed value is right.
        case confirmValue(Run, ParameterDefinition, ParameterOption, prompt: String?)
        /// Look an open answer up among the parameter's entities.
        case lookUp(Run, ParameterDefinition, text: String)
        /// Every parameter is resolved: confirm the stakes first.
        case confirm(Run)
        /// Every parameter is resolved: perform now.
        case perform(Run)
        case cancel
        /// Say the open line again.
        case repeatLine
        /// The answer did not fit: "Sorry?" and the line again.
        case notUnderstood
    }

    /// What resolving a run's current parameter means: skip it (its parent
    /// did not call for it), or the resolution to apply.
    static func skipsCurrent(_ run: Run) -> Bool {
        let definition = run.descriptor.parameters[run.index]
        guard let parent = definition.parent else { return false }
        return !parent.values.contains(run.values[parent.parameter] ?? "")
    }

    /// The step after the current parameter resolved as `resolution`.
    /// `.success` values still need assigning to the intent (which may
    /// refuse them); `accepted(_:)` and `refused(_:)` continue from there.
    static func step(_ run: Run, resolution: ParameterResolution) -> Step {
        var run = run
        let definition = run.descriptor.parameters[run.index]
        switch resolution {
        case .success(let value):
            run.values[definition.name] = value
            run.index += 1
            return .resolveNext(run)
        case .notRequired:
            return .resolveNext(skipped(run))
        case .needsValue(let prompt):
            run.values[definition.name] = nil
            return .ask(run, definition, prompt: prompt, options: nil, preface: nil)
        case .disambiguation(let options, let prompt):
            return .ask(run, definition, prompt: prompt, options: options, preface: nil)
        case .confirmation(let option, let prompt):
            return .confirmValue(run, definition, option, prompt: prompt)
        case .unsupported(let reason):
            run.values[definition.name] = nil
            run.settled.remove(definition.name)
            return .ask(run, definition, prompt: nil, options: nil, preface: reason)
        }
    }

    /// The current parameter left without a value.
    static func skipped(_ run: Run) -> Run {
        var run = run
        run.values[run.descriptor.parameters[run.index].name] = nil
        run.index += 1
        return run
    }

    /// The intent refused a value as it was assigned (an entity gone meanwhile).
    static func refused(_ run: Run, _ definition: ParameterDefinition) -> Step {
        var run = run
        run.values[definition.name] = nil
        return .ask(run, definition, prompt: nil, options: nil, preface: "That \(definition.title.lowercased()) isn't available.")
    }

    /// The step once no parameter is left.
    static func finished(_ run: Run) -> Step {
        run.descriptor.requiresConfirmation ? .confirm(run) : .perform(run)
    }

    /// The device's resolution when the app has none of its own, given what
    /// can be known without the app: a proposed value, bounds, a default.
    /// nil: the engine must look further (an entity's default, the usual value).
    static func defaultResolution(_ definition: ParameterDefinition, proposed: String?) -> ParameterResolution? {
        if let proposed {
            if let bounds = definition.bounds, let number = Double(proposed), let reason = bounds.violation(number) {
                return .unsupported(reason: reason)
            }
            return .success(proposed)
        }
        if let value = definition.defaultValue { return .success(value) }
        return nil
    }

    /// The step after an answer to a question. `answer` is what the
    /// question's follow-up grammar made of the words (nil: nothing).
    static func step(_ question: Waiting.Question, answer: Resolution?, text: String) -> Step {
        var run = question.run
        guard let answer else {
            if case .value(let definition) = question.subject {
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if case .text = question.question.expectation, !trimmed.isEmpty {
                    run.values[definition.name] = trimmed
                    return .resolveNext(run)
                }
                if definition.kind == .entity { return .lookUp(run, definition, text: text) }
            }
            return .notUnderstood
        }
        switch answer.target {
        case .builtin(.cancel): return .cancel
        case .builtin(.repeat): return .repeatLine
        default: break
        }
        switch question.subject {
        case .confirmValue(let definition, let option):
            switch answer.values[FollowUpGrammar.yesNo] {
            case "yes":
                run.values[definition.name] = option.id
                run.settled.insert(definition.name)
                return .resolveNext(run)
            case "no":
                return .ask(run, definition, prompt: nil, options: nil, preface: nil)
            default:
                return .notUnderstood
            }
        case .value(let definition), .disambiguation(let definition):
            let value: String?
            var listedChoice = false
            if let option = answer.values[FollowUpGrammar.option] {
                value = option
                listedChoice = true
            } else if let ordinal = answer.values[FollowUpGrammar.ordinal].flatMap(Int.init),
                      case .options(_, let listed) = question.question.expectation, ordinal >= 1, ordinal <= listed.count {
                value = listed[ordinal - 1].id
                listedChoice = true
            } else {
                value = answer.values[FollowUpGrammar.number] ?? answer.values[FollowUpGrammar.duration]
                    ?? answer.values[FollowUpGrammar.yesNo].map { $0 == "yes" ? "true" : "false" }
            }
            guard let value else { return .notUnderstood }
            run.values[definition.name] = value
            if case .disambiguation = question.subject, listedChoice { run.settled.insert(definition.name) }
            return .resolveNext(run)
        }
    }

    /// The step after an open answer was looked up among the entities.
    static func step(_ run: Run, _ definition: ParameterDefinition, found: [ParameterOption]) -> Step {
        var run = run
        switch found.count {
        case 0: return .notUnderstood
        case 1:
            run.values[definition.name] = found[0].id
            run.settled.insert(definition.name)
            return .resolveNext(run)
        default:
            return .ask(run, definition, prompt: nil, options: found, preface: nil)
        }
    }

    /// What an answer to a confirmation (or to "forget my history") means.
    enum ConfirmationStep: Sendable, Equatable {
        case cancel
        case repeatLine
        case accept
        /// "Yes" where only the button may confirm.
        case voiceRefused
        case notUnderstood
    }

    static func confirmation(answer: Resolution?, voiceAllowed: Bool) -> ConfirmationStep {
        switch (answer?.target, answer?.values[FollowUpGrammar.yesNo]) {
        case (.builtin(.cancel)?, _), (_, "no"): .cancel
        case (.builtin(.repeat)?, _): .repeatLine
        case (_, "yes"): voiceAllowed ? .accept : .voiceRefused
        default: .notUnderstood
        }
    }
}

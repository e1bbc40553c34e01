import Foundation

/// Resolution (docs/spec.md §5): the actor carrying out `RunMachine`'s steps.
extension ConversationEngine {
    // MARK: - Resolution (docs/spec.md §5), carried out from RunMachine's steps

    /// Resolves the run's parameters in declaration order, then confirms, then performs.
    func resolve(_ start: Run) async {
        phase = .busy(start.id)
        await drive(.resolveNext(start), id: start.id, answering: nil)
    }

    /// Carries steps out until the run waits, ends or is cancelled. An answer
    /// that turns out not to fit (an open answer no entity matches) reopens
    /// the wait it answered.
    private func drive(_ first: RunMachine.Step, id: RunID, answering waiting: Waiting?) async {
        var step = first
        while true {
            if case .notUnderstood = step {
                guard let waiting, isCurrent(id) else { return }
                await notUnderstood(waiting)
                return
            }
            guard let next = await carry(step) else { return }
            step = next
        }
    }

    /// "Sorry?" and the open line again, with a fresh deadline.
    func notUnderstood(_ waiting: Waiting) async {
        phase = .waiting(waiting.renewed(at: clock.instant))
        await say("Sorry? \(waiting.line)")
        lastLine = waiting.line
        await rest()
    }

    /// Carries one step out; the next step, or nil when the run waits, ends
    /// or was cancelled meanwhile.
    private func carry(_ step: RunMachine.Step) async -> RunMachine.Step? {
        switch step {
        case .resolveNext(let run):
            guard isCurrent(run.id) else { return nil }
            guard run.index < run.descriptor.parameters.count else { return RunMachine.finished(run) }
            return await resolveCurrent(run)
        case .ask(let run, let definition, let prompt, let options, let preface):
            guard isCurrent(run.id) else { return nil }
            if let preface { await say(preface) }
            await ask(definition, prompt: prompt, run: run, disambiguation: options)
        case .confirmValue(let run, let definition, let option, let prompt):
            guard isCurrent(run.id) else { return nil }
            confirmValue(definition, option: option, prompt: prompt, run: run)
            await sayOpenLine()
        case .lookUp(let run, let definition, let text):
            let found = (try? await definition.valueType.lookup(text, context: context(for: run))) ?? []
            guard isCurrent(run.id) else { return nil }
            return RunMachine.step(run, definition, found: found)
        case .confirm(let run):
            await confirm(run)
        case .perform(let run):
            await perform(run)
        case .cancel:
            await cancel()
        case .repeatLine:
            await sayOpenLine()
        case .notUnderstood:
            break  // `drive` reopens the wait the answer was for
        }
        return nil
    }

    /// The app's own resolution of the current parameter, else the device's.
    private func resolveCurrent(_ start: Run) async -> RunMachine.Step? {
        let run = start
        let definition = run.descriptor.parameters[run.index]
        let context = context(for: run)
        if RunMachine.skipsCurrent(run) {
            _ = try? await run.intent.assign(definition.name, canonical: nil, context: context)
            return .resolveNext(RunMachine.skipped(run))
        }
        let proposed = run.values[definition.name]
        let resolution: ParameterResolution
        do {
            if proposed == nil, let prompt = run.askEachTime[definition.name] {
                // Ask Each Time (a shortcut's `ask`): asked whatever the default or habit.
                resolution = .needsValue(prompt: prompt)
            } else if let proposed, run.settled.contains(definition.name) {
                resolution = .success(proposed)
            } else if let custom = try await run.intent.resolve(parameter: definition.name, proposed: proposed, context: context) {
                resolution = custom
            } else {
                resolution = await deviceResolution(definition, proposed: proposed, run: run, context: context)
            }
        } catch {
            guard isCurrent(run.id) else { return nil }
            await fail(error)
            return nil
        }
        guard isCurrent(run.id) else { return nil }
        switch resolution {
        case .success(let value):
            if !(((try? await run.intent.assign(definition.name, canonical: value, context: context)) ?? false)) {
                return RunMachine.refused(run, definition)
            }
        case .notRequired:
            _ = try? await run.intent.assign(definition.name, canonical: nil, context: context)
        default:
            break
        }
        return RunMachine.step(run, resolution: resolution)
    }

    /// The device's resolution when the app has none: the machine's rules,
    /// then an entity's default, "optional", or the usual value to confirm.
    private func deviceResolution(_ definition: ParameterDefinition, proposed: String?, run: Run,
                                  context: IntentContext) async -> ParameterResolution {
        if let resolution = RunMachine.defaultResolution(definition, proposed: proposed) { return resolution }
        if definition.kind == .entity, let option = try? await definition.valueType.defaultOption(context: context) {
            return .success(option.id)
        }
        if definition.isOptional { return .notRequired }
        if let usual = await suggestions.usualOption(definition, run: run, context: context) {
            return .confirmation(usual, prompt: "\(Dialog.capitalised(usual.spoken)), as usual?")
        }
        return .needsValue(prompt: nil)
    }

    private func ask(_ definition: ParameterDefinition, prompt: String?, run start: Run, disambiguation: [ParameterOption]?) async {
        var run = start
        let all: [ParameterOption]
        let listed: [ParameterOption]
        let spokenItems: [String]
        if let disambiguation {
            all = disambiguation
            listed = Array(disambiguation.prefix(5))
            spokenItems = Dialog.distinctiveTitles(listed)
        } else {
            all = ((try? await definition.valueType.options(context: context(for: run))) ?? nil) ?? []
            let suggested = definition.kind == .entity ? all : (definition.valueType.suggestedOptions ?? all)
            listed = suggested.count <= 5 ? suggested : []
            spokenItems = listed.map(\.spoken)
        }
        guard isCurrent(run.id) else { return }
        let expectation: FollowUpQuestion.Expectation
        if !all.isEmpty, definition.kind != .duration {
            expectation = .options(all, listed: listed)
        } else {
            switch definition.kind {
            case .integer, .decimal: expectation = .number
            case .duration: expectation = .duration
            case .boolean: expectation = .yesNo
            default: expectation = .text
            }
        }
        let line = Dialog.question(prompt ?? definition.prompt, options: spokenItems)
        run.questions += 1
        run.asked.insert(definition.name)
        let subject: Waiting.Question.Subject = disambiguation == nil ? .value(definition) : .disambiguation(definition)
        let question = Waiting.Question(run: run, subject: subject, question: FollowUpQuestion(prompt: line, expectation: expectation))
        phase = .waiting(Waiting(.question(question), line: line, window: configuration.answerTimeout, from: clock.instant))
        await sayOpenLine()
    }

    private func confirmValue(_ definition: ParameterDefinition, option: ParameterOption, prompt: String?, run start: Run) {
        var run = start
        run.questions += 1
        run.asked.insert(definition.name)
        let line = prompt ?? "\(Dialog.capitalised(option.spoken)), right?"
        let question = Waiting.Question(run: run, subject: .confirmValue(definition, option),
                                        question: FollowUpQuestion(prompt: line, expectation: .yesNo))
        phase = .waiting(Waiting(.question(question), line: line, window: configuration.answerTimeout, from: clock.instant))
    }

    /// Says the line of the open wait and shows its LED state.
    func sayOpenLine() async {
        if case .waiting(let waiting) = phase { await say(waiting.line) }
        await rest()
    }

    func answer(_ text: String, _ question: Waiting.Question, _ waiting: Waiting) async {
        await setLED(.thinking)
        let step = RunMachine.step(question, answer: waiting.resolver.resolve(text), text: text)
        switch step {
        case .cancel: await cancel()
        case .repeatLine: await sayOpenLine()
        case .notUnderstood: await notUnderstood(waiting)
        default:
            // The answer moves the run on: it is busy until it next waits.
            phase = .busy(question.run.id)
            await drive(step, id: question.run.id, answering: waiting)
        }
    }
}

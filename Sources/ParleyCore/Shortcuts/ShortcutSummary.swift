import Foundation

/// A shortcut's actions in words, for `parley shortcuts list` and for "what
/// does lunch time do?": each `run` from its intent's parameter summary
/// ("Order two tomato for pickup"), the built-in actions as people say them.
/// Variables read as "the place", "the order total"; a value asked each time
/// reads as the parameter's title plus "asking which soup".
public enum ShortcutSummary {
    public static func describe(_ shortcut: Shortcut, registry: AppRegistry) -> String {
        let parts = describe(shortcut.actions, registry: registry)
        guard !parts.isEmpty else { return "Nothing." }
        return capitalisedFirst(parts.joined(separator: ", then ")) + "."
    }

    static func describe(_ steps: [ShortcutStep], registry: AppRegistry) -> [String] {
        steps.map { describe($0.action, registry: registry) }
    }

    static func describe(_ action: ShortcutAction, registry: AppRegistry) -> String {
        switch action {
        case .run(let appText, let intentText, let values, _):
            let app = registry.app(appText) ?? registry.app(named: appText)
            guard let app, let descriptor = registry.descriptor(app: app.identifier, intent: intentText) else {
                return "run \(appText).\(intentText)"
            }
            var filled: [String: String] = [:]
            var asked: [String] = []
            for definition in descriptor.parameters {
                switch values[definition.name] {
                case .value(let text)?: filled[definition.name] = text
                case .template(let template)?: filled[definition.name] = spoken(template)
                case .ask(let prompt)?:
                    asked.append(lowercasedFirst((prompt ?? definition.prompt).trimmingCharacters(in: CharacterSet(charactersIn: "?. "))))
                case nil: break
                }
            }
            var text = lowercasedFirst(descriptor.summary(values: filled))
            for question in asked { text += ", asking \(question)" }
            return text
        case .speak(let text): return "say \"\(spoken(text))\""
        case .ask(let question, _, _, let options):
            let list = options.map { " (\(SpokenList.or($0)))" } ?? ""
            return "ask \"\(spoken(question))\"\(list)"
        case .choose(let prompt, let options, _):
            return prompt.map { "ask \"\(spoken($0))\" (\(SpokenList.or(options)))" } ?? "ask you to choose \(SpokenList.or(options))"
        case .if(let subject, let comparison, let then, let otherwise):
            var text = "if \(spoken(subject))"
            switch comparison {
            case .isTrue: text += " is yes"
            case .equals(let t): text += " is \(spoken(t))"
            case .notEquals(let t): text += " is not \(spoken(t))"
            case .above(let t): text += " is above \(spoken(t))"
            case .below(let t): text += " is below \(spoken(t))"
            case .atLeast(let t): text += " is at least \(spoken(t))"
            case .atMost(let t): text += " is at most \(spoken(t))"
            case .contains(let t): text += " contains \(spoken(t))"
            }
            text += ", " + describe(then, registry: registry).joined(separator: " and ")
            let other = describe(otherwise, registry: registry)
            if !other.isEmpty { text += ", otherwise " + other.joined(separator: " and ") }
            return text
        case .repeat(let times, let body):
            let count = times == 1 ? "once" : times == 2 ? "twice" : "\(SpokenNumber.words(times)) times"
            return "\(count): " + describe(body, registry: registry).joined(separator: " and ")
        case .wait(let seconds):
            let whole = Int(seconds.rounded())
            return "wait " + (Double(whole) == seconds ? SpokenDuration.describe(whole) : "\(seconds) seconds")
        case .set(let variable, let value): return "set \(variable) to \"\(spoken(value))\""
        case .led(let state): return "show \(state.rawValue.replacingOccurrences(of: "-", with: " ")) on the lights"
        case .sound(let name): return "play the \(name) sound"
        case .shortcut(let name): return "run the shortcut \(name)"
        }
    }

    /// "Total {order.total}." -> "Total the order total."
    static func spoken(_ template: TextTemplate) -> String {
        template.parts.map { part in
            switch part {
            case .text(let text): text
            case .variable(let reference): spoken(reference)
            }
        }.joined()
    }

    static func spoken(_ reference: VariableReference) -> String {
        "the " + ([reference.name] + (reference.property.map { [$0] } ?? [])).map(words).joined(separator: " ")
    }

    /// "readyTime" -> "ready time".
    static func words(_ identifier: String) -> String {
        var result = ""
        for character in identifier {
            if character.isUppercase, !result.isEmpty { result += " " }
            result += character == "_" ? " " : character.lowercased()
        }
        return result
    }

    static func capitalisedFirst(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }
    static func lowercasedFirst(_ text: String) -> String {
        // Keep names ("Lewis Avenue") and "I" as they are: only a capital followed by a lower-case letter is lowered.
        guard let first = text.first, first.isUppercase, text.dropFirst().first.map({ $0.isLowercase || $0 == " " }) ?? true,
              !text.hasPrefix("I ") else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

/// "a, b or c".
enum SpokenList {
    static func or(_ items: [String]) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default: return items.dropLast().joined(separator: ", ") + " or " + items.last!
        }
    }
}

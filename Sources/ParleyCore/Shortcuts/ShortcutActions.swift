import ParleyYAML

/// One action being read: the whole `- key: value` mapping, its first key's
/// value, and where the action starts.
struct ActionInput {
    let node: YAMLNode
    let map: YAMLMapping
    /// The value of the key naming the action (`speak: "hi"` -> "hi").
    let value: YAMLNode
}

/// The actions of a shortcut, one small reader each; `step` picks the reader
/// by the action's first key and checks the other keys against its own.
extension ShortcutReader {
    typealias ActionRead = @Sendable (inout ShortcutReader, ActionInput) -> ShortcutStep?

    /// Each action: the keys it takes (its own first) and its reader.
    static let actions: [(key: String, allowed: [String], what: String, read: ActionRead)] = [
        ("run", ["run", "with", "as"], "a `run` action", { $0.run($1) }),
        ("speak", ["speak"], "a `speak` action", { $0.speak($1) }),
        ("ask", ["ask", "as", "type", "options"], "an `ask` action", { $0.ask($1) }),
        ("choose", ["choose", "options", "as"], "a `choose` action", { $0.choose($1) }),
        ("if", ["if", "then", "else"] + Comparison.keys, "an `if` action", { $0.ifAction($1) }),
        ("repeat", ["repeat", "times", "do"], "a `repeat` action", { $0.repeatAction($1) }),
        ("wait", ["wait"], "a `wait` action", { $0.wait($1) }),
        ("set", ["set", "to"], "a `set` action", { $0.set($1) }),
        ("led", ["led"], "an `led` action", { $0.led($1) }),
        ("sound", ["sound"], "a `sound` action", { $0.sound($1) }),
        ("shortcut", ["shortcut"], "a `shortcut` action", { $0.shortcut($1) }),
    ]
    static var actionKeys: [String] { actions.map(\.key) }

    mutating func steps(_ node: YAMLNode, _ key: String) -> [ShortcutStep] {
        guard node.isList, let items = read({ () throws(YAMLError) in try node.list() }) else {
            problem(node, "`\(key):` must be a list of actions")
            return []
        }
        return items.compactMap { step($0) }
    }

    mutating func step(_ node: YAMLNode) -> ShortcutStep? {
        guard let map = mapping(node, "an action (a mapping whose first key names it: \(Self.actionKeys.joined(separator: ", ")))"),
              let first = map.first else { return nil }
        let key = first.key.text ?? ""
        guard let action = Self.actions.first(where: { $0.key == key }) else {
            problem(first.key, "unknown action '\(key)'; expected one of \(Self.actionKeys.joined(separator: ", "))")
            return nil
        }
        checkKeys(map, allowed: action.allowed, what: action.what)
        // `repeat: {times: 2, do: …}`: the action's own keys written inside
        // its value instead of beside it; said so, rather than "needs times:".
        let inner = first.value.node.mapping?.keys.compactMap(\.string) ?? []
        if let misplaced = inner.first(where: { action.allowed.contains($0) && $0 != key && !map.has($0) }) {
            problems.add(map.missing(misplaced))
            return nil
        }
        return action.read(&self, ActionInput(node: node, map: map, value: first.value))
    }

    private func at(_ input: ActionInput) -> SourceLocation { input.node.location }

    mutating func run(_ input: ActionInput) -> ShortcutStep? {
        guard let target = string(input.value, "run") else { return nil }
        let parts = target.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            problem(input.value, "`run: \(target)` must name <app identifier>.<intent identifier>, e.g. SoupChef.OrderSoup")
            return nil
        }
        var values: [String: ParameterSource] = [:]
        var valueLocations: [String: SourceLocation] = [:]
        if let with = input.map.optional("with"), let withMap = mapping(with, "`with:` (parameter names and values)") {
            for (keyNode, valueNode) in withMap.entries {
                guard let name = string(keyNode, "a parameter name") else { continue }
                valueLocations[name] = valueNode.location
                if let source = parameterSource(valueNode) { values[name] = source }
            }
        }
        let name = input.map.optional("as").flatMap { variableName($0, "as") }
        return ShortcutStep(.run(app: parts[0], intent: parts[1], with: values, as: name), at: at(input), valueLocations: valueLocations)
    }

    mutating func speak(_ input: ActionInput) -> ShortcutStep? {
        guard let text = template(input.value, "speak") else { return nil }
        if text.parts.isEmpty { problem(input.value, "`speak:` has nothing to say") }
        return ShortcutStep(.speak(text), at: at(input))
    }

    mutating func ask(_ input: ActionInput) -> ShortcutStep? {
        guard let question = template(input.value, "ask") else { return nil }
        if question.parts.isEmpty { problem(input.value, "`ask:` needs a question") }
        guard let asNode = required(input.map, "as", at: input.node, "an `ask` action needs `as:` naming the variable that receives the answer"),
              let name = variableName(asNode, "as") else { return nil }
        var type = AnswerType.text
        let typeNode = input.map.optional("type")
        if let typeNode, let text = string(typeNode, "type") {
            guard let parsed = AnswerType(rawValue: text) else {
                problem(typeNode, "unknown answer type '\(text)'; expected \(AnswerType.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            type = parsed
        }
        let options = input.map.optional("options").flatMap { optionList($0) }
        if options != nil, type != .text, let typeNode {
            problem(typeNode, "`options:` makes the answer a choice from the list; leave out `type:`")
        }
        return ShortcutStep(.ask(question: question, as: name, type: type, options: options), at: at(input))
    }

    mutating func choose(_ input: ActionInput) -> ShortcutStep? {
        let prompt = input.value.text.map { _ in template(input.value, "choose") } ?? nil
        guard let optionsNode = required(input.map, "options", at: input.node, "a `choose` action needs `options:` (the list to choose from)"),
              let options = optionList(optionsNode),
              let asNode = required(input.map, "as", at: input.node, "a `choose` action needs `as:` naming the variable that receives the choice"),
              let name = variableName(asNode, "as") else { return nil }
        return ShortcutStep(.choose(prompt: prompt.flatMap { $0.parts.isEmpty ? nil : $0 }, options: options, as: name), at: at(input))
    }

    mutating func ifAction(_ input: ActionInput) -> ShortcutStep? {
        guard let subject = string(input.value, "if") else { return nil }
        guard let reference = reference(subject, at: input.value.location) else {
            problem(input.value, "`if:` must name a variable, e.g. `if: answer` or `if: \"{order.total}\"` (got '\(subject)')")
            return nil
        }
        let comparison = comparison(input.map)
        guard let thenNode = required(input.map, "then", at: input.node, "an `if` action needs `then:` (the actions run when it holds)") else { return nil }
        let then = steps(thenNode, "then")
        let otherwise = input.map.optional("else").map { steps($0, "else") } ?? []
        return ShortcutStep(.if(reference, comparison, then: then, else: otherwise), at: at(input))
    }

    /// The one comparison of an `if` (`equals:`, `above:`, ...), or "is true".
    mutating func comparison(_ map: YAMLMapping) -> Comparison {
        let comparisons = Comparison.keys.compactMap { key in map.optional(key).map { (key, $0) } }
        if comparisons.count > 1 {
            problem(comparisons[1].1, "an `if` compares one way; it has \(comparisons.map { "`\($0.0):`" }.joined(separator: " and "))")
        }
        guard let (key, operandNode) = comparisons.first, let operand = template(operandNode, key) else { return .isTrue }
        switch key {
        case "equals": return .equals(operand)
        case "not-equals": return .notEquals(operand)
        case "above": return .above(operand)
        case "below": return .below(operand)
        case "at-least": return .atLeast(operand)
        case "at-most": return .atMost(operand)
        default: return .contains(operand)
        }
    }

    mutating func repeatAction(_ input: ActionInput) -> ShortcutStep? {
        // `repeat: 3` or `repeat:` with `times: 3` beside it.
        let inline = input.value.text.map { !["", "~", "null"].contains($0) } ?? false
        let timesNode = inline ? input.value
            : required(input.map, "times", at: input.node, "a `repeat` action needs `times:` (how many times, 1 to 100)")
        guard let timesNode, let times = integer(timesNode, "times", in: 1...100),
              let body = required(input.map, "do", at: input.node, "a `repeat` action needs `do:` (the actions to repeat)") else { return nil }
        return ShortcutStep(.repeat(times: times, do: steps(body, "do")), at: at(input))
    }

    mutating func wait(_ input: ActionInput) -> ShortcutStep? {
        guard let text = string(input.value, "wait") else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
            problem(input.value, "`wait:` must be a number of seconds from 0 to 3600 (got '\(text)')")
            return nil
        }
        return ShortcutStep(.wait(seconds: seconds), at: at(input))
    }

    mutating func set(_ input: ActionInput) -> ShortcutStep? {
        guard let name = variableName(input.value, "set"),
              let toNode = required(input.map, "to", at: input.node, "a `set` action needs `to:` (the value)"),
              let value = template(toNode, "to") else { return nil }
        return ShortcutStep(.set(variable: name, to: value), at: at(input))
    }

    mutating func led(_ input: ActionInput) -> ShortcutStep? {
        guard let text = string(input.value, "led") else { return nil }
        guard let state = DeviceState(rawValue: text) else {
            problem(input.value, "unknown LED state '\(text)'; expected \(DeviceState.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        return ShortcutStep(.led(state), at: at(input))
    }

    mutating func sound(_ input: ActionInput) -> ShortcutStep? {
        guard let name = string(input.value, "sound") else { return nil }
        guard ShortcutSounds.names.contains(name) else {
            problem(input.value, "unknown sound '\(name)'; expected \(ShortcutSounds.names.joined(separator: ", "))")
            return nil
        }
        return ShortcutStep(.sound(name), at: at(input))
    }

    mutating func shortcut(_ input: ActionInput) -> ShortcutStep? {
        guard let name = string(input.value, "shortcut") else { return nil }
        return ShortcutStep(.shortcut(name.trimmingCharacters(in: .whitespaces)), at: at(input))
    }

    mutating func parameterSource(_ node: YAMLNode) -> ParameterSource? {
        if node.isMapping {
            guard let map = mapping(node, "a parameter value"), map.entries.count == 1, let (key, valueNode) = map.first, key.text == "ask" else {
                problem(node, "a parameter value is a value, \"{variable}\", `ask`, or `{ask: \"question\"}`")
                return nil
            }
            guard let prompt = string(valueNode, "ask") else { return nil }
            return .ask(prompt: prompt)
        }
        guard let text = string(node, "a parameter value") else { return nil }
        if text == "ask", node.isPlain { return .ask(prompt: nil) }
        guard let parsed = template(node, "a parameter value") else { return nil }
        return parsed.variables.isEmpty ? .value(text) : .template(parsed)
    }

    mutating func optionList(_ node: YAMLNode) -> [String]? {
        guard node.isList, let items = read({ () throws(YAMLError) in try node.list() }), !items.isEmpty else {
            problem(node, "`options:` must be a list of at least one option")
            return nil
        }
        let options = items.compactMap { string($0, "an option") }
        return options.count == items.count ? options : nil
    }
}

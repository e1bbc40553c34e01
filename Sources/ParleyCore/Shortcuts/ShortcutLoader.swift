import Foundation
import Yams

/// Every problem found in one shortcut file.
public struct ShortcutFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var problems: [ShortcutProblem]
    public init(_ problems: [ShortcutProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Reads one shortcut file's YAML into a `Shortcut`, checking its shape (keys,
/// types, times, days, variable syntax). Whether apps, intents, parameters,
/// values, variables and other shortcuts exist is `ShortcutValidator`'s job.
/// Every problem names `FILE:LINE:COLUMN`, from the marks Yams keeps on
/// each node; as many problems as can be found are reported at once.
public enum ShortcutLoader {
    /// A shortcut is a page of YAML; far more is a mistake (or an attack on
    /// the parser's memory), refused before it is read.
    public static let maximumFileBytes = 256 * 1024

    /// Reads and parses a file.
    public static func load(file: String) throws(ShortcutFileError) -> Shortcut {
        // The size is checked before reading, so a huge file costs no memory.
        let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int ?? 0
        guard size <= maximumFileBytes else {
            throw ShortcutFileError([ShortcutProblem(SourceLocation(file: file, line: 1, column: 1),
                "is \(size) bytes; a shortcut file may have at most \(maximumFileBytes)")])
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            let why = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "no such file"
            throw ShortcutFileError([ShortcutProblem(SourceLocation(file: file, line: 1, column: 1), why)])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ShortcutFileError([ShortcutProblem(SourceLocation(file: file, line: 1, column: 1), "not UTF-8 text")])
        }
        return try parse(yaml: text, file: file)
    }

    /// Parses shortcut YAML; `file` names it in problems.
    public static func parse(yaml: String, file: String) throws(ShortcutFileError) -> Shortcut {
        let root: Node
        do {
            // The basic resolver: scalars are read as written, and no tag is
            // resolved by regular expression (most of the cost of composing).
            guard let node = try Yams.compose(yaml: yaml, .basic, .default, .utf8) else {
                throw ShortcutFileError([ShortcutProblem(SourceLocation(file: file, line: 1, column: 1),
                    "the file is empty; a shortcut needs at least `name:` and `actions:`")])
            }
            root = node
        } catch let error as ShortcutFileError {
            throw error
        } catch {
            throw ShortcutFileError([syntaxProblem(error, file: file)])
        }
        var reader = ShortcutReader(file: file)
        let shortcut = reader.shortcut(root)
        if !reader.problems.isEmpty { throw ShortcutFileError(reader.problems) }
        guard let shortcut else { throw ShortcutFileError([ShortcutProblem(reader.location(root), "not a shortcut")]) }
        return shortcut
    }

    static func syntaxProblem(_ error: any Error, file: String) -> ShortcutProblem {
        func at(_ mark: Mark?, _ why: String) -> ShortcutProblem {
            ShortcutProblem(SourceLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1), "YAML syntax: \(why)")
        }
        guard let yamlError = error as? YamlError else { return at(nil, "\(error)") }
        switch yamlError {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return at(mark, problem)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return at(context.mark, "duplicate key \(duplicates.joined(separator: ", "))")
        default:
            return at(nil, "\(yamlError)".split(separator: "\n").first.map(String.init) ?? "\(yamlError)")
        }
    }
}

/// Walks the node tree of one file, collecting problems.
struct ShortcutReader {
    let file: String
    var problems: [ShortcutProblem] = []

    init(file: String) { self.file = file }

    func location(_ node: Node) -> SourceLocation {
        SourceLocation(file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1)
    }

    mutating func problem(_ node: Node, _ reason: String) {
        problems.append(ShortcutProblem(location(node), reason))
    }

    static let topKeys = ["name", "description", "phrases", "triggers", "actions"]

    mutating func shortcut(_ root: Node) -> Shortcut? {
        guard let map = mapping(root, "a shortcut (a mapping with `name:` and `actions:`)") else { return nil }
        checkKeys(map, allowed: Self.topKeys, what: "a shortcut")
        guard let nameNode = value(map, "name") else {
            problem(root, "missing `name:` (the shortcut's unique name)")
            return nil
        }
        let name = string(nameNode, "name")?.trimmingCharacters(in: .whitespaces) ?? ""
        if name.isEmpty, nameNode.scalar != nil { problem(nameNode, "`name:` is empty") }
        if let node = value(map, "description") { _ = string(node, "description") }
        let phrases = value(map, "phrases").map { phraseList($0) } ?? []
        let triggers = value(map, "triggers").map { triggerList($0) } ?? []
        var actions: [ShortcutStep] = []
        if let node = value(map, "actions") {
            actions = steps(node, "actions")
            if actions.isEmpty, node.sequence?.isEmpty ?? false { problem(node, "`actions:` is empty; a shortcut does at least one thing") }
        } else {
            problem(root, "missing `actions:` (the list of what the shortcut does)")
        }
        return Shortcut(name: name, nameLocation: location(nameNode), phrases: phrases, triggers: triggers, actions: actions, file: file)
    }

    // MARK: Phrases and triggers

    mutating func phraseList(_ node: Node) -> [ShortcutPhrase] {
        let items: [Node] = node.sequence.map(Array.init) ?? [node]
        var phrases: [ShortcutPhrase] = []
        for item in items {
            guard let text = string(item, "a phrase") else { continue }
            let phrase = ShortcutPhrase(text, at: location(item))
            if phrase.words.isEmpty {
                problem(item, "the phrase '\(text)' has no words")
                continue
            }
            phrases.append(phrase)
        }
        return phrases
    }

    mutating func triggerList(_ node: Node) -> [LocatedTrigger] {
        guard let items = node.sequence else {
            problem(node, "`triggers:` must be a list (`- button: double-press`, `- time: \"07:30\"`, `- input: door`)")
            return []
        }
        var triggers: [LocatedTrigger] = []
        for item in items {
            guard let map = mapping(item, "a trigger (`button:`, `time:` or `input:`)"), let first = map.first else { continue }
            let key = first.key.string ?? ""
            switch key {
            case "button":
                checkKeys(map, allowed: ["button"], what: "a button trigger")
                guard let text = string(first.value, "button") else { continue }
                guard let gesture = ButtonGesture(rawValue: text) else {
                    problem(first.value, "unknown button gesture '\(text)'; expected press, double-press or long-press")
                    continue
                }
                triggers.append(LocatedTrigger(.button(gesture), at: location(item)))
            case "time":
                checkKeys(map, allowed: ["time", "days"], what: "a time trigger")
                guard let text = string(first.value, "time") else { continue }
                guard let time = TimeOfDay(parsing: text.trimmingCharacters(in: .whitespaces)) else {
                    problem(first.value, "malformed time '\(text)'; expected a 24-hour local time HH:MM such as \"07:30\"")
                    continue
                }
                var days = Set(Weekday.allCases)
                if let node = value(map, "days") {
                    days = dayList(node) ?? days
                }
                triggers.append(LocatedTrigger(.time(time, days: days), at: location(item)))
            case "input":
                checkKeys(map, allowed: ["input", "edge"], what: "an input trigger")
                guard let name = string(first.value, "input") else { continue }
                var edge = InputEdge.rising
                if let node = value(map, "edge"), let text = string(node, "edge") {
                    guard let parsed = InputEdge(rawValue: text) else {
                        problem(node, "unknown edge '\(text)'; expected rising or falling")
                        continue
                    }
                    edge = parsed
                }
                triggers.append(LocatedTrigger(.input(name: name, edge: edge), at: location(item)))
            default:
                problem(first.key, "unknown trigger '\(key)'; expected button, time or input")
            }
        }
        return triggers
    }

    mutating func dayList(_ node: Node) -> Set<Weekday>? {
        guard let items = node.sequence else {
            problem(node, "`days:` must be a list such as [mon, tue, wed, thu, fri]")
            return nil
        }
        var days = Set<Weekday>()
        for item in items {
            guard let text = string(item, "a day") else { continue }
            guard let day = Weekday.named(text) else {
                problem(item, "unknown day '\(text)'; expected mon, tue, wed, thu, fri, sat or sun")
                continue
            }
            days.insert(day)
        }
        if days.isEmpty, items.isEmpty { problem(node, "`days:` is empty; leave it out for every day") }
        return days.isEmpty ? nil : days
    }

    // MARK: Actions

    static let actionKeys = ["run", "speak", "ask", "choose", "if", "repeat", "wait", "set", "led", "sound", "shortcut"]

    mutating func steps(_ node: Node, _ key: String) -> [ShortcutStep] {
        guard let items = node.sequence else {
            problem(node, "`\(key):` must be a list of actions")
            return []
        }
        return items.compactMap { step($0) }
    }

    mutating func step(_ node: Node) -> ShortcutStep? {
        guard let map = mapping(node, "an action (a mapping whose first key names it: \(Self.actionKeys.joined(separator: ", ")))"),
              let first = map.first else { return nil }
        let key = first.key.string ?? ""
        let at = location(node)
        switch key {
        case "run":
            checkKeys(map, allowed: ["run", "with", "as"], what: "a `run` action")
            guard let target = string(first.value, "run") else { return nil }
            let parts = target.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                problem(first.value, "`run: \(target)` must name <app identifier>.<intent identifier>, e.g. SoupChef.OrderSoup")
                return nil
            }
            var values: [String: ParameterSource] = [:]
            var valueLocations: [String: SourceLocation] = [:]
            if let with = value(map, "with"), let withMap = mapping(with, "`with:` (parameter names and values)") {
                for (keyNode, valueNode) in withMap {
                    guard let name = string(keyNode, "a parameter name") else { continue }
                    valueLocations[name] = location(valueNode)
                    if let source = parameterSource(valueNode) { values[name] = source }
                }
            }
            let name = value(map, "as").flatMap { variableName($0, "as") }
            return ShortcutStep(.run(app: parts[0], intent: parts[1], with: values, as: name), at: at, valueLocations: valueLocations)
        case "speak":
            checkKeys(map, allowed: ["speak"], what: "a `speak` action")
            guard let text = template(first.value, "speak") else { return nil }
            if text.parts.isEmpty { problem(first.value, "`speak:` has nothing to say") }
            return ShortcutStep(.speak(text), at: at)
        case "ask":
            checkKeys(map, allowed: ["ask", "as", "type", "options"], what: "an `ask` action")
            guard let question = template(first.value, "ask") else { return nil }
            if question.parts.isEmpty { problem(first.value, "`ask:` needs a question") }
            guard let asNode = value(map, "as") else {
                problem(node, "an `ask` action needs `as:` naming the variable that receives the answer")
                return nil
            }
            guard let name = variableName(asNode, "as") else { return nil }
            var type = AnswerType.text
            if let typeNode = value(map, "type"), let text = string(typeNode, "type") {
                guard let parsed = AnswerType(rawValue: text) else {
                    problem(typeNode, "unknown answer type '\(text)'; expected \(AnswerType.allCases.map(\.rawValue).joined(separator: ", "))")
                    return nil
                }
                type = parsed
            }
            let options = value(map, "options").flatMap { optionList($0) }
            if options != nil, type != .text, let typeNode = value(map, "type") {
                problem(typeNode, "`options:` makes the answer a choice from the list; leave out `type:`")
            }
            return ShortcutStep(.ask(question: question, as: name, type: type, options: options), at: at)
        case "choose":
            checkKeys(map, allowed: ["choose", "options", "as"], what: "a `choose` action")
            let prompt = first.value.scalar.map { _ in template(first.value, "choose") } ?? nil
            guard let optionsNode = value(map, "options") else {
                problem(node, "a `choose` action needs `options:` (the list to choose from)")
                return nil
            }
            guard let options = optionList(optionsNode) else { return nil }
            guard let asNode = value(map, "as") else {
                problem(node, "a `choose` action needs `as:` naming the variable that receives the choice")
                return nil
            }
            guard let name = variableName(asNode, "as") else { return nil }
            return ShortcutStep(.choose(prompt: prompt.flatMap { $0.parts.isEmpty ? nil : $0 }, options: options, as: name), at: at)
        case "if":
            checkKeys(map, allowed: ["if", "then", "else"] + Comparison.keys, what: "an `if` action")
            guard let subject = string(first.value, "if") else { return nil }
            guard let reference = reference(subject, at: location(first.value)) else {
                problem(first.value, "`if:` must name a variable, e.g. `if: answer` or `if: \"{order.total}\"` (got '\(subject)')")
                return nil
            }
            let comparisons = Comparison.keys.compactMap { key in value(map, key).map { (key, $0) } }
            if comparisons.count > 1 {
                problem(comparisons[1].1, "an `if` compares one way; it has \(comparisons.map { "`\($0.0):`" }.joined(separator: " and "))")
            }
            var comparison = Comparison.isTrue
            if let (key, operandNode) = comparisons.first, let operand = template(operandNode, key) {
                switch key {
                case "equals": comparison = .equals(operand)
                case "not-equals": comparison = .notEquals(operand)
                case "above": comparison = .above(operand)
                case "below": comparison = .below(operand)
                case "at-least": comparison = .atLeast(operand)
                case "at-most": comparison = .atMost(operand)
                default: comparison = .contains(operand)
                }
            }
            guard let thenNode = value(map, "then") else {
                problem(node, "an `if` action needs `then:` (the actions run when it holds)")
                return nil
            }
            let then = steps(thenNode, "then")
            let otherwise = value(map, "else").map { steps($0, "else") } ?? []
            return ShortcutStep(.if(reference, comparison, then: then, else: otherwise), at: at)
        case "repeat":
            checkKeys(map, allowed: ["repeat", "times", "do"], what: "a `repeat` action")
            // `repeat: 3` or `repeat:` with `times: 3` beside it.
            let inline = first.value.scalar.map { !["", "~", "null"].contains($0.string) } ?? false
            let timesNode = inline ? first.value : value(map, "times")
            guard let timesNode else {
                problem(node, "a `repeat` action needs `times:` (how many times, 1 to 100)")
                return nil
            }
            guard let times = integer(timesNode, "times", in: 1...100) else { return nil }
            guard let body = value(map, "do") else {
                problem(node, "a `repeat` action needs `do:` (the actions to repeat)")
                return nil
            }
            return ShortcutStep(.repeat(times: times, do: steps(body, "do")), at: at)
        case "wait":
            checkKeys(map, allowed: ["wait"], what: "a `wait` action")
            guard let text = string(first.value, "wait") else { return nil }
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                problem(first.value, "`wait:` must be a number of seconds from 0 to 3600 (got '\(text)')")
                return nil
            }
            return ShortcutStep(.wait(seconds: seconds), at: at)
        case "set":
            checkKeys(map, allowed: ["set", "to"], what: "a `set` action")
            guard let name = variableName(first.value, "set") else { return nil }
            guard let toNode = value(map, "to") else {
                problem(node, "a `set` action needs `to:` (the value)")
                return nil
            }
            guard let value = template(toNode, "to") else { return nil }
            return ShortcutStep(.set(variable: name, to: value), at: at)
        case "led":
            checkKeys(map, allowed: ["led"], what: "an `led` action")
            guard let text = string(first.value, "led") else { return nil }
            guard let state = DeviceState(rawValue: text) else {
                problem(first.value, "unknown LED state '\(text)'; expected \(DeviceState.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            return ShortcutStep(.led(state), at: at)
        case "sound":
            checkKeys(map, allowed: ["sound"], what: "a `sound` action")
            guard let name = string(first.value, "sound") else { return nil }
            guard ShortcutSounds.names.contains(name) else {
                problem(first.value, "unknown sound '\(name)'; expected \(ShortcutSounds.names.joined(separator: ", "))")
                return nil
            }
            return ShortcutStep(.sound(name), at: at)
        case "shortcut":
            checkKeys(map, allowed: ["shortcut"], what: "a `shortcut` action")
            guard let name = string(first.value, "shortcut") else { return nil }
            return ShortcutStep(.shortcut(name.trimmingCharacters(in: .whitespaces)), at: at)
        default:
            problem(first.key, "unknown action '\(key)'; expected one of \(Self.actionKeys.joined(separator: ", "))")
            return nil
        }
    }

    mutating func parameterSource(_ node: Node) -> ParameterSource? {
        if let map = node.mapping {
            guard map.count == 1, let (key, valueNode) = map.first, key.string == "ask" else {
                problem(node, "a parameter value is a value, \"{variable}\", `ask`, or `{ask: \"question\"}`")
                return nil
            }
            guard let prompt = string(valueNode, "ask") else { return nil }
            return .ask(prompt: prompt)
        }
        guard let text = string(node, "a parameter value") else { return nil }
        if text == "ask", node.scalar?.style == .plain { return .ask(prompt: nil) }
        guard let parsed = template(node, "a parameter value") else { return nil }
        return parsed.variables.isEmpty ? .value(text) : .template(parsed)
    }

    mutating func optionList(_ node: Node) -> [String]? {
        guard let items = node.sequence, !items.isEmpty else {
            problem(node, "`options:` must be a list of at least one option")
            return nil
        }
        let options = items.compactMap { string($0, "an option") }
        return options.count == items.count ? options : nil
    }

    // MARK: Values

    mutating func mapping(_ node: Node, _ what: String) -> Node.Mapping? {
        if let map = node.mapping { return map }
        problem(node, "expected \(what), found \(describe(node))")
        return nil
    }

    func value(_ map: Node.Mapping, _ key: String) -> Node? {
        map.first { $0.key.string == key }?.value
    }

    mutating func checkKeys(_ map: Node.Mapping, allowed: [String], what: String) {
        for key in map.keys {
            let name = key.string ?? ""
            if !allowed.contains(name) {
                problem(key, "unknown key '\(name)' in \(what); expected \(allowed.joined(separator: ", "))")
            }
        }
    }

    /// A scalar's text as written (no YAML 1.1 typing: "07:30" stays text).
    mutating func string(_ node: Node, _ what: String) -> String? {
        if let scalar = node.scalar { return scalar.string }
        problem(node, "expected text for \(what), found \(describe(node))")
        return nil
    }

    mutating func integer(_ node: Node, _ what: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = string(node, what) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            problem(node, "`\(what):` must be a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
            return nil
        }
        return number
    }

    mutating func variableName(_ node: Node, _ key: String) -> String? {
        guard let text = string(node, key) else { return nil }
        let name = text.hasPrefix("{") && text.hasSuffix("}") ? String(text.dropFirst().dropLast()) : text
        guard Self.isIdentifier(name) else {
            problem(node, "`\(key):` must be a variable name (letters, digits and _, not starting with a digit; got '\(text)')")
            return nil
        }
        return name
    }

    static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return text.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// "answer", "{answer}" or "{order.total}" as a reference.
    func reference(_ text: String, at location: SourceLocation) -> VariableReference? {
        let inner = text.hasPrefix("{") && text.hasSuffix("}") ? String(text.dropFirst().dropLast()) : text
        let parts = inner.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), parts.allSatisfy(Self.isIdentifier) else { return nil }
        return VariableReference(name: parts[0], property: parts.count == 2 ? parts[1] : nil, location: location)
    }

    /// Text with `{var}` / `{var.property}`; a brace that opens no reference is a problem.
    mutating func template(_ node: Node, _ what: String) -> TextTemplate? {
        guard let text = string(node, what) else { return nil }
        let start = location(node)
        // Columns inside a quoted scalar start one after the quote.
        let quoted = node.scalar.map { $0.style == .doubleQuoted || $0.style == .singleQuoted } ?? false
        var parts: [TextTemplate.Part] = []
        var literal = ""
        var index = text.startIndex
        var column = start.column + (quoted ? 1 : 0)
        while index < text.endIndex {
            let character = text[index]
            if character == "{" {
                guard let close = text[index...].firstIndex(of: "}") else {
                    problems.append(ShortcutProblem(SourceLocation(file: file, line: start.line, column: column),
                        "'{' opens a variable that is never closed with '}' in \(what)"))
                    return nil
                }
                let inner = String(text[text.index(after: index)..<close])
                let here = SourceLocation(file: file, line: start.line, column: column)
                guard let reference = reference(inner, at: here) else {
                    problems.append(ShortcutProblem(here, "'{\(inner)}' is not a variable reference; write {name} or {name.property}"))
                    return nil
                }
                if !literal.isEmpty { parts.append(.text(literal)) }
                literal = ""
                parts.append(.variable(reference))
                column += text[index...close].count
                index = text.index(after: close)
                continue
            }
            literal.append(character)
            column += 1
            index = text.index(after: index)
        }
        if !literal.isEmpty { parts.append(.text(literal)) }
        return TextTemplate(parts: parts)
    }

    func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): "the text '\(scalar.string)'"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }
}

/// The sounds a `sound:` action may play.
public enum ShortcutSounds {
    public static let names = EngineSound.allCases.map(\.rawValue)
}

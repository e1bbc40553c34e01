import Foundation
import ParleyYAML

/// Every problem found in one shortcut file.
public struct ShortcutFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var problems: [ShortcutProblem]
    public init(_ problems: [ShortcutProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Reads one shortcut file's YAML into a `Shortcut`, checking its shape (keys,
/// types, times, days, variable syntax). Whether apps, intents, parameters,
/// values, variables and other shortcuts exist is `ShortcutValidator`'s job.
/// Every problem names `FILE:LINE:COLUMN`, from ParleyYAML's located nodes;
/// as many problems as can be found are reported at once.
public enum ShortcutLoader {
    /// A shortcut is a page of YAML; far more is a mistake (or an attack on
    /// the parser's memory), refused before it is read.
    public static var maximumFileBytes: Int { YAMLLimits.shortcut.maximumBytes }

    /// Reads and parses a file.
    public static func load(file: String) throws(ShortcutFileError) -> Shortcut {
        let start = SourceLocation(file: file, line: 1, column: 1)
        // The size is checked before reading, so a huge file costs no memory.
        if let error = YAMLDocument.sizeError(file: file, limits: .shortcut) {
            throw ShortcutFileError([ShortcutProblem(error)])
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            let why = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "no such file"
            throw ShortcutFileError([ShortcutProblem(start, why)])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ShortcutFileError([ShortcutProblem(start, "not UTF-8 text")])
        }
        return try parse(yaml: text, file: file)
    }

    /// Parses shortcut YAML; `file` names it in problems.
    public static func parse(yaml: String, file: String) throws(ShortcutFileError) -> Shortcut {
        let parsed: YAMLNode?
        do {
            // Scalars as written: no tag is resolved by regular expression
            // (most of the cost of composing), and "07:30" stays text.
            parsed = try YAMLDocument.parse(yaml, file: file, scalars: .asWritten, limits: .shortcut)
        } catch {
            if case .refused = error.problem { throw ShortcutFileError([ShortcutProblem(error)]) }
            throw ShortcutFileError([ShortcutProblem(error.location, "YAML syntax: \(error.message.dropPrefix("not valid YAML: "))")])
        }
        guard let root = parsed else {
            throw ShortcutFileError([ShortcutProblem(SourceLocation(file: file, line: 1, column: 1),
                "the file is empty; a shortcut needs at least `name:` and `actions:`")])
        }
        var reader = ShortcutReader(file: file)
        let shortcut = reader.shortcut(root)
        if !reader.problems.errors.isEmpty { throw ShortcutFileError(reader.problems.errors.map(ShortcutProblem.init)) }
        guard let shortcut else { throw ShortcutFileError([ShortcutProblem(root.location, "not a shortcut")]) }
        return shortcut
    }
}

extension ShortcutProblem {
    init(_ error: YAMLError) { self.init(error.location, error.message) }
}

extension String {
    func dropPrefix(_ prefix: String) -> Substring { hasPrefix(prefix) ? dropFirst(prefix.count) : self[...] }
}

/// Walks the node tree of one file, collecting problems.
struct ShortcutReader {
    let file: String
    var problems = YAMLProblems()

    init(file: String) { self.file = file }

    mutating func problem(_ node: YAMLNode, _ reason: String) { problems.add(node.error(reason)) }

    /// A read whose failure is kept as a problem.
    mutating func read<T>(_ body: () throws(YAMLError) -> T) -> T? { problems.attempt(body) }

    static let topKeys = ["name", "description", "phrases", "triggers", "actions"]

    mutating func shortcut(_ root: YAMLNode) -> Shortcut? {
        guard let map = mapping(root, "a shortcut (a mapping with `name:` and `actions:`)") else { return nil }
        checkKeys(map, allowed: Self.topKeys, what: "a shortcut")
        guard let nameNode = map.optional("name") else {
            problem(root, "missing `name:` (the shortcut's unique name)")
            return nil
        }
        let name = string(nameNode, "name")?.trimmingCharacters(in: .whitespaces) ?? ""
        if name.isEmpty, nameNode.text != nil { problem(nameNode, "`name:` is empty") }
        if let node = map.optional("description") { _ = string(node, "description") }
        let phrases = map.optional("phrases").map { phraseList($0) } ?? []
        let triggers = map.optional("triggers").map { triggerList($0) } ?? []
        var actions: [ShortcutStep] = []
        if let node = map.optional("actions") {
            actions = steps(node, "actions")
            if actions.isEmpty, node.node.sequence?.isEmpty ?? false { problem(node, "`actions:` is empty; a shortcut does at least one thing") }
        } else {
            problem(root, "missing `actions:` (the list of what the shortcut does)")
        }
        return Shortcut(name: name, nameLocation: nameNode.location, phrases: phrases, triggers: triggers, actions: actions, file: file)
    }

    // MARK: Phrases and triggers

    mutating func phraseList(_ node: YAMLNode) -> [ShortcutPhrase] {
        let items = node.isList ? (read { () throws(YAMLError) in try node.list() } ?? []) : [node]
        var phrases: [ShortcutPhrase] = []
        for item in items {
            guard let text = string(item, "a phrase") else { continue }
            let phrase = ShortcutPhrase(text, at: item.location)
            if phrase.words.isEmpty {
                problem(item, "the phrase '\(text)' has no words")
                continue
            }
            phrases.append(phrase)
        }
        return phrases
    }

    mutating func triggerList(_ node: YAMLNode) -> [LocatedTrigger] {
        guard node.isList, let items = read({ () throws(YAMLError) in try node.list() }) else {
            problem(node, "`triggers:` must be a list (`- button: double-press`, `- time: \"07:30\"`, `- input: door`)")
            return []
        }
        return items.compactMap { trigger($0) }
    }

    mutating func trigger(_ item: YAMLNode) -> LocatedTrigger? {
        guard let map = mapping(item, "a trigger (`button:`, `time:` or `input:`)"), let first = map.first else { return nil }
        let key = first.key.text ?? ""
        let at = item.location
        switch key {
        case "button":
            checkKeys(map, allowed: ["button"], what: "a button trigger")
            guard let text = string(first.value, "button") else { return nil }
            guard let gesture = ButtonGesture(rawValue: text), ButtonGesture.confirmButton.contains(gesture) else {
                problem(first.value, "unknown button gesture '\(text)'; expected press, double-press or long-press")
                return nil
            }
            return LocatedTrigger(.button(gesture), at: at)
        case "time":
            checkKeys(map, allowed: ["time", "days"], what: "a time trigger")
            guard let text = string(first.value, "time") else { return nil }
            guard let time = TimeOfDay(parsing: text.trimmingCharacters(in: .whitespaces)) else {
                problem(first.value, "malformed time '\(text)'; expected a 24-hour local time HH:MM such as \"07:30\"")
                return nil
            }
            let days = map.optional("days").flatMap { dayList($0) } ?? Set(Weekday.allCases)
            return LocatedTrigger(.time(time, days: days), at: at)
        case "input":
            checkKeys(map, allowed: ["input", "edge"], what: "an input trigger")
            guard let name = string(first.value, "input") else { return nil }
            var edge = InputEdge.rising
            if let node = map.optional("edge"), let text = string(node, "edge") {
                guard let parsed = InputEdge(rawValue: text) else {
                    problem(node, "unknown edge '\(text)'; expected rising or falling")
                    return nil
                }
                edge = parsed
            }
            return LocatedTrigger(.input(name: name, edge: edge), at: at)
        default:
            problem(first.key, "unknown trigger '\(key)'; expected button, time or input")
            return nil
        }
    }

    mutating func dayList(_ node: YAMLNode) -> Set<Weekday>? {
        guard node.isList, let items = read({ () throws(YAMLError) in try node.list() }) else {
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

    // MARK: Values

    mutating func mapping(_ node: YAMLNode, _ what: String) -> YAMLMapping? {
        read { () throws(YAMLError) in try node.mapping(what) }
    }

    mutating func checkKeys(_ map: YAMLMapping, allowed: [String], what: String) {
        map.unknownKeys(allowed: allowed, in: what).forEach { problems.add($0) }
    }

    /// The value of a key an action needs; a missing key gets `why`, or,
    /// when it was written inside another key's value, a message that says so.
    mutating func required(_ map: YAMLMapping, _ key: String, at node: YAMLNode, _ why: String) -> YAMLNode? {
        if let value = map.optional(key) { return value }
        if map.writtenUnder(key) != nil { problems.add(map.missing(key)) } else { problem(node, why) }
        return nil
    }

    /// A scalar's text as written (no YAML 1.1 typing: "07:30" stays text).
    mutating func string(_ node: YAMLNode, _ what: String) -> String? {
        read { () throws(YAMLError) in try node.string("text for \(what)") }
    }

    mutating func integer(_ node: YAMLNode, _ what: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = string(node, what) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            problem(node, "`\(what):` must be a whole number from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
            return nil
        }
        return number
    }

    mutating func variableName(_ node: YAMLNode, _ key: String) -> String? {
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
    mutating func template(_ node: YAMLNode, _ what: String) -> TextTemplate? {
        guard let text = string(node, what) else { return nil }
        let start = node.location
        // Columns inside a quoted scalar start one after the quote.
        var column = start.column + (node.isQuoted ? 1 : 0)
        func here() -> YAMLLocation { YAMLLocation(file: file, line: start.line, column: column) }
        var parts: [TextTemplate.Part] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "{" {
                guard let close = text[index...].firstIndex(of: "}") else {
                    problems.add(YAMLError(.other("'{' opens a variable that is never closed with '}' in \(what)"), at: here(), path: node.path))
                    return nil
                }
                let inner = String(text[text.index(after: index)..<close])
                guard let reference = reference(inner, at: here()) else {
                    problems.add(YAMLError(.other("'{\(inner)}' is not a variable reference; write {name} or {name.property}"), at: here(), path: node.path))
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
}

/// The sounds a `sound:` action may play.
public enum ShortcutSounds {
    public static let names = EngineSound.allCases.map(\.rawValue)
}

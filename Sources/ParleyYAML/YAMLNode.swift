import Foundation
import Yams

/// One node of a YAML document with its place (file, line, column) and its
/// dotted key path, and the typed reads that name both when they fail.
public struct YAMLNode {
    public let node: Node
    public let file: String
    /// `button.debounce-ms`, `actions[2]`; empty for the document.
    public let path: String
    /// Where the node is; a value with no position of its own (an empty
    /// value) takes its key's.
    public let location: YAMLLocation

    public init(_ node: Node, file: String, path: String, fallback: YAMLLocation? = nil) {
        self.node = node
        self.file = file
        self.path = path
        if let mark = node.mark {
            location = YAMLLocation(file: file, line: mark.line, column: mark.column)
        } else {
            location = fallback ?? YAMLLocation(file: file, line: 1, column: 1)
        }
    }

    // MARK: Shape

    /// The scalar's text as written, if the node is a scalar.
    public var text: String? { node.scalar?.string }
    /// A scalar written in quotes (its text starts one column after the node).
    public var isQuoted: Bool { node.scalar.map { $0.style == .doubleQuoted || $0.style == .singleQuoted } ?? false }
    public var isPlain: Bool { node.scalar?.style == .plain }
    /// Nothing written: `key:`, `~` or `null` (YAML's null), unquoted.
    public var isNull: Bool {
        guard let scalar = node.scalar else { return false }
        return scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }
    /// Null, or `{}`.
    public var isEmpty: Bool { isNull || (node.mapping?.isEmpty ?? false) }
    public var isMapping: Bool { node.mapping != nil }
    public var isList: Bool { node.sequence != nil }

    /// What the node is, in words, for "found ..." in messages.
    public var shape: String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar(let scalar): return isNull ? "nothing" : "'\(scalar.string)'"
        }
    }

    // MARK: Errors

    public func error(_ problem: YAMLError.Problem) -> YAMLError { YAMLError(problem, at: location, path: path) }
    public func error(_ reason: String) -> YAMLError { error(.other(reason)) }
    public func wrongType(_ expected: String) -> YAMLError { error(.wrongType(expected: expected, found: shape)) }

    // MARK: Typed reads

    /// A scalar's text as written.
    public func string(_ expected: String = "a text value") throws(YAMLError) -> String {
        guard let text else { throw wrongType(expected) }
        return text
    }

    /// Text that is not empty once trimmed.
    public func nonEmptyString(_ expected: String = "a text value") throws(YAMLError) -> String {
        let value = try string(expected)
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else { throw wrongType(expected) }
        return value
    }

    /// A whole number (decimal, or 0x/0o as YAML writes them) in `range`.
    public func int(in range: ClosedRange<Int>, expected: String = "a whole number") throws(YAMLError) -> Int {
        guard let scalar = node.scalar, !isNull, let value = Int.construct(from: scalar) else { throw wrongType(expected) }
        guard range.contains(value) else {
            throw error(.invalidValue(scalar.string, expected: "a number from \(range.lowerBound) to \(range.upperBound)"))
        }
        return value
    }

    /// A finite number in `range`.
    public func double(in range: ClosedRange<Double>, expected: String = "a number") throws(YAMLError) -> Double {
        guard let scalar = node.scalar, !isNull, let value = Double.construct(from: scalar), value.isFinite else { throw wrongType(expected) }
        guard range.contains(value) else {
            throw error(.invalidValue(scalar.string, expected: "a number from \(range.lowerBound) to \(range.upperBound)"))
        }
        return value
    }

    /// true/false (also yes/no and on/off, as YAML 1.1 has them).
    public func bool() throws(YAMLError) -> Bool {
        guard let scalar = node.scalar, let value = Bool.construct(from: scalar) else { throw wrongType("true or false") }
        return value
    }

    /// One of an enumeration's raw values.
    public func oneOf<E: RawRepresentable & CaseIterable>(_ type: E.Type) throws(YAMLError) -> E where E.RawValue == String {
        let allowed = E.allCases.map(\.rawValue)
        let value = try string("one of \(allowed.joined(separator: ", "))")
        guard let parsed = E(rawValue: value) else {
            throw error(.invalidValue(value, expected: "one of \(allowed.joined(separator: ", "))"))
        }
        return parsed
    }

    /// One of the given words.
    public func oneOf(_ allowed: [String]) throws(YAMLError) -> String {
        let value = try string("one of \(allowed.joined(separator: ", "))")
        guard allowed.contains(value) else { throw error(.invalidValue(value, expected: "one of \(allowed.joined(separator: ", "))")) }
        return value
    }

    /// The items of a list, each with its path (`key[0]`).
    public func list(_ expected: String = "a list") throws(YAMLError) -> [YAMLNode] {
        guard let items = node.sequence else { throw wrongType(expected) }
        return items.enumerated().map { YAMLNode($1, file: file, path: "\(path)[\($0)]") }
    }

    /// A list of text values.
    public func stringList(_ expected: String = "a list of text values") throws(YAMLError) -> [String] {
        var values: [String] = []
        for item in try list(expected) { values.append(try item.string()) }
        return values
    }

    /// A mapping; with `allowed`, the first key not in it is an error (with
    /// the closest allowed key, when one is close).
    public func mapping(_ expected: String = "a mapping", allowed: [String]? = nil, in what: String? = nil) throws(YAMLError) -> YAMLMapping {
        guard let map = node.mapping else { throw wrongType(expected) }
        let mapping = YAMLMapping(self, map)
        if let allowed, let unknown = mapping.unknownKeys(allowed: allowed, in: what).first { throw unknown }
        return mapping
    }
}

/// The keys and values of one mapping, in file order.
public struct YAMLMapping {
    public let node: YAMLNode
    public let entries: [(key: YAMLNode, value: YAMLNode)]

    init(_ node: YAMLNode, _ map: Node.Mapping) {
        self.node = node
        entries = map.map { key, value in
            let name = key.string ?? "?"
            let path = node.path.isEmpty ? name : "\(node.path).\(name)"
            let keyNode = YAMLNode(key, file: node.file, path: path)
            return (keyNode, YAMLNode(value, file: node.file, path: path, fallback: keyNode.location))
        }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [String] { entries.map { $0.key.text ?? "?" } }
    public var first: (key: YAMLNode, value: YAMLNode)? { entries.first }

    /// The path a key of this mapping has.
    public func path(_ key: String) -> String { node.path.isEmpty ? key : "\(node.path).\(key)" }

    public func has(_ key: String) -> Bool { optional(key) != nil }

    public func optional(_ key: String) -> YAMLNode? { entries.first { $0.key.text == key }?.value }

    /// The key's value; when it is missing here but written inside another
    /// key's mapping (`repeat: {times: 2}` for `repeat:` beside `times: 2`),
    /// the error says so.
    public func required(_ key: String) throws(YAMLError) -> YAMLNode {
        if let value = optional(key) { return value }
        throw missing(key)
    }

    /// The error for a missing key, at this mapping.
    public func missing(_ key: String) -> YAMLError {
        node.error(.missingKey(key, writtenUnder: writtenUnder(key)))
    }

    /// The key of this mapping whose value is a mapping holding `key`.
    public func writtenUnder(_ key: String) -> String? {
        entries.first { $0.value.node.mapping?.contains { $0.key.string == key } ?? false }?.key.text
    }

    /// Every key not in `allowed`, as errors at the key.
    public func unknownKeys(allowed: [String], in what: String? = nil) -> [YAMLError] {
        entries.compactMap { key, _ in
            let name = key.text ?? "?"
            guard !allowed.contains(name) else { return nil }
            return key.error(.unknownKey(name, in: what, allowed: allowed, suggestion: closestKey(to: name, among: allowed)))
        }
    }
}

/// Problems collected while reading on past the first, for loaders that
/// report everything wrong in a file at once.
public struct YAMLProblems {
    public var errors: [YAMLError] = []
    public init() {}

    public mutating func add(_ error: YAMLError) { errors.append(error) }

    /// The read's value, or nil with its error kept.
    public mutating func attempt<T>(_ read: () throws(YAMLError) -> T) -> T? {
        do { return try read() } catch {
            errors.append(error)
            return nil
        }
    }
}

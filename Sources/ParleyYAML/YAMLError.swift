/// A place in a YAML file: the file as it was named, 1-based line and column.
public struct YAMLLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }

    public static func < (a: YAMLLocation, b: YAMLLocation) -> Bool {
        (a.file, a.line, a.column) < (b.file, b.line, b.column)
    }
}

/// Input that cannot be used, with where it is and what was expected. Every
/// reader of Parley's YAML files (shortcuts, manifests, configuration,
/// boards) reports its problems in this one shape,
/// `file:line:column: what was expected, what was found`; each loader maps it
/// onto its own public error type.
public struct YAMLError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Problem: Sendable, Hashable {
        /// The text is not YAML at all.
        case syntax(String)
        /// A key the mapping does not take; `in` says what the mapping is
        /// ("a shortcut"), `suggestion` is a close allowed key.
        case unknownKey(String, in: String?, allowed: [String], suggestion: String?)
        /// A required key is absent; `writtenUnder` names the key whose value
        /// holds it instead (written one level too deep).
        case missingKey(String, writtenUnder: String?)
        /// The node has the wrong shape (a list where text was expected, ...).
        case wrongType(expected: String, found: String)
        /// The right shape, a value that is not allowed.
        case invalidValue(String, expected: String)
        /// A loader's own reason, already in words.
        case other(String)
        /// Valid YAML Parley does not take: an anchor or alias, or more than
        /// the file's `YAMLLimits`; the reason in words.
        case refused(String)
    }

    public var location: YAMLLocation
    /// The dotted key path of the node (`button.debounce-ms`, `actions[2]`);
    /// empty for the document itself.
    public var path: String
    public var problem: Problem

    public init(_ problem: Problem, at location: YAMLLocation, path: String) {
        self.problem = problem
        self.location = location
        self.path = path
    }

    /// What was expected and what was found, without the place.
    public var message: String {
        switch problem {
        case .syntax(let why): return "not valid YAML: \(why)"
        case .unknownKey(let key, let what, let allowed, let suggestion):
            let place = what.map { " in \($0)" } ?? ""
            let hint = suggestion.map { "; did you mean '\($0)'?" } ?? ""
            return "unknown key '\(key)'\(place); expected one of \(allowed.joined(separator: ", "))\(hint)"
        case .missingKey(let key, let under?):
            return "`\(key):` is written under `\(under):`; it belongs beside `\(under):`, at the same indentation"
        case .missingKey(let key, nil): return "missing required key '\(key)'"
        case .wrongType(let expected, let found): return "expected \(expected), found \(found)"
        case .invalidValue(let value, let expected): return "invalid value '\(value)'; expected \(expected)"
        case .other(let reason), .refused(let reason): return reason
        }
    }

    public var description: String { "\(location): \(message)" }
}

/// The allowed key closest to a misspelt one, if it is close enough to be
/// what was meant (at most a third of its letters differ).
public func closestKey(to key: String, among allowed: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
    let wanted = Array(key.lowercased())
    let scored = allowed.map { ($0, distance(wanted, Array($0.lowercased()))) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 > 0, best.1 <= max(1, wanted.count / 3) else { return nil }
    return best.0
}

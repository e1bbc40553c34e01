/// A configuration the daemon refuses to start with: the file, the line and
/// column (1-based, when known), the dotted key and what was expected.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case unreadable = "cannot read the file"
        case syntax = "not valid YAML"
        case unknownKey = "unknown key"
        case wrongType = "wrong type"
        case impossibleValue = "impossible value"
        /// Valid YAML Parley does not take: an anchor, an alias, or more than
        /// a configuration file may hold (`YAMLLimits.configuration`).
        case refused = "refused"
    }

    public var kind: Kind
    public var file: String
    public var line: Int?
    public var column: Int?
    /// The dotted key, e.g. "voice.rate" (empty for the document itself).
    public var key: String
    public var reason: String

    public init(_ kind: Kind, file: String, line: Int?, column: Int?, key: String, reason: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.reason = reason
    }

    /// `file:line:column: key 'voice.rate': impossible value: 1000 is not in 80…450`
    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        let subject = key.isEmpty ? "" : "key '\(key)': "
        return "\(location): \(subject)\(kind.rawValue): \(reason)"
    }
}

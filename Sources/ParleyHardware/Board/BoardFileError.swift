import ParleyDevice
import ParleyYAML
/// A board file that cannot be used, with where and why:
/// `board/pi4/board.yaml:14:11: leds.green.line: line 17 is already used by button.line (line 8)`.
public struct BoardFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        case unreadable(String)
        case syntax(String)
        case unknownKey(String, allowed: [String])
        case unknownState(String)
        case unknownLED(String, known: [String])
        case lineUsedTwice(UInt32, firstUse: String, firstLine: Int?)
        case missingKey(String)
        /// A required key written inside another key's value instead of beside it.
        case misplacedKey(String, under: String)
        case wrongType(expected: String, found: String)
        case invalidValue(String, expected: String)
        /// Valid YAML Parley does not take: an anchor, an alias, or more than
        /// a board file may hold (`YAMLLimits.board`).
        case refused(String)
    }

    /// The file as it was named to the loader.
    public var file: String
    /// 1-based line and column of the offending node, when known.
    public var line: Int?
    public var column: Int?
    /// The dotted key path, e.g. `button.debounce-ms`; empty for the whole document.
    public var key: String
    public var problem: Problem

    public init(file: String, line: Int?, column: Int?, key: String, problem: Problem) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.problem = problem
    }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        let subject = key.isEmpty ? "" : "\(key): "
        return "\(place): \(subject)\(problemText)"
    }

    private var problemText: String {
        switch problem {
        case .unreadable(let why): return "cannot read the board file (\(why))"
        case .syntax(let why): return "not valid YAML: \(why)"
        case .unknownKey(let key, let allowed):
            let hint = closestKey(to: key, among: allowed).map { "; did you mean '\($0)'?" } ?? ""
            return "unknown key '\(key)'; expected one of: \(allowed.joined(separator: ", "))\(hint)"
        case .unknownState(let state):
            let known = DeviceState.allCases.map(\.rawValue).joined(separator: ", ")
            return "unknown state '\(state)'; the states are: \(known)"
        case .unknownLED(let name, let known):
            return "unknown LED '\(name)'; the leds section declares: \(known.joined(separator: ", "))"
        case .lineUsedTwice(let offset, let firstUse, let firstLine):
            let at = firstLine.map { " (line \($0))" } ?? ""
            return "line \(offset) is already used by \(firstUse)\(at)"
        case .missingKey(let key): return "missing required key '\(key)'"
        case .misplacedKey(let key, let under):
            return "`\(key):` is written under `\(under):`; it belongs beside `\(under):`, at the same indentation"
        case .wrongType(let expected, let found): return "expected \(expected), found \(found)"
        case .invalidValue(let value, let expected): return "invalid value '\(value)'; expected \(expected)"
        case .refused(let why): return why
        }
    }
}

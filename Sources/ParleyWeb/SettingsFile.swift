import Foundation
import ParleyConfiguration
import ParleyControl
import ParleyDaemon

/// The settings the page changes, written back into the configuration file
/// parleyd was started with. Lines are edited in place (comments and the
/// other keys stay as the owner wrote them), and the new text must pass the
/// daemon's own loader (`ConfigLoader.parse`) before it replaces the file,
/// so the page can never write a file the daemon would refuse at its next start.
public struct SettingsFile: Sendable {
    public enum Key: String, CaseIterable, Sendable {
        case volume = "voice.volume", voiceName = "voice.name", rate = "voice.rate"
        case wakeName = "wake.name", sensitivity = "wake.sensitivity", board = "board"
        case timeZone = "time_zone"

        var numeric: Bool { self == .volume || self == .rate || self == .sensitivity }
    }

    public let path: String

    public init(path: String) { self.path = path }

    /// The values in force in the file (the defaults where it is silent); nil when it cannot be read.
    public func current() -> [Key: String]? {
        guard let config = try? ConfigLoader.load(contentsOf: path) else { return nil }
        return [
            .volume: String(config.voice.volume), .voiceName: config.voice.name, .rate: String(config.voice.rate),
            .wakeName: config.wake.name, .sensitivity: String(config.wake.sensitivity), .board: config.board,
            .timeZone: config.timeZone ?? "",
        ]
    }

    /// Writes `changes` and returns the configuration as the file now reads.
    @discardableResult
    public func apply(_ changes: [(Key, String)]) throws -> ParleyConfig {
        var text = try String(contentsOfFile: path, encoding: .utf8)
        for (key, value) in changes {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            // An empty time zone is the system's own: the key leaves the file.
            if key == .timeZone && trimmed.isEmpty {
                text = text.components(separatedBy: "\n").filter { !$0.hasPrefix(key.rawValue + ":") }.joined(separator: "\n")
                continue
            }
            guard !trimmed.contains(where: \.isNewline), trimmed.count <= 100 else {
                throw SettingsError("\(key.rawValue): \"\(trimmed.prefix(40))\" is not one short line")
            }
            text = Self.set(key.rawValue, to: Self.yamlValue(trimmed, numeric: key.numeric), in: text)
        }
        // The daemon's loader has the last word (ranges, types, names), with the key and reason.
        let config: ParleyConfig
        do {
            config = try ConfigLoader.parse(text, file: path)
        } catch let error as ConfigError {
            throw SettingsError("\(error.key.isEmpty ? "" : error.key + ": ")\(error.reason)")
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return config
    }

    /// A number stays plain when it reads as one; anything else is a quoted string.
    static func yamlValue(_ value: String, numeric: Bool) -> String {
        if numeric, Double(value) != nil { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }

    /// Sets `section.key` (or a top-level `key`) in YAML text: the existing
    /// line's value is replaced (its comment kept), else the key is added
    /// under its section, else the section is added at the end.
    static func set(_ dotted: String, to value: String, in text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        let parts = dotted.split(separator: ".").map(String.init)
        func isKey(_ line: String, _ key: String, indented: Bool) -> Bool {
            let body = line.drop { $0 == " " }
            return (indented ? body.count < line.count : body.count == line.count) && body.hasPrefix(key + ":")
        }
        func replaced(_ line: String, _ key: String) -> String {
            let indent = line.prefix { $0 == " " }
            let rest = line.dropFirst(indent.count + key.count + 1)
            let comment = rest.range(of: " #").map { String(rest[$0.lowerBound...]) } ?? ""
            return "\(indent)\(key): \(value)\(comment)"
        }
        if parts.count == 1 {
            if let i = lines.firstIndex(where: { isKey($0, parts[0], indented: false) }) {
                lines[i] = replaced(lines[i], parts[0])
            } else {
                lines.append("\(parts[0]): \(value)")
            }
            return lines.joined(separator: "\n")
        }
        let (section, key) = (parts[0], parts[1])
        guard let start = lines.firstIndex(where: { isKey($0, section, indented: false) }) else {
            if lines.last == "" { lines.removeLast() }
            lines += ["\(section):", "  \(key): \(value)", ""]
            return lines.joined(separator: "\n")
        }
        var end = start + 1
        while end < lines.count {
            let line = lines[end]
            if let first = line.first, first != " ", first != "#" { break }
            end += 1
        }
        if let i = lines[(start + 1)..<end].firstIndex(where: { isKey($0, key, indented: true) }) {
            lines[i] = replaced(lines[i], key)
        } else {
            lines.insert("  \(key): \(value)", at: start + 1)
        }
        return lines.joined(separator: "\n")
    }
}

public struct SettingsError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

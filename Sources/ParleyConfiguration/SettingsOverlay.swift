import Foundation
import ParleyYAML

/// The settings the page changes, kept in `<state_directory>/settings.yaml`
/// and laid over parley.yaml when it is read. parley.yaml lives in
/// /etc/parley, which the daemon may not write under its unit (root's
/// directory, ProtectSystem=strict): saving there failed on the device.
/// The state directory is the daemon's own. parley.yaml is still read as
/// the owner wrote it; the overlay names only the page's keys, one per line
/// (`voice:` then `  volume: 80`), and its values replace parley.yaml's
/// lines (comments kept) before the whole is checked by the same loader, so
/// the result is exactly what parley.yaml with those lines would be.
public enum SettingsOverlay {
    public static let fileName = "settings.yaml"
    /// The keys the overlay may hold: the page's Settings.
    public static let keys = ["voice.volume", "voice.name", "voice.rate", "wake.name", "wake.sensitivity", "board", "time_zone"]
    /// Seven short lines: anything larger was not written by the page.
    public static let maximumBytes = 4_096

    public static func path(stateDirectory: String) -> String {
        URL(fileURLWithPath: stateDirectory).appendingPathComponent(fileName).path
    }

    /// `config` (parsed from `text`, the file at `path`) with the overlay in
    /// `stateDirectory` laid over it, when there is one.
    static func laidOver(_ text: String, file path: String, config: ParleyConfig, stateDirectory: String) throws -> ParleyConfig {
        let overlay = self.path(stateDirectory: stateDirectory)
        guard FileManager.default.fileExists(atPath: overlay) else { return config }
        if let size = (try? FileManager.default.attributesOfItem(atPath: overlay)[.size]) as? Int, size > maximumBytes {
            throw ConfigError(.refused, file: overlay, line: nil, column: nil, key: "",
                              reason: "\(size) bytes; the page's settings are at most \(maximumBytes)")
        }
        let entries = try entries(try ConfigLoader.read(overlay), file: overlay)
        do {
            return try ConfigLoader.parse(merge(text, entries), file: path)
        } catch let error as ConfigError {
            // Only the overlay's lines changed what the file alone passed: say which file to fix.
            throw ConfigError(error.kind, file: overlay, line: nil, column: nil, key: error.key,
                              reason: "\(error.reason) (the page's settings, laid over \(path); fix or delete \(overlay))")
        }
    }

    /// The overlay's values (dotted key, YAML value text) in file order; a
    /// line it cannot hold is refused with the file, line and reason.
    public static func entries(_ text: String, file: String) throws -> [(key: String, value: String)] {
        var found: [(key: String, value: String)] = []
        var section: String?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            func refuse(_ reason: String) -> ConfigError {
                ConfigError(.impossibleValue, file: file, line: index + 1, column: 1, key: "", reason: reason)
            }
            guard let colon = trimmed.firstIndex(of: ":") else { throw refuse("\"\(trimmed.prefix(40))\" is not `key: value`") }
            let name = String(trimmed[..<colon])
            let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            let indented = line.hasPrefix(" ")
            if !indented && value.isEmpty {
                section = name
                continue
            }
            let dotted = indented ? (section.map { "\($0).\(name)" } ?? name) : name
            if !indented { section = nil }
            guard keys.contains(dotted) else {
                throw ConfigError(.unknownKey, file: file, line: index + 1, column: 1, key: dotted,
                                  reason: "not a setting the page keeps here (\(keys.joined(separator: ", ")))")
            }
            found.append((dotted, value))
        }
        return found
    }

    /// `main` (parley.yaml's text) with the overlay's values in place. An
    /// empty time zone (`time_zone: ""`) is the system's own: the key leaves.
    public static func merge(_ main: String, _ entries: [(key: String, value: String)]) -> String {
        var text = main
        for (key, value) in entries {
            if key == "time_zone" && (value == "\"\"" || value.isEmpty) {
                text = text.components(separatedBy: "\n").filter { !$0.hasPrefix("time_zone:") }.joined(separator: "\n")
            } else {
                text = set(key, to: value, in: text)
            }
        }
        return text
    }

    /// The overlay's text for `entries`, grouped by section.
    public static func render(_ entries: [(key: String, value: String)]) -> String {
        var lines = ["# Written by the speaker's page (Settings); laid over parley.yaml when parleyd reads it."]
        var sections: [String: [String]] = [:]
        var order: [String] = []
        for (key, value) in entries {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 1 {
                lines.append("\(key): \(value)")
            } else {
                if sections[parts[0]] == nil { order.append(parts[0]) }
                sections[parts[0], default: []].append("  \(parts[1]): \(value)")
            }
        }
        for section in order { lines += ["\(section):"] + sections[section]! }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Sets `section.key` (or a top-level `key`) in YAML text: the existing
    /// line's value is replaced (its comment kept), else the key is added
    /// under its section, else the section is added at the end.
    public static func set(_ dotted: String, to value: String, in text: String) -> String {
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

extension ConfigLoader {
    /// A configuration file's text (parley.yaml or the overlay), its size checked first.
    static func read(_ path: String) throws -> String {
        // The size is checked before reading, so a huge file costs no memory.
        if let error = YAMLDocument.sizeError(file: path, limits: .configuration) { throw ConfigError(error) }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            throw ConfigError(.unreadable, file: path, line: nil, column: nil, key: "", reason: reason)
        }
    }
}

import Foundation
import ParleyConfiguration
import ParleyControl
import ParleyDaemon

/// The settings the page changes. They are written to
/// `<state_directory>/settings.yaml` (``SettingsOverlay``), which the daemon
/// may write, and laid over the configuration file parleyd was started with,
/// which is read as the owner wrote it (in /etc/parley the daemon may not
/// write). The new values must pass the daemon's own loader over that file
/// (`ConfigLoader.parse`) before the overlay is replaced, so the page can
/// never save what the daemon would refuse at its next start.
public struct SettingsFile: Sendable {
    public enum Key: String, CaseIterable, Sendable {
        case volume = "voice.volume", voiceName = "voice.name", rate = "voice.rate"
        case wakeName = "wake.name", sensitivity = "wake.sensitivity", board = "board"
        case timeZone = "time_zone"

        var numeric: Bool { self == .volume || self == .rate || self == .sensitivity }
    }

    /// The configuration file (read, never written).
    public let path: String
    /// The state directory the daemon runs with (the overlay's home).
    public let stateDirectory: String
    /// Where the page's settings are written.
    public var overlay: String { SettingsOverlay.path(stateDirectory: stateDirectory) }

    public init(path: String, stateDirectory: String) {
        self.path = path
        self.stateDirectory = stateDirectory
    }

    /// The values in force (the file, the overlay, the defaults where both are silent); nil when they cannot be read.
    public func current() -> [Key: String]? {
        guard let config = try? ConfigLoader.load(contentsOf: path, stateDirectory: stateDirectory) else { return nil }
        return [
            .volume: String(config.voice.volume), .voiceName: config.voice.name, .rate: String(config.voice.rate),
            .wakeName: config.wake.name, .sensitivity: String(config.wake.sensitivity), .board: config.board,
            .timeZone: config.timeZone ?? "",
        ]
    }

    /// Writes `changes` and returns the configuration as it now reads.
    @discardableResult
    public func apply(_ changes: [(Key, String)]) throws -> ParleyConfig {
        let main = try String(contentsOfFile: path, encoding: .utf8)
        var entries = FileManager.default.fileExists(atPath: overlay)
            ? try SettingsOverlay.entries(String(contentsOfFile: overlay, encoding: .utf8), file: overlay) : []
        for (key, value) in changes {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            guard !trimmed.contains(where: \.isNewline), trimmed.count <= 100 else {
                throw SettingsError("\(key.rawValue): \"\(trimmed.prefix(40))\" is not one short line")
            }
            // An empty time zone is the system's own: written as "", it takes the key out of parley.yaml's.
            let written = key == .timeZone && trimmed.isEmpty ? "\"\"" : Self.yamlValue(trimmed, numeric: key.numeric)
            entries.removeAll { $0.key == key.rawValue }
            entries.append((key.rawValue, written))
        }
        // The daemon's loader has the last word (ranges, types, names), with the key and reason.
        let config: ParleyConfig
        do {
            config = try ConfigLoader.parse(SettingsOverlay.merge(main, entries), file: path)
        } catch let error as ConfigError {
            throw SettingsError("\(error.key.isEmpty ? "" : error.key + ": ")\(error.reason)")
        }
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        try SettingsOverlay.render(entries).write(toFile: overlay, atomically: true, encoding: .utf8)
        return config
    }

    /// A number stays plain when it reads as one; anything else is a quoted string.
    static func yamlValue(_ value: String, numeric: Bool) -> String {
        if numeric, Double(value) != nil { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }
}

public struct SettingsError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

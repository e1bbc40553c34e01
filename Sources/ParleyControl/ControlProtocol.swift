import Foundation
import ParleyCore

// The control protocol between `parley` and `parleyd` (docs/control-protocol.md):
// over a Unix stream socket, the client writes one JSON object per line and
// reads exactly one JSON object per line in answer, in order. A connection
// may carry any number of requests. The requests are here; the responses
// in ControlResponse.swift, `status` in DaemonStatus.swift.

/// A button gesture, as the board would report it.
public enum ButtonPress: String, Sendable, Codable, CaseIterable {
    case short, long, double
}

/// Which donations `donations forget` deletes.
public enum ForgetScope: Sendable, Equatable {
    /// One donation by the row id `donations list` shows.
    case row(Int64)
    case identifier(String)
    case group(String)
    case app(String)
    case all
}

/// A request from the control tool.
public enum ControlRequest: Sendable, Equatable {
    case status
    /// Text handled as if spoken after the wake word.
    case say(String)
    /// A WAV file (absolute path) played into the stand-in microphone.
    case play(String)
    case press(ButtonPress)
    case apps
    /// The App Shortcut phrases the device understands now.
    case shortcuts
    /// The most recent log lines.
    case logs(limit: Int)
    case donations(app: String?, limit: Int?)
    case forgetDonations(ForgetScope)
    case phrases
    case addPhrase(phrase: String, app: String, intent: String, parameters: [String: String])
    case deletePhrase(String)
    /// A person's shortcuts (docs/shortcuts.md): list, show one, run one by
    /// name, add a file (absolute path, checked first), remove by name.
    case personalShortcuts
    case showShortcut(String)
    case runShortcut(String)
    case addShortcut(String)
    case removeShortcut(String)
    /// Estimates the room transform from the kept confirmed audio and puts
    /// it in use (`parley adapt`).
    case adapt
    /// The web page's paired browsers (`parley web tokens`), and revoking one
    /// by the id that lists it; answered by ParleyWeb when the page is on.
    case webTokens
    case revokeWebToken(String)
    /// What typed words would start, without running it (the page's "Try it").
    case resolve(String)
    /// The speaker's volume: changed (up, down, mute, unmute, a level 0-10)
    /// or, with nil, only read.
    case volume(VolumeChange?)
    /// Turns a person's shortcut off (kept and listed, its phrases and
    /// triggers gone) or on again, by name; durable.
    case setShortcutEnabled(name: String, enabled: Bool)
    /// The external apps (the apps folder): each handler's state and the
    /// tail of its standard error, and which are turned off.
    case externalApps
    /// Turns an external app off (its handler stopped, its phrases out of
    /// the grammar) or on again, by identifier; durable.
    case setAppEnabled(identifier: String, enabled: Bool)
    /// Installs an app that comes with Parley (`ShippedApps`) into the apps
    /// folder by its folder name; nil lists them.
    case installApp(name: String?)
    /// The recordings kept for room adaptation; deleting one by its id, or
    /// all of them with the room transform (as forgetting the history does).
    case keptRecordings
    case deleteKeptRecording(String)
    case forgetKeptRecordings
    /// Installs a RAUC bundle (an absolute path) into the slot not running
    /// and restarts into it (`parley update`); answered once RAUC is done.
    case update(String)
}

/// The JSON form of a request: `command` plus the fields it uses (package:
/// the daemon logs a refused request by its command). Its Codable is
/// synthesized: a nil field is left out of the line, unknown keys are
/// ignored; the memberwise initialiser gives every field but `command` nil.
package struct WireRequest: Codable, Equatable {
    package var command: String
    package var text: String?
    package var limit: Int?
    package var app: String?
    package var intent: String?
    package var scope: String?
    package var value: String?
    package var phrase: String?
    package var parameters: [String: String]?
}

/// A request's one Codable path, for both ends: written as its `wire`,
/// read through `init(wire:)`, whose refusals (a missing field, an unknown
/// command) come out of the decoder as they are.
extension ControlRequest: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(wire: WireRequest(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try wire.encode(to: encoder)
    }
}

extension ControlRequest {
    package var wire: WireRequest {
        switch self {
        case .status: WireRequest(command: "status")
        case .say(let text): WireRequest(command: "say", text: text)
        case .play(let path): WireRequest(command: "play", value: path)
        case .press(.short): WireRequest(command: "press")
        case .press(.long): WireRequest(command: "long-press")
        case .press(.double): WireRequest(command: "double-press")
        case .apps: WireRequest(command: "apps")
        case .shortcuts: WireRequest(command: "shortcuts")
        case .logs(let limit): WireRequest(command: "logs", limit: limit)
        case .donations(let app, let limit): WireRequest(command: "donations", limit: limit, app: app)
        case .forgetDonations(.row(let id)): WireRequest(command: "forget", scope: "row", value: String(id))
        case .forgetDonations(.identifier(let id)): WireRequest(command: "forget", scope: "identifier", value: id)
        case .forgetDonations(.group(let group)): WireRequest(command: "forget", scope: "group", value: group)
        case .forgetDonations(.app(let app)): WireRequest(command: "forget", scope: "app", value: app)
        case .forgetDonations(.all): WireRequest(command: "forget", scope: "all")
        case .phrases: WireRequest(command: "phrases")
        case .addPhrase(let phrase, let app, let intent, let parameters):
            WireRequest(command: "add-phrase", app: app, intent: intent, phrase: phrase, parameters: parameters)
        case .deletePhrase(let phrase): WireRequest(command: "delete-phrase", phrase: phrase)
        case .personalShortcuts: WireRequest(command: "shortcut-list")
        case .showShortcut(let name): WireRequest(command: "shortcut-show", value: name)
        case .runShortcut(let name): WireRequest(command: "shortcut-run", value: name)
        case .addShortcut(let path): WireRequest(command: "shortcut-add", value: path)
        case .removeShortcut(let name): WireRequest(command: "shortcut-remove", value: name)
        case .adapt: WireRequest(command: "adapt")
        case .webTokens: WireRequest(command: "web-tokens")
        case .revokeWebToken(let id): WireRequest(command: "web-revoke", value: id)
        case .resolve(let text): WireRequest(command: "resolve", text: text)
        case .volume(let change): WireRequest(command: "volume", value: change?.argument)
        case .setShortcutEnabled(let name, let enabled):
            WireRequest(command: enabled ? "shortcut-enable" : "shortcut-disable", value: name)
        case .externalApps: WireRequest(command: "app-status")
        case .setAppEnabled(let identifier, let enabled): WireRequest(command: enabled ? "app-on" : "app-off", value: identifier)
        case .installApp(let name): WireRequest(command: "app-install", value: name)
        case .keptRecordings: WireRequest(command: "kept-list")
        case .deleteKeptRecording(let id): WireRequest(command: "kept-delete", value: id)
        case .forgetKeptRecordings: WireRequest(command: "kept-forget")
        case .update(let path): WireRequest(command: "update", value: path)
        }
    }

    /// Reads one request line as a client sent it (the bytes are the client's:
    /// the control-socket protocol reader); the error text goes back to the client.
    public init(line: Data) throws(ControlProtocolError) {
        do {
            self = try ControlCoding.decode(ControlRequest.self, from: line)
        } catch let refused as ControlProtocolError {
            throw refused
        } catch {
            throw ControlProtocolError("not a JSON request object with a \"command\" field")
        }
    }

    /// Decodes a request line; the error text goes back to the client.
    init(wire w: WireRequest) throws(ControlProtocolError) {
        func need(_ value: String?, _ field: String) throws(ControlProtocolError) -> String {
            guard let value, !value.isEmpty else { throw .init("\(w.command) needs \"\(field)\"") }
            return value
        }
        /// The `value` field most commands take, required.
        func value() throws(ControlProtocolError) -> String { try need(w.value, "value") }
        switch w.command {
        case "status": self = .status
        case "say": self = .say(try need(w.text, "text"))
        case "play": self = .play(try value())
        case "press": self = .press(.short)
        case "long-press": self = .press(.long)
        case "double-press": self = .press(.double)
        case "apps": self = .apps
        case "shortcuts": self = .shortcuts
        case "logs": self = .logs(limit: max(1, min(w.limit ?? 50, 10_000)))
        case "donations": self = .donations(app: w.app, limit: w.limit)
        case "forget":
            switch w.scope {
            case "row":
                guard let id = Int64(try value()) else { throw .init("forget row needs a numeric value") }
                self = .forgetDonations(.row(id))
            case "identifier": self = .forgetDonations(.identifier(try value()))
            case "group": self = .forgetDonations(.group(try value()))
            case "app": self = .forgetDonations(.app(try value()))
            case "all": self = .forgetDonations(.all)
            default: throw .init("forget needs \"scope\": row, identifier, group, app or all")
            }
        case "phrases": self = .phrases
        case "add-phrase":
            self = .addPhrase(
                phrase: try need(w.phrase, "phrase"), app: try need(w.app, "app"),
                intent: try need(w.intent, "intent"), parameters: w.parameters ?? [:])
        case "delete-phrase": self = .deletePhrase(try need(w.phrase, "phrase"))
        case "shortcut-list": self = .personalShortcuts
        case "shortcut-show": self = .showShortcut(try value())
        case "shortcut-run": self = .runShortcut(try value())
        case "shortcut-add": self = .addShortcut(try value())
        case "shortcut-remove": self = .removeShortcut(try value())
        case "adapt": self = .adapt
        case "web-tokens": self = .webTokens
        case "web-revoke": self = .revokeWebToken(try value())
        case "resolve": self = .resolve(try need(w.text, "text"))
        case "volume":
            guard let value = w.value, !value.isEmpty else { self = .volume(nil); break }
            guard let change = VolumeChange(argument: value) else {
                throw .init("volume \"value\" must be \(VolumeChange.spellings), not \"\(value)\"")
            }
            self = .volume(change)
        case "shortcut-enable": self = .setShortcutEnabled(name: try value(), enabled: true)
        case "shortcut-disable": self = .setShortcutEnabled(name: try value(), enabled: false)
        case "app-status": self = .externalApps
        case "app-on": self = .setAppEnabled(identifier: try value(), enabled: true)
        case "app-off": self = .setAppEnabled(identifier: try value(), enabled: false)
        case "app-install": self = .installApp(name: w.value.flatMap { $0.isEmpty ? nil : $0 })
        case "kept-list": self = .keptRecordings
        case "kept-delete": self = .deleteKeptRecording(try value())
        case "kept-forget": self = .forgetKeptRecordings
        case "update": self = .update(try value())
        default: throw .init("unknown command \"\(w.command)\"")
        }
    }
}

public struct ControlProtocolError: Error, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Line framing and JSON for both ends.
enum ControlCoding {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var data = try encoder.encode(value)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    static func decode<T: Decodable>(_ type: T.Type, from line: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: line)
    }
}

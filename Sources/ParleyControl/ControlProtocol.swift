import Foundation
import ParleyCore

// The control protocol between `parley` and `parleyd` (docs/control-protocol.md):
// over a Unix stream socket, the client writes one JSON object per line and
// reads exactly one JSON object per line in answer, in order. A connection
// may carry any number of requests.

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
}

/// The JSON form of a request: `command` plus the fields it uses (package:
/// the daemon logs a refused request by its command).
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

    package init(command: String) { self.command = command }
}

extension ControlRequest {
    package var wire: WireRequest {
        switch self {
        case .status: return WireRequest(command: "status")
        case .say(let text): var w = WireRequest(command: "say"); w.text = text; return w
        case .play(let path): var w = WireRequest(command: "play"); w.value = path; return w
        case .press(.short): return WireRequest(command: "press")
        case .press(.long): return WireRequest(command: "long-press")
        case .press(.double): return WireRequest(command: "double-press")
        case .apps: return WireRequest(command: "apps")
        case .shortcuts: return WireRequest(command: "shortcuts")
        case .logs(let limit): var w = WireRequest(command: "logs"); w.limit = limit; return w
        case .donations(let app, let limit):
            var w = WireRequest(command: "donations"); w.app = app; w.limit = limit; return w
        case .forgetDonations(let scope):
            var w = WireRequest(command: "forget")
            switch scope {
            case .row(let id): w.scope = "row"; w.value = String(id)
            case .identifier(let id): w.scope = "identifier"; w.value = id
            case .group(let group): w.scope = "group"; w.value = group
            case .app(let app): w.scope = "app"; w.value = app
            case .all: w.scope = "all"
            }
            return w
        case .phrases: return WireRequest(command: "phrases")
        case .addPhrase(let phrase, let app, let intent, let parameters):
            var w = WireRequest(command: "add-phrase")
            w.phrase = phrase; w.app = app; w.intent = intent; w.parameters = parameters
            return w
        case .deletePhrase(let phrase): var w = WireRequest(command: "delete-phrase"); w.phrase = phrase; return w
        case .personalShortcuts: return WireRequest(command: "shortcut-list")
        case .showShortcut(let name): var w = WireRequest(command: "shortcut-show"); w.value = name; return w
        case .runShortcut(let name): var w = WireRequest(command: "shortcut-run"); w.value = name; return w
        case .addShortcut(let path): var w = WireRequest(command: "shortcut-add"); w.value = path; return w
        case .removeShortcut(let name): var w = WireRequest(command: "shortcut-remove"); w.value = name; return w
        case .adapt: return WireRequest(command: "adapt")
        case .webTokens: return WireRequest(command: "web-tokens")
        case .revokeWebToken(let id): var w = WireRequest(command: "web-revoke"); w.value = id; return w
        case .resolve(let text): var w = WireRequest(command: "resolve"); w.text = text; return w
        case .volume(let change): var w = WireRequest(command: "volume"); w.value = change?.argument; return w
        case .setShortcutEnabled(let name, let enabled):
            var w = WireRequest(command: enabled ? "shortcut-enable" : "shortcut-disable"); w.value = name; return w
        case .externalApps: return WireRequest(command: "app-status")
        case .setAppEnabled(let identifier, let enabled):
            var w = WireRequest(command: enabled ? "app-on" : "app-off"); w.value = identifier; return w
        case .installApp(let name): var w = WireRequest(command: "app-install"); w.value = name; return w
        case .keptRecordings: return WireRequest(command: "kept-list")
        case .deleteKeptRecording(let id): var w = WireRequest(command: "kept-delete"); w.value = id; return w
        case .forgetKeptRecordings: return WireRequest(command: "kept-forget")
        }
    }

    /// Reads one request line as a client sent it (the bytes are the client's:
    /// the control-socket protocol reader); the error text goes back to the client.
    public init(line: Data) throws(ControlProtocolError) {
        let wire: WireRequest
        do { wire = try ControlCoding.decode(WireRequest.self, from: line) } catch {
            throw ControlProtocolError("not a JSON request object with a \"command\" field")
        }
        try self.init(wire: wire)
    }

    /// Decodes a request line; the error text goes back to the client.
    init(wire w: WireRequest) throws(ControlProtocolError) {
        func need(_ value: String?, _ field: String) throws(ControlProtocolError) -> String {
            guard let value, !value.isEmpty else { throw .init("\(w.command) needs \"\(field)\"") }
            return value
        }
        switch w.command {
        case "status": self = .status
        case "say": self = .say(try need(w.text, "text"))
        case "play": self = .play(try need(w.value, "value"))
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
                guard let id = Int64(try need(w.value, "value")) else { throw .init("forget row needs a numeric value") }
                self = .forgetDonations(.row(id))
            case "identifier": self = .forgetDonations(.identifier(try need(w.value, "value")))
            case "group": self = .forgetDonations(.group(try need(w.value, "value")))
            case "app": self = .forgetDonations(.app(try need(w.value, "value")))
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
        case "shortcut-show": self = .showShortcut(try need(w.value, "value"))
        case "shortcut-run": self = .runShortcut(try need(w.value, "value"))
        case "shortcut-add": self = .addShortcut(try need(w.value, "value"))
        case "shortcut-remove": self = .removeShortcut(try need(w.value, "value"))
        case "adapt": self = .adapt
        case "web-tokens": self = .webTokens
        case "web-revoke": self = .revokeWebToken(try need(w.value, "value"))
        case "resolve": self = .resolve(try need(w.text, "text"))
        case "volume":
            guard let value = w.value, !value.isEmpty else { self = .volume(nil); break }
            guard let change = VolumeChange(argument: value) else {
                throw .init("volume \"value\" must be \(VolumeChange.spellings), not \"\(value)\"")
            }
            self = .volume(change)
        case "shortcut-enable": self = .setShortcutEnabled(name: try need(w.value, "value"), enabled: true)
        case "shortcut-disable": self = .setShortcutEnabled(name: try need(w.value, "value"), enabled: false)
        case "app-status": self = .externalApps
        case "app-on": self = .setAppEnabled(identifier: try need(w.value, "value"), enabled: true)
        case "app-off": self = .setAppEnabled(identifier: try need(w.value, "value"), enabled: false)
        case "app-install": self = .installApp(name: w.value.flatMap { $0.isEmpty ? nil : $0 })
        case "kept-list": self = .keptRecordings
        case "kept-delete": self = .deleteKeptRecording(try need(w.value, "value"))
        case "kept-forget": self = .forgetKeptRecordings
        default: throw .init("unknown command \"\(w.command)\"")
        }
    }
}

public struct ControlProtocolError: Error, Equatable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// An app as `parley apps` lists it.
public struct AppSummary: Sendable, Codable, Equatable {
    public var name: String
    public var synonyms: [String]
    public var intents: [String]
    public var primary: Bool
    /// The identifier (`KitchenLights`, as in shortcut files); nil from an older daemon.
    public var identifier: String?
    /// True for an app from the apps folder; nil from an older daemon.
    public var external: Bool?
    public init(name: String, synonyms: [String], intents: [String], primary: Bool, identifier: String? = nil, external: Bool? = nil) {
        self.name = name
        self.synonyms = synonyms
        self.intents = intents
        self.primary = primary
        self.identifier = identifier
        self.external = external
    }
}

/// One phrase the device understands now, and what it starts.
public struct ShortcutSummary: Sendable, Codable, Equatable {
    public var phrase: String
    public var app: String
    public var intent: String
    public init(phrase: String, app: String, intent: String) {
        self.phrase = phrase
        self.app = app
        self.intent = intent
    }
}

/// A shortcut as `parley shortcuts list` and `show` print it.
public struct PersonalShortcut: Sendable, Codable, Equatable {
    public var name: String
    public var phrases: [String]
    /// "double-press", "07:30 mon tue", "input door rising".
    public var triggers: [String]
    /// Its actions in words ("Order two tomato soup for pick up, ...").
    public var summary: String
    public var file: String
    /// False while turned off (`shortcut-disable`); nil from an older daemon.
    public var enabled: Bool?
    public init(name: String, phrases: [String], triggers: [String], summary: String, file: String, enabled: Bool? = nil) {
        self.enabled = enabled
        self.name = name
        self.phrases = phrases
        self.triggers = triggers
        self.summary = summary
        self.file = file
    }
}

/// An app that comes with Parley (`app-install` without a name).
public struct ShippedAppSummary: Sendable, Codable, Equatable {
    /// Its folder name: what `app-install` takes.
    public var folder: String
    public var name: String
    /// Whether the apps folder has a folder of that name.
    public var installed: Bool
    /// Why it cannot be installed on this machine (its handler's program missing), if it cannot.
    public var problem: String?
    public init(folder: String, name: String, installed: Bool, problem: String? = nil) {
        self.folder = folder
        self.name = name
        self.installed = installed
        self.problem = problem
    }
}

/// An external app's handler as `parley apps status` and the page show it.
public struct ExternalAppStatus: Sendable, Codable, Equatable {
    public var identifier: String
    public var name: String
    /// The app's folder name in the apps folder.
    public var folder: String
    /// "running (pid 123)", "restarting: exited with status 1", "stopped", "off", "not started".
    public var state: String
    /// Restarts after a failure since it was loaded.
    public var restarts: Int
    public var enabled: Bool
    /// The last lines the handler wrote to standard error, oldest first.
    public var stderr: [String]
    public init(identifier: String, name: String, folder: String, state: String, restarts: Int, enabled: Bool, stderr: [String]) {
        self.identifier = identifier
        self.name = name
        self.folder = folder
        self.state = state
        self.restarts = restarts
        self.enabled = enabled
        self.stderr = stderr
    }
}

/// A recording kept for room adaptation (`adaptation.keep_audio`).
public struct KeptRecordingSummary: Sendable, Codable, Equatable {
    /// Its name in the kept folder ("00000012"), what deletes it.
    public var id: String
    public var words: String
    public var seconds: Double
    public var date: Date?
    public init(id: String, words: String, seconds: Double, date: Date?) {
        self.id = id
        self.words = words
        self.seconds = seconds
        self.date = date
    }
}

/// The audio path's health as `parley status` shows it.
public struct AudioStatus: Sendable, Codable, Equatable {
    public var capture: String
    public var playback: String
    /// "running", "recovering", "stopped", "not wired" …
    public var state: String
    public var overruns: Int
    /// Why the microphone delivers nothing, while it does not ("audio device
    /// 'hw:1,0' not found …"); nil when it runs.
    public var problem: String?
    /// Whether the device's words are playing (its cues, the wake tone and
    /// the volume tick, are not): while they do, speech heard is listened
    /// to for "stop" and "cancel" only (with the echo cancelled, also the
    /// wake words and a command).
    /// nil from a daemon that does not say.
    public var speaking: Bool?
    public init(capture: String, playback: String, state: String, overruns: Int, problem: String? = nil,
                speaking: Bool? = nil) {
        self.problem = problem
        self.speaking = speaking
        self.capture = capture
        self.playback = playback
        self.state = state
        self.overruns = overruns
    }
}

/// `parley status`.
public struct DaemonStatus: Sendable, Codable, Equatable {
    public var version: String
    public var pid: Int32
    public var uptimeSeconds: Double
    /// The conversation state ("idle", "listening", "awaiting confirmation" …).
    public var state: String
    public var board: String
    /// What the board's LEDs show now ("muted" while the mute switch is on,
    /// "success" during its flash), which can differ from `state`; nil
    /// when no board is wired.
    public var led: String?
    /// Why the confirmation button cannot be read (no GPIO chip, line busy);
    /// nil when it works or no board is wired.
    public var buttonProblem: String?
    public var configFile: String?
    public var stateDirectory: String
    public var audio: AudioStatus
    public var recognitions: Int
    /// Most recent first: "Soup Chef/OrderSoup".
    public var lastIntents: [String]
    /// Phrases in the current recognition grammar.
    public var grammarSize: Int
    public var donations: Int
    public var customPhrases: Int
    /// Integration points with nothing plugged in ("recogniser", "gpio" …).
    public var notWired: [String]
    /// Confirmed commands whose audio is kept for room adaptation (nil
    /// from an older daemon), and whether keeping is on.
    public var keptRecordings: Int?
    public var keepAudio: Bool?
    /// When the room transform in use was made; nil when none is.
    public var roomTransform: Date?
    /// Home Assistant's link and when audio last left the device and why
    /// (nil when no Home Assistant role is on, or from an older daemon).
    public var homeAssistant: String?
    /// The time zone the daemon's clock times are in ("Europe/Paris"); nil from an older daemon.
    public var timeZone: String?
    /// Home Assistant's `handle` service (role 2): on, who is connected, the
    /// last transcript, and that no audio leaves through it (nil when the
    /// handler is off, or from an older daemon).
    public var homeAssistantHandler: String?
    /// The capture front end in use ("neural (DeepFilterNet3, ...)"), or why
    /// the configured one is not; nil from an older daemon.
    public var frontEnd: String?
    /// The A/B root slots as RAUC reports them (``SlotSummary``); nil on a
    /// machine without RAUC, or from an older daemon.
    public var slots: [SlotSummary]?

    // Spelled out because the daemon, which fills it in, is another module
    // (a memberwise initialiser is internal).
    public init(version: String, pid: Int32, uptimeSeconds: Double, state: String, board: String, led: String? = nil,
                buttonProblem: String? = nil, configFile: String? = nil, stateDirectory: String, audio: AudioStatus,
                recognitions: Int, lastIntents: [String], grammarSize: Int, donations: Int, customPhrases: Int,
                notWired: [String], keptRecordings: Int? = nil, keepAudio: Bool? = nil, roomTransform: Date? = nil,
                homeAssistant: String? = nil, homeAssistantHandler: String? = nil, timeZone: String? = nil,
                frontEnd: String? = nil, slots: [SlotSummary]? = nil) {
        self.slots = slots
        self.frontEnd = frontEnd
        self.timeZone = timeZone
        self.version = version
        self.pid = pid
        self.uptimeSeconds = uptimeSeconds
        self.state = state
        self.board = board
        self.led = led
        self.buttonProblem = buttonProblem
        self.configFile = configFile
        self.stateDirectory = stateDirectory
        self.audio = audio
        self.recognitions = recognitions
        self.lastIntents = lastIntents
        self.grammarSize = grammarSize
        self.donations = donations
        self.customPhrases = customPhrases
        self.notWired = notWired
        self.keptRecordings = keptRecordings
        self.keepAudio = keepAudio
        self.roomTransform = roomTransform
        self.homeAssistant = homeAssistant
        self.homeAssistantHandler = homeAssistantHandler
    }
}

/// A browser paired with the web page, as `parley web tokens` lists it. The
/// token itself is never stored or shown: `id` is the start of its hash.
public struct WebTokenSummary: Sendable, Codable, Equatable {
    public var id: String
    public var created: Date
    public var lastUsed: Date
    /// The browser's own description (User-Agent), shortened.
    public var browser: String
    public init(id: String, created: Date, lastUsed: Date, browser: String) {
        self.id = id
        self.created = created
        self.lastUsed = lastUsed
        self.browser = browser
    }
}

/// What a phrase resolves to, without running it.
public struct PhraseResolution: Sendable, Codable, Equatable {
    /// The words as matched (normalised, wake words and fillers dropped).
    public var phrase: String
    public var matched: Bool
    /// "Soup Chef.OrderSoup", "shortcut Coffee break", "built-in cancel" or "no phrase matches".
    public var target: String
    /// Parameter values the phrase fixes (canonical).
    public var values: [String: String]
    public init(phrase: String, matched: Bool, target: String, values: [String: String]) {
        self.phrase = phrase
        self.matched = matched
        self.target = target
        self.values = values
    }
}

/// The speaker's volume as `parley volume` shows it.
public struct VolumeReport: Sendable, Codable, Equatable {
    /// 0...10, kept while muted.
    public var level: Int
    public var muted: Bool
    /// How the level reaches the speaker: "mixer control 'PCM' on hw:0" or
    /// "software (samples scaled)".
    public var output: String
    public init(level: Int, muted: Bool, output: String) {
        self.level = level
        self.muted = muted
        self.output = output
    }
}

/// A response: `ok` and either `error` or the field for the command.
public struct ControlResponse: Sendable, Codable, Equatable {
    public var ok: Bool
    public var error: String?
    /// A human sentence for commands without data ("Pressed.", "Forgot 3 donations.").
    public var message: String?
    /// `say`: the lines the device spoke in answer.
    public var spoken: [String]?
    public var status: DaemonStatus?
    public var apps: [AppSummary]?
    public var shortcuts: [ShortcutSummary]?
    public var logs: [String]?
    public var donations: [Donation]?
    public var phrases: [CustomPhrase]?
    /// `shortcut-list` and `shortcut-show`: a person's shortcuts.
    public var personalShortcuts: [PersonalShortcut]?
    /// `forget`: how many donations were deleted.
    public var count: Int?
    /// `web-tokens`: the browsers paired with the page.
    public var webTokens: [WebTokenSummary]?
    /// `resolve`: what the words would start.
    public var resolution: PhraseResolution?
    /// `volume`: the level after the change.
    public var volume: VolumeReport?
    /// `app-status`: the external apps.
    public var externalApps: [ExternalAppStatus]?
    /// `kept-list`: the recordings kept for room adaptation, oldest first.
    public var keptRecordings: [KeptRecordingSummary]?
    /// The apps that come with Parley (`app-install` without a name).
    public var shippedApps: [ShippedAppSummary]?

    public init(ok: Bool = true) { self.ok = ok }

    public static func failure(_ message: String) -> ControlResponse {
        var response = ControlResponse(ok: false)
        response.error = message
        return response
    }

    public static func message(_ text: String) -> ControlResponse {
        var response = ControlResponse()
        response.message = text
        return response
    }
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

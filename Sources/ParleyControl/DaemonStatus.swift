import Foundation

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

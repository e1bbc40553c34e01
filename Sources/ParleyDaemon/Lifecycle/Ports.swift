import ParleyAudio
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ServiceLifecycle

// Integration points: what the daemon needs from the conversation engine,
// audio, recogniser, speaker and board. Each module (or a small adapter in
// ParleyDaemon) conforms after the branches are merged; parleyd plugs them
// into ``DaemonComponents``. A port left nil is reported by `parley status`
// under "not wired" and its commands answer that it is missing.

/// The conversation engine (ParleyCore) as the daemon drives it.
public protocol ConversationPort: Sendable {
    /// Handles `text` as if spoken after the wake word, through the same
    /// engine as speech; returns what the device said in answer (up to the
    /// point where it waits for the next input).
    func hear(_ text: String) async throws -> HeardText
    /// A button gesture (confirm, cancel, the double-press action).
    func press(_ press: ButtonPress) async throws
    /// "idle", "listening", "awaiting answer", "awaiting confirmation" …
    func stateDescription() async -> String
    /// The most recently performed intents, newest first ("Soup Chef/OrderSoup").
    func lastIntents() async -> [String]
    /// Ends any open conversation without performing anything (shutdown).
    func cancelAll() async
}

/// The device's answer to text handed to it as if spoken.
public struct HeardText: Sendable, Equatable {
    /// The lines spoken in answer.
    public var spoken: [String]
    /// Why nothing was said, when nothing was ("not understood: …").
    public var note: String?
    public init(spoken: [String], note: String? = nil) {
        self.spoken = spoken
        self.note = note
    }
}

/// What the device knows: apps, their App Shortcut phrases, custom phrases.
public protocol CatalogPort: Sendable {
    func apps() async -> [AppSummary]
    func shortcuts() async -> [ParleyControl.ShortcutSummary]
    /// Validates (app and intent exist, no clash with a known phrase),
    /// stores and makes the phrase recognisable; throws with a spoken-style
    /// reason when refused.
    func addPhrase(_ phrase: CustomPhrase) async throws
    /// Removes a phrase from the store and the grammar; false if unknown.
    func deletePhrase(_ phrase: String) async throws -> Bool
    /// Phrase rules the device understands now (the command grammar's size).
    func grammarSize() async -> Int
}

/// A person's shortcuts (docs/shortcuts.md): the daemon's shortcut folder and the engine.
public protocol ShortcutPort: Sendable {
    func list() async -> [PersonalShortcut]
    /// Runs one by name; what the device said, or nil when there is none by that name or a conversation is open.
    func run(_ name: String) async -> HeardText?
    /// Checks a file and copies it into the folder; its name, or the problems.
    func add(file: String) async throws -> String
    func remove(_ name: String) async -> Bool
    /// Turns a shortcut off (kept, listed, not understood nor triggered) or
    /// on again, durably; false when there is none by that name.
    func setEnabled(_ name: String, enabled: Bool) async throws -> Bool
}

/// Audio capture and playback health.
public protocol AudioPort: Sendable {
    func audioStatus() async -> AudioStatus
}

/// The recogniser's counters.
public protocol RecogniserPort: Sendable {
    /// Utterances recognised since start.
    func recognitions() async -> Int
    /// Phrases in the current grammar.
    func grammarSize() async -> Int
    /// The capture front end in use, or why a configured stage is not
    /// (`parley status`'s "front end" line); nil: nothing to say.
    func frontEndStatus() async -> String?
}

extension RecogniserPort {
    public func frontEndStatus() async -> String? { nil }
}

/// The board (GPIO or simulated): simulated presses go through it so they
/// take the same path as a real button (debounce, LEDs, gesture detection).
public protocol BoardPort: Sendable {
    func simulate(_ press: ButtonPress) async throws
    /// Turns every LED off (shutdown).
    func allOff() async
    /// The state the LEDs show now, as a person sees it: a success or error
    /// flash while it lasts, `muted` while the mute switch is on. This can
    /// differ from the engine's state, which knows neither.
    var ledState: String { get }
    /// Why the confirmation button cannot be read; nil when it works.
    var buttonProblem: String? { get }
}

/// Everything plugged into the daemon. `services` are the long-running
/// parts of the other modules (capture thread, recogniser, speaker, GPIO
/// watcher, timers) run in the same service group as the control socket.
public struct DaemonComponents: Sendable {
    public var conversation: (any ConversationPort)?
    public var catalog: (any CatalogPort)?
    public var audio: (any AudioPort)?
    public var recogniser: (any RecogniserPort)?
    public var board: (any BoardPort)?
    public var shortcuts: (any ShortcutPort)?
    /// The stand-in microphone WAV files are played into (`spool:` capture).
    public var spool: AudioSpool?
    /// Kept confirmed audio and the room transform (`parley adapt`).
    public var room: RoomLearning?
    /// Home Assistant's satellite for `parley status` (nil when off).
    public var homeAssistant: (@Sendable () -> String)?
    /// Home Assistant's handle service for `parley status` (nil when off).
    public var homeAssistantHandler: (@Sendable () -> String)?
    /// The speaker's volume (`parley volume`).
    public var volume: VolumeService?
    /// The apps folder's service: handler states, apps turned off and on.
    public var apps: AppsService?
    /// The microphone's level now (0...32767, `CaptureStatus.level`); nil without a microphone.
    public var microphoneLevel: (@Sendable () -> Int)?
    /// The time zone clock times are in (automations, spoken times).
    public var localTime: LocalTime?
    /// Speech out, whose voice a setting changes without a restart.
    public var speaker: Speaker?
    /// Puts new wake settings (the page's wake word and sensitivity) in use:
    /// listening, `parley say`'s stripping and what Home Assistant is told.
    public var applyWake: (@Sendable (ParleyConfig.Wake) async -> Void)?
    /// Software updates (RAUC): the slots in `parley status`, `parley update`.
    public var updater: Updater?
    public var services: [any Service]

    public init(
        conversation: (any ConversationPort)? = nil, catalog: (any CatalogPort)? = nil,
        audio: (any AudioPort)? = nil, recogniser: (any RecogniserPort)? = nil,
        board: (any BoardPort)? = nil, spool: AudioSpool? = nil, services: [any Service] = [],
        shortcuts: (any ShortcutPort)? = nil, room: RoomLearning? = nil
    ) {
        self.room = room
        self.shortcuts = shortcuts
        self.spool = spool
        self.conversation = conversation
        self.catalog = catalog
        self.audio = audio
        self.recogniser = recogniser
        self.board = board
        self.services = services
    }

    /// Names of the ports with nothing plugged in.
    public var notWired: [String] {
        var names: [String] = []
        if conversation == nil { names.append("conversation") }
        if catalog == nil { names.append("catalog") }
        if audio == nil { names.append("audio") }
        if recogniser == nil { names.append("recogniser") }
        if board == nil { names.append("board") }
        return names
    }
}

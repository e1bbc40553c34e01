import Foundation

/// Everything `/etc/parley/parley.yaml` can set, with defaults that run on a
/// development machine (simulated board, audio from and to files).
/// The YAML keys are given beside each property; see `dist/parley.yaml`.
public struct ParleyConfig: Sendable, Equatable {
    /// `board`: a board name (resolved by ParleyHardware in the board folder,
    /// e.g. "sim", "pi4") or a path to a board file.
    public var board: String = "sim"
    public var audio = Audio()
    public var wake = Wake()
    /// `primary_app`: the app whose phrases need not name it (SPEC 4); none by default.
    public var primaryApp: String?
    public var voice = Voice()
    /// `confirm_by_voice`: intent categories a spoken "yes" may confirm.
    /// `order` and `payment` are refused: a voice alone never spends money.
    public var voiceConfirmableCategories: Set<String> = ["create", "edit", "play", "set", "get", "generic"]
    public var timeouts = Timeouts()
    /// `tips`: "Next time, just say …" after long conversations.
    public var tips: Bool = true
    /// `state_directory`: where the SQLite state lives.
    public var stateDirectory: String = "/var/lib/parley"
    /// `control_socket`: the Unix socket `parley` talks to.
    public var controlSocket: String = "/run/parley/parley.sock"
    /// `control_group`: group owning the socket (members may use `parley`);
    /// nil keeps the daemon's own group.
    public var controlGroup: String?
    /// `log_level`: trace, debug, info, notice, warning, error, critical.
    public var logLevel: String = "info"

    public init() {}

    /// Where audio comes from and goes to.
    public struct Audio: Sendable, Equatable {
        /// `audio.capture`: an ALSA PCM name ("default", "plughw:CARD=seeed2micvoicec")
        /// or `file:<path>` for file mode (relative paths are in the state directory).
        public var capture: AudioEndpoint = .spool("microphone.raw")
        /// `audio.playback`: as `capture`; file mode appends what is spoken.
        public var playback: AudioEndpoint = .file("playback.wav")
        /// `audio.sample_rate`: Hz; PocketSphinx's en-us model wants 16000.
        public var sampleRate: Int = 16_000
        /// `audio.endpoint_silence`: trailing silence that ends a command.
        public var endpointSilence: Duration = .milliseconds(600)
        public init() {}
    }

    /// How the device is woken (SPEC 3).
    public struct Wake: Sendable, Equatable {
        /// `wake.direct`: "Hey" followed at once by a known phrase.
        public var direct: Bool = true
        /// `wake.named`: "Hey <name>", then a window for the phrase.
        public var named: Bool = true
        /// `wake.hey_optional`: the name alone ("computer") also wakes (named mode).
        public var heyOptional: Bool = false
        /// `wake.name`: the device name, lower-case words ("computer").
        public var name: String = "computer"
        /// `wake.sensitivity`: 0 (fewest false wakes) … 1 (fewest missed wakes).
        /// Sets the named wake detector's verification threshold and the
        /// command stage's rejection threshold (see `ListeningPipeline`).
        public var sensitivity: Double = 0.5
        /// `wake.window`: how long after "Hey <name>" a phrase may follow.
        public var window: Duration = .seconds(4)
        public init() {}
    }

    /// The synthesised voice (espeak-ng).
    public struct Voice: Sendable, Equatable {
        /// `voice.name`: an espeak-ng voice ("en-us", "en-gb+f3").
        public var name: String = "en-us"
        /// `voice.rate`: words per minute, 80…450.
        public var rate: Int = 170
        /// `voice.volume`: percent, 0…200.
        public var volume: Int = 100
        public init() {}
    }

    /// Time limits of a conversation.
    public struct Timeouts: Sendable, Equatable {
        /// `timeouts.answer`: how long a question waits for its answer (asked twice).
        public var answer: Duration = .seconds(8)
        /// `timeouts.confirmation`: how long a button confirmation is awaited.
        public var confirmation: Duration = .seconds(15)
        /// `timeouts.perform`: how long an app's perform may take before the
        /// device gives a spoken error.
        public var perform: Duration = .seconds(10)
        public init() {}
    }

    /// Categories that exist (ParleyIntents.IntentCategory's raw values).
    public static let knownCategories: Set<String> = [
        "order", "payment", "create", "edit", "delete", "get", "play", "set", "generic",
    ]
    /// Categories that can never be confirmed by voice.
    public static let moneyCategories: Set<String> = ["order", "payment"]
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// `audio.*` endpoints and the database path, with relative file paths
    /// resolved against the state directory.
    public func resolvedPath(_ path: String) -> String {
        path.hasPrefix("/") ? path : (stateDirectory as NSString).appendingPathComponent(path)
    }

    /// The SQLite file.
    public var databasePath: String { resolvedPath("state.db") }
}

/// An audio device: an ALSA PCM, or a file (read as the microphone, written
/// as the speaker) for development machines and tests.
public enum AudioEndpoint: Sendable, Equatable, CustomStringConvertible {
    case alsa(String)
    /// Capture: a WAV file read once as the microphone. Playback: the WAV
    /// file speech is written to.
    case file(String)
    /// Capture only: a raw spool that stays open; WAV files played into the
    /// running daemon (`parley play`) are appended to it (`AudioSpool`).
    case spool(String)

    /// Parses the config form: `file:<path>`, `spool:<path>` or an ALSA PCM name.
    public init?(configValue: String) {
        let value = configValue.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("file:") {
            let path = String(value.dropFirst(5))
            guard !path.isEmpty else { return nil }
            self = .file(path)
        } else if value.hasPrefix("spool:") {
            let path = String(value.dropFirst(6))
            guard !path.isEmpty else { return nil }
            self = .spool(path)
        } else {
            guard !value.isEmpty, !value.contains(where: \.isWhitespace) else { return nil }
            self = .alsa(value)
        }
    }

    public var description: String {
        switch self {
        case .alsa(let name): name
        case .file(let path): "file:\(path)"
        case .spool(let path): "spool:\(path)"
        }
    }
}

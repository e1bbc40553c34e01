import ParleyAudio
import ParleySpeech
import ParleyStore
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
    /// `primary_app`: the app whose phrases need not name it (docs/spec.md §4); none by default.
    public var primaryApp: String?
    public var voice = Voice()
    /// `speech.acoustic_model`: the commands' model: `stock` (the default:
    /// Debian's en-us model), `adapted` (the model scripts/shipped-model.sh
    /// adapts to commands in kitchen-like noise, installed with the package)
    /// or a PocketSphinx model folder. Stock is the default again because on
    /// 508 recordings of voices the adaptation never heard the adapted model
    /// lost to stock at every noise level (issue 26; BENCHMARKS.md, "Acoustic
    /// model adaptation"): a default must beat stock on new voices.
    public var acousticModel: String = "stock"
    /// `speech.wake_acoustic_model`: the wake word detector's model, the same
    /// choices. Stock by default: the detector's thresholds were tuned on it,
    /// and the adapted model shifts its scores (BENCHMARKS.md, "The wake word
    /// with the adapted model").
    public var wakeAcousticModel: String = "stock"
    /// `speech.front_end`: the capture front end between the microphone and
    /// listening (`none`, `denoise`, `denoise+agc`, optionally with the noise
    /// suppression in dB, `denoise:-25`); BENCHMARKS.md, "Capture front end
    /// (issue 26)". `none` until the measurements show a setting helps.
    public var frontEnd: FrontEndSettings = .none
    /// `speech.front_end: auto` (the default): the board's choice
    /// (`defaultFrontEnd(board:)`) rather than `frontEnd`.
    public var frontEndIsAuto = true
    /// The front end the daemon runs: the board's default unless one was set.
    public var effectiveFrontEnd: FrontEndSettings {
        frontEndIsAuto ? Self.defaultFrontEnd(board: board) : frontEnd
    }

    /// Each board's default front end (BENCHMARKS.md, "Hearing through a
    /// kitchen (issue 49)"): the neural noise suppressor on a Pi 4 and a Pi 5,
    /// whose cores run it within real time. None on a Pi 3, whose Cortex-A53
    /// is estimated to fall behind with it (about 10 times this machine's
    /// per-core cost, a real-time factor of 0.10), and on the simulated
    /// board: a development machine or the QEMU image (software emulation,
    /// too slow for it), and the test suite's dozens of daemons side by side
    /// on 2 cores, where it made listeners fall behind the capture ring.
    public static func defaultFrontEnd(board: String) -> FrontEndSettings {
        switch board {
        case "pi4", "pi5": .neural
        default: .none
        }
    }
    /// `speech.echo_cancel`: whether the capture path cancels the device's
    /// own voice (`off`, `on`, `linear`, optionally with the echo tail in
    /// ms, `on:200`), with what playback plays as the reference; while it is
    /// on, the device also listens for the wake word and a new command
    /// while it speaks. In the simulated room `on` turns 1 of 30 "stop"s
    /// heard over the device's voice into 27 (BENCHMARKS.md, "Echo
    /// cancellation (issue 28)"); while the device is quiet the microphone
    /// passes through it unchanged, so a person speaking to a quiet device
    /// is heard as without it (kitchen noise, 111 recordings: within one or
    /// two of `off` at every SNR). On by default.
    public var echoCancel = EchoSettings(mode: .on)
    /// `speech.ask_unsure`: whether a command the recogniser accepted with
    /// low confidence is asked back ("Did you say: ...?") before it runs
    /// (`AskRule`). In kitchen noise at 6 dB it turns 37 wrong actions of
    /// 111 into 8, at the cost of a question for most commands there and for
    /// 7% in a quiet room
    /// (BENCHMARKS.md, "Asking when unsure (issue 26 item 3)"). On by default.
    public var askUnsure = true
    /// `adaptation`: whether the device learns its room from confirmed commands.
    public var adaptation = Adaptation()
    /// `web`: the speaker's page (see WebConfig.swift).
    public var web = Web()
    /// `update`: RAUC updates, the update folder (UpdateConfig.swift).
    public var update = Update()
    /// `home_assistant`: the Wyoming satellite and handler (HomeAssistantConfig.swift).
    public var homeAssistant = HomeAssistant()
    /// `confirm_by_voice`: intent categories a spoken "yes" may confirm.
    /// `order` and `payment` are refused: a voice alone never spends money.
    public var voiceConfirmableCategories: Set<String> = ["create", "edit", "play", "set", "get", "generic"]
    public var timeouts = Timeouts()
    /// `tips`: "Next time, just say …" after long conversations.
    public var tips: Bool = true
    /// `donations.keep` and `donations.max_entries`: how long and how many
    /// donations the state keeps (the oldest are deleted as new ones come).
    public var donationRetention = DonationRetention()
    /// `state_directory`: where the SQLite state lives.
    public var stateDirectory: String = "/var/lib/parley"
    /// `apps_folder`: the external apps folder (one subfolder per app, each
    /// with a manifest.yaml), watched while the daemon runs. Relative paths
    /// are inside the state directory; the default is `<state directory>/apps`.
    public var appsFolder: String = "apps"
    /// `handler_sandbox`: where external apps' handlers run. `auto` (the
    /// default): in the sandbox when its socket (/run/parley-app.sock, the
    /// package's parley-app.socket) exists, each handler as the system user
    /// parley-app in a cgroup of its own with memory, task and CPU caps;
    /// otherwise started by the daemon itself as its own user. `off`: always
    /// the daemon itself. A path: that socket, and never without it.
    public var handlerSandbox: String = "auto"
    /// `control_socket`: the Unix socket `parley` talks to.
    public var controlSocket: String = "/run/parley/parley.sock"
    /// `control_group`: group owning the socket (members may use `parley`);
    /// nil keeps the daemon's own group.
    public var controlGroup: String?
    /// `log_level`: trace, debug, info, notice, warning, error, critical.
    public var logLevel: String = "info"
    /// The time zone of clock times ("at 7:00" triggers, the nightly
    /// adaptation, the time a shortcut says), a name from /usr/share/zoneinfo;
    /// nil: the system's own (/etc/localtime, TZ).
    public var timeZone: String?

    public init() {}

    /// The device learning its own room and household (issue 15): each
    /// order confirmed with the button is a labelled recording, kept only
    /// when allowed, and `parley adapt` (or the nightly run) estimates an
    /// MLLR transform from them that the recogniser swaps in at once.
    public struct Adaptation: Sendable, Equatable {
        /// `adaptation.keep_audio`: keep the audio of commands confirmed with
        /// the button, under `<state>/adaptation/kept`. Off by default;
        /// "forget my history" and `parley donations forget --all` delete it.
        public var keepAudio = false
        /// `adaptation.max_recordings`: the most kept (the oldest go first).
        public var maxRecordings = 200
        /// `adaptation.nightly`: adapt once a night, at `nightly_at` local
        /// time, when new recordings were kept since the last transform.
        public var nightly = false
        /// `adaptation.nightly_at`: "HH:MM", 24-hour local time.
        public var nightlyAt = TimeOfDay(hour: 3, minute: 30)
        public init() {}
    }

    /// A time of day, "HH:MM".
    public struct TimeOfDay: Sendable, Equatable, CustomStringConvertible {
        public var hour: Int
        public var minute: Int
        public init(hour: Int, minute: Int) { self.hour = hour; self.minute = minute }
        public init?(parsing text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count <= 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
                  (0...23).contains(h), (0...59).contains(m) else { return nil }
            hour = h; minute = m
        }
        public var description: String { String(format: "%02d:%02d", hour, minute) }
    }

    /// Where audio comes from and goes to.
    public struct Audio: Sendable, Equatable {
        /// `audio.capture`: an ALSA PCM name ("default", "plughw:CARD=seeed2micvoicec"),
        /// `spool:<path>` or `file:<path>` (relative paths are in the state
        /// directory). nil: the board file's capture device, or on a simulated
        /// board ``simulatedCapture``.
        public var capture: AudioEndpoint?
        /// `audio.playback`: as `capture` (no spool); file mode appends what
        /// is spoken. nil: the board's, or ``simulatedPlayback``.
        public var playback: AudioEndpoint?
        /// `audio.sample_rate`: Hz of the audio the recogniser gets;
        /// PocketSphinx's en-us model wants 16000.
        public var sampleRate: Int = 16_000
        /// `audio.capture_rate`, `audio.capture_channels`,
        /// `audio.capture_period_frames`, `audio.capture_buffer_frames`: what
        /// an ALSA capture device is asked for (converted to `sampleRate` mono).
        /// 16 kHz mono with 30 ms periods suits a plughw device; a hw device
        /// or a USB microphone may need its native format (48000, 2).
        public var captureFormat = CaptureFormat()
        /// `audio.realtime_priority`: SCHED_FIFO priority of the capture
        /// thread, 0 for none. It must not exceed the unit's LimitRTPRIO
        /// (dist/parleyd.service, 20), or the kernel refuses it.
        public var realtimePriority: Int = 20
        /// `audio.pacing`: how a `file:` capture is read: `realtime` (like a
        /// microphone) or `fast` (as fast as the recogniser takes it).
        public var pacing: FilePacing = .realtime
        /// `audio.endpoint_silence`: trailing silence that ends a command.
        public var endpointSilence: Duration = .milliseconds(600)
        /// `audio.complete_phrase_silence`: the pause that ends a command
        /// nothing in the grammar can extend (phrase-complete endpointing);
        /// 0, or not below `endpointSilence`, turns it off.
        public var completePhraseSilence: Duration = .milliseconds(UtteranceListening().completePhraseSilenceMilliseconds)
        public init() {}

        /// The stand-in microphone of a simulated board: a spool `parley
        /// play` plays recordings into.
        public static let simulatedCapture = AudioEndpoint.spool("microphone.raw")
        /// Where a simulated board's speech goes.
        public static let simulatedPlayback = AudioEndpoint.file("playback.wav")
    }

    /// What an ALSA capture device is asked for.
    public struct CaptureFormat: Sendable, Equatable {
        public var rate = PCMFormat.microphone.sampleRate
        public var channels = PCMFormat.microphone.channels
        public var periodFrames = PCMFormat.microphone.periodFrames
        public var bufferFrames = PCMFormat.microphone.bufferFrames
        public init() {}
    }

    /// `audio.pacing`.
    public enum FilePacing: String, Sendable, Equatable, CaseIterable {
        /// One second of audio per second, like a microphone.
        case realtime
        /// As fast as ALSA's file plugin delivers it.
        case fast
    }

    /// How the device is woken (docs/spec.md §3).
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
        /// `wake.hey_gate`: in direct mode the command decoders start only
        /// once a speech_embedding head heard "hey" (or the name), so talk
        /// that runs on (a television) is not decoded (`HeyGatedWake`). On by
        /// default since a "hey" its head misses no longer loses the command:
        /// a short utterance it never opened on is decoded at its end
        /// (`WakeGate.AtEnd.decodedWhenShort`); the head learnt "hey" from
        /// synthetic voices only (no recording of a person saying it exists here).
        public var heyGate: Bool = true
        /// `wake.detector`: what hears the name in named mode.
        public var detector: WakeDetectorKind = .embedding
        public init() {}
    }

    /// `wake.detector`'s values.
    public enum WakeDetectorKind: String, Sendable, Equatable, CaseIterable {
        /// A head over Google's speech_embedding (model/wake/<name>.embedding.json,
        /// training/parley_training); a name without one falls back to network.
        case embedding
        /// The keyword network trained for the name (model/wake/<name>.json,
        /// training/parley_training/kws.py); a name without one falls back to pocketsphinx.
        case network
        /// PocketSphinx's keyphrase search, verified against a phone loop.
        case pocketsphinx
    }

    /// The synthesised voice (espeak-ng).
    public struct Voice: Sendable, Equatable {
        /// `voice.name`: an espeak-ng voice ("en-us", "en-gb+f3").
        public var name: String = "en-us"
        /// `voice.rate`: words per minute, 80…450.
        public var rate: Int = 170
        /// `voice.volume`: percent, 0…200 (espeak-ng's own loudness of the voice;
        /// the speaker's level is `parley volume`, kept in the state store).
        public var volume: Int = 100
        /// `voice.alarm_floor`: the lowest level 0…10 a timer alarm plays at,
        /// whatever the volume and even muted, so an alarm is never silent.
        public var alarmFloor: Int = 4
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

    /// The handler sandbox's socket to use, or nil (``handlerSandbox``):
    /// `auto` looks for the package's socket now.
    public func handlerSandboxSocket(defaultSocket: String, exists: (String) -> Bool = { path in
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }) -> String? {
        switch handlerSandbox {
        case "off": nil
        case "auto": exists(defaultSocket) ? defaultSocket : nil
        default: handlerSandbox
        }
    }

    /// The external apps folder, resolved.
    public var appsFolderPath: String { resolvedPath(appsFolder) }
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

extension ParleyConfig.Wake {
    /// The wake policy these settings choose (ParleySpeech owns it).
    public var grammar: WakeGrammar {
        WakeGrammar(name: name, direct: direct, named: named, heyOptional: heyOptional)
    }
}

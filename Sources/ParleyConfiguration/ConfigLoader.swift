import Foundation
import ParleyAudio
import ParleySpeech
import ParleyStore
import ParleyYAML

/// Reads `parley.yaml`. Every key is checked: unknown keys, wrong types and
/// impossible values are refused with the file, line, key and reason, so a
/// typo never silently falls back to a default.
public enum ConfigLoader {
    public static let defaultPath = "/etc/parley/parley.yaml"
    public static let environmentVariable = "PARLEY_CONFIG"

    /// Which file to read: `--config`, else `$PARLEY_CONFIG`, else the default.
    /// Only the default may be missing (then the defaults apply).
    public static func location(flag: String?, environment: [String: String]) -> (path: String, required: Bool) {
        if let flag, !flag.isEmpty { return (flag, true) }
        if let env = environment[environmentVariable], !env.isEmpty { return (env, true) }
        return (defaultPath, false)
    }

    /// Loads the configuration the daemon starts with; `source` is the file
    /// read, or nil when the default file is absent and the defaults apply.
    /// `stateDirectory`: the one the daemon runs with, when not the file's
    /// (`parleyd --state-directory`): the page's settings are read from it.
    public static func load(
        flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment, stateDirectory: String? = nil
    ) throws -> (config: ParleyConfig, source: String?) {
        let (path, required) = location(flag: flag, environment: environment)
        if !required && !FileManager.default.fileExists(atPath: path) { return (ParleyConfig(), nil) }
        return (try load(contentsOf: path, stateDirectory: stateDirectory), path)
    }

    /// The file at `path` with the page's settings (``SettingsOverlay``, in
    /// `stateDirectory`, else the file's `state_directory`) laid over it.
    public static func load(contentsOf path: String, stateDirectory: String? = nil) throws -> ParleyConfig {
        let text = try read(path)
        let config = try parse(text, file: path)
        return try SettingsOverlay.laidOver(text, file: path, config: config, stateDirectory: stateDirectory ?? config.stateDirectory)
    }

    /// Parses YAML text; `file` names it in errors.
    public static func parse(_ yaml: String, file: String) throws -> ParleyConfig {
        let root: YAMLNode?
        do {
            root = try YAMLDocument.parse(yaml, file: file, limits: .configuration)
        } catch {
            throw ConfigError(error)
        }
        var config = ParleyConfig()
        guard let root, !root.isNull else { return config }  // an empty file: all defaults
        let document = Field(node: root)
        try document.forEachEntry(of: [
            "board", "audio", "wake", "primary_app", "voice", "speech", "confirm_by_voice", "timeouts", "tips",
            "donations", "adaptation", "state_directory", "apps_folder", "handler_sandbox", "control_socket", "control_group",
            "log_level", "web", "home_assistant", "time_zone", "update",
        ]) { key, field in
            switch key {
            case "board": config.board = try field.name()
            case "audio": try readAudio(field, into: &config.audio)
            case "wake": try readWake(field, into: &config.wake)
            case "primary_app": config.primaryApp = try field.optionalString()
            case "voice": try readVoice(field, into: &config.voice)
            case "speech": try readSpeech(field, into: &config)
            case "confirm_by_voice": config.voiceConfirmableCategories = try readCategories(field)
            case "timeouts": try readTimeouts(field, into: &config.timeouts)
            case "tips": config.tips = try field.bool()
            case "donations": try readDonations(field, into: &config.donationRetention)
            case "adaptation": try readAdaptation(field, into: &config.adaptation)
            case "web": try readWeb(field, into: &config.web)
            case "update": try readUpdate(field, into: &config.update)
            case "home_assistant": try readHomeAssistant(field, into: &config.homeAssistant)
            case "state_directory": config.stateDirectory = try field.absolutePath()
            case "apps_folder": config.appsFolder = try field.string()
            case "handler_sandbox":
                let value = try field.string()
                guard value == "auto" || value == "off" || value.hasPrefix("/") else {
                    throw field.impossible("\"\(value)\" is not auto, off or the absolute path of the sandbox's socket")
                }
                config.handlerSandbox = value
            case "control_socket": config.controlSocket = try field.absolutePath()
            case "control_group": config.controlGroup = try field.optionalString()
            case "log_level":
                config.logLevel = try field.oneOf(ParleyConfig.logLevels)
            case "time_zone":
                let name = try field.string()
                if let problem = timeZoneProblem(name) { throw field.impossible(problem) }
                config.timeZone = name
            default: throw field.unknownKey()
            }
        }
        return config
    }

    /// Where the system keeps its time zones: a name is one of its files.
    public static let zoneinfo = "/usr/share/zoneinfo"

    /// Why `name` is not a time zone of the system (nil when it is one):
    /// it must name a zone file under /usr/share/zoneinfo ("Europe/Paris",
    /// "UTC"), not a folder, not a path, and Foundation must know it too.
    public static func timeZoneProblem(_ name: String, zoneinfo: String = zoneinfo) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        let wellFormed = !name.isEmpty && name.count <= 64 && parts.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_+-".contains($0)) }
        }
        var isDirectory: ObjCBool = false
        guard wellFormed,
              FileManager.default.fileExists(atPath: zoneinfo + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue,
              TimeZone(identifier: name) != nil
        else {
            return "\"\(name.prefix(64))\" is not a time zone of this system (a name from \(zoneinfo), such as Europe/Paris, America/New_York or UTC)"
        }
        return nil
    }

    private static func readAudio(_ section: Field, into audio: inout ParleyConfig.Audio) throws {
        // Checked against each other once the section is read, each error at
        // the line of the key that has to change.
        var pacingField: Field?, formatFields: [Field] = []
        var periodField: Field?, bufferField: Field?
        try section.forEachEntry(of: [
            "capture", "playback", "sample_rate", "capture_rate", "capture_channels", "capture_period_frames",
            "capture_buffer_frames", "realtime_priority", "pacing", "endpoint_silence",
            "complete_phrase_silence",
        ]) { key, field in
            switch key {
            case "capture":
                audio.capture = try field.audioEndpoint()
            case "playback":
                audio.playback = try field.audioEndpoint()
                if case .spool = audio.playback { throw field.impossible("spool: is a capture source; playback takes an ALSA device or file:<path>") }
            case "sample_rate": audio.sampleRate = try field.int(in: 8_000...48_000)
            case "capture_rate":
                audio.captureFormat.rate = try field.int(in: 8_000...192_000)
                formatFields.append(field)
            case "capture_channels":
                audio.captureFormat.channels = try field.int(in: 1...8)
                formatFields.append(field)
            case "capture_period_frames":
                audio.captureFormat.periodFrames = try field.int(in: 16...16_384)
                formatFields.append(field)
                periodField = field
            case "capture_buffer_frames":
                audio.captureFormat.bufferFrames = try field.int(in: 32...262_144)
                formatFields.append(field)
                bufferField = field
            case "realtime_priority": audio.realtimePriority = try field.int(in: 0...99)
            case "pacing":
                let value = try field.oneOf(ParleyConfig.FilePacing.allCases.map(\.rawValue))
                audio.pacing = ParleyConfig.FilePacing(rawValue: value) ?? .realtime
                pacingField = field
            case "endpoint_silence": audio.endpointSilence = try field.duration(in: .milliseconds(100)...(.seconds(5)))
            case "complete_phrase_silence": audio.completePhraseSilence = try field.duration(in: .zero...(.seconds(5)))
            default: throw field.unknownKey()
            }
        }
        let format = audio.captureFormat
        if format.bufferFrames < 2 * format.periodFrames, let field = bufferField ?? periodField {
            throw field.impossible("""
                a capture buffer of \(format.bufferFrames) frames holds less than two periods of \(format.periodFrames) \
                (capture_buffer_frames must be at least \(2 * format.periodFrames))
                """)
        }
        switch audio.capture {
        case .file?:
            break
        case .spool?:
            if let field = formatFields.first {
                throw field.impossible("the capture format is an ALSA device's; a spool: capture is always 16 kHz mono")
            }
            fallthrough
        default:
            if audio.pacing == .fast, let field = pacingField {
                let capture = audio.capture?.description ?? "not set (the board's microphone)"
                throw field.impossible("fast pacing is for a file:<path> capture; audio.capture is \(capture)")
            }
        }
        if case .file? = audio.capture, let field = formatFields.first {
            throw field.impossible("the capture format is an ALSA device's; a file: capture has the WAV file's format")
        }
    }

    private static func readWake(_ section: Field, into wake: inout ParleyConfig.Wake) throws {
        try section.forEachEntry(of: ["direct", "named", "hey_optional", "name", "sensitivity", "window", "detector", "hey_gate"]) { key, field in
            switch key {
            case "direct": wake.direct = try field.bool()
            case "named": wake.named = try field.bool()
            case "hey_optional": wake.heyOptional = try field.bool()
            case "hey_gate": wake.heyGate = try field.bool()
            case "name":
                let name = try field.string().lowercased()
                let words = name.split(separator: " ")
                guard !words.isEmpty, words.count <= 3, words.allSatisfy({ $0.allSatisfy { $0.isLetter || $0 == "'" } })
                else { throw field.impossible("\"\(name)\" is not one to three words of letters") }
                wake.name = words.joined(separator: " ")
            case "sensitivity": wake.sensitivity = try field.double(in: 0...1)
            case "window": wake.window = try field.duration(in: .milliseconds(500)...(.seconds(30)))
            case "detector":
                let value = try field.string()
                guard let kind = ParleyConfig.WakeDetectorKind(rawValue: value) else {
                    throw field.impossible("\"\(value)\" is not a wake detector: expected \(ParleyConfig.WakeDetectorKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                wake.detector = kind
            default: throw field.unknownKey()
            }
        }
        if !wake.direct && !wake.named {
            throw section.impossible("wake.direct and wake.named are both false: the device could never be woken by voice")
        }
    }

    private static func readVoice(_ section: Field, into voice: inout ParleyConfig.Voice) throws {
        try section.forEachEntry(of: ["name", "rate", "volume", "alarm_floor"]) { key, field in
            switch key {
            case "name": voice.name = try field.name()
            case "rate": voice.rate = try field.int(in: 80...450)
            case "volume": voice.volume = try field.int(in: 0...200)
            case "alarm_floor": voice.alarmFloor = try field.int(in: 1...10)
            default: throw field.unknownKey()
            }
        }
    }

    private static func readSpeech(_ section: Field, into config: inout ParleyConfig) throws {
        try section.forEachEntry(of: ["acoustic_model", "wake_acoustic_model", "front_end", "echo_cancel", "ask_unsure"]) { key, field in
            switch key {
            case "acoustic_model": config.acousticModel = try acousticModel(field)
            case "wake_acoustic_model": config.wakeAcousticModel = try acousticModel(field)
            case "front_end":
                let value = try field.string()
                config.frontEndIsAuto = value == "auto"
                if !config.frontEndIsAuto {
                    do { config.frontEnd = try FrontEndSettings(parsing: value) } catch { throw field.impossible("\(error) (or auto, the board's default)") }
                }
            case "echo_cancel":
                // YAML reads a bare on/off as a boolean: either spelling is taken.
                let value: String
                if let flag = try? field.bool() { value = flag ? "on" : "off" } else { value = try field.string() }
                do { config.echoCancel = try EchoSettings(parsing: value) } catch { throw field.impossible("\(error)") }
            case "ask_unsure": config.askUnsure = try field.bool()
            default: throw field.unknownKey()
            }
        }
    }

    private static func acousticModel(_ field: Field) throws -> String {
        let value = try field.name()
        do { _ = try AcousticModel(parsing: value) } catch {
            throw field.impossible("\(value) is not a model: expected adapted, stock or a PocketSphinx model folder holding mdef")
        }
        return value
    }

    private static func readTimeouts(_ section: Field, into timeouts: inout ParleyConfig.Timeouts) throws {
        try section.forEachEntry(of: ["answer", "confirmation", "perform"]) { key, field in
            switch key {
            case "answer": timeouts.answer = try field.duration(in: .seconds(1)...(.seconds(120)))
            case "confirmation": timeouts.confirmation = try field.duration(in: .seconds(1)...(.seconds(300)))
            case "perform": timeouts.perform = try field.duration(in: .milliseconds(100)...(.seconds(600)))
            default: throw field.unknownKey()
            }
        }
    }

    private static func readDonations(_ section: Field, into retention: inout DonationRetention) throws {
        try section.forEachEntry(of: ["keep", "max_entries"]) { key, field in
            switch key {
            case "keep": retention.maximumAge = try field.duration(in: .seconds(86_400)...(.seconds(3650 * 86_400)))
            case "max_entries": retention.maximumCount = try field.int(in: 100...1_000_000)
            default: throw field.unknownKey()
            }
        }
    }

    private static func readAdaptation(_ section: Field, into adaptation: inout ParleyConfig.Adaptation) throws {
        try section.forEachEntry(of: ["keep_audio", "max_recordings", "nightly", "nightly_at"]) { key, field in
            switch key {
            case "keep_audio": adaptation.keepAudio = try field.bool()
            case "max_recordings": adaptation.maxRecordings = try field.int(in: 5...10_000)
            case "nightly": adaptation.nightly = try field.bool()
            case "nightly_at":
                let text = try field.string()
                guard let time = ParleyConfig.TimeOfDay(parsing: text) else {
                    throw field.impossible("\(text) is not a time of day: expected HH:MM, 24-hour, such as 03:30")
                }
                adaptation.nightlyAt = time
            default: throw field.unknownKey()
            }
        }
    }

    private static func readCategories(_ field: Field) throws -> Set<String> {
        var result: Set<String> = []
        for item in try field.sequence() {
            let category = try item.oneOf(ParleyConfig.knownCategories.sorted())
            if ParleyConfig.moneyCategories.contains(category) {
                throw item.impossible("\(category) can never be confirmed by voice alone; it needs the button")
            }
            result.insert(category)
        }
        return result
    }
}

extension ConfigError {
    /// ParleyYAML's error as a configuration error: the same file, place and
    /// dotted key; its kind from what went wrong.
    init(_ error: YAMLError) {
        let kind: Kind
        var reason = error.message
        switch error.problem {
        case .syntax(let why): kind = .syntax; reason = why
        case .unknownKey: kind = .unknownKey
        case .wrongType: kind = .wrongType
        case .missingKey, .invalidValue, .other: kind = .impossibleValue
        case .refused: kind = .refused
        }
        let line = error.location.line, column = error.location.column
        self.init(kind, file: error.location.file, line: line, column: column, key: error.path, reason: reason)
    }
}

/// One value of the document: a ParleyYAML node (its file, position and
/// dotted key, e.g. `voice.rate`), with the reads of parley.yaml's value
/// kinds, each failing with a `ConfigError`.
struct Field {
    let node: YAMLNode

    var key: String { node.path }

    func error(_ kind: ConfigError.Kind, _ reason: String) -> ConfigError {
        ConfigError(kind, file: node.file, line: node.location.line, column: node.location.column, key: key, reason: reason)
    }

    func unknownKey(suggesting key: String? = nil) -> ConfigError {
        error(.unknownKey, "not a Parley setting (see dist/parley.yaml)" + (key.map { "; did you mean '\($0)'?" } ?? ""))
    }
    func impossible(_ reason: String) -> ConfigError { error(.impossibleValue, reason) }
    private func wrongType(_ expected: String) -> ConfigError { ConfigError(node.wrongType(expected)) }

    /// A read of ParleyYAML, its error as a `ConfigError`.
    private func read<T>(_ body: () throws(YAMLError) -> T) throws -> T {
        do { return try body() } catch { throw ConfigError(error) }
    }

    /// Calls `body` for each key of a mapping, in file order; the field
    /// passed on carries the value node and the dotted key, positioned at the
    /// value (or at its key when the value is empty and has no position). A
    /// key not in `keys` is refused there, with the closest one if any.
    func forEachEntry(of keys: [String], _ body: (String, Field) throws -> Void) throws {
        let mapping = try read { () throws(YAMLError) in try node.mapping("a mapping of settings") }
        for (keyNode, value) in mapping.entries {
            guard let name = keyNode.text else { throw ConfigError(keyNode.wrongType("a key name")) }
            let field = Field(node: value)
            guard keys.contains(name) else { throw field.unknownKey(suggesting: closestKey(to: name, among: keys)) }
            try body(name, field)
        }
    }

    func sequence() throws -> [Field] {
        try read { () throws(YAMLError) in try node.list() }.map(Field.init)
    }

    func string() throws -> String {
        guard !node.isNull else { throw wrongType("a text value") }
        return try read { () throws(YAMLError) in try node.string() }
    }

    func optionalString() throws -> String? {
        if node.isNull { return nil }
        let value = try string()
        return value.isEmpty ? nil : value
    }

    /// A name without spaces or slashes issues (board, voice).
    func name() throws -> String {
        let value = try string()
        guard !value.isEmpty, !value.contains(where: \.isWhitespace) else {
            throw impossible("\"\(value)\" is empty or contains spaces")
        }
        return value
    }

    func absolutePath() throws -> String {
        let value = try string()
        guard value.hasPrefix("/") else { throw impossible("\"\(value)\" is not an absolute path") }
        return value
    }

    func bool() throws -> Bool { try read { () throws(YAMLError) in try node.bool() } }

    /// Parley's ranges read "80…450" in messages.
    func int(in range: ClosedRange<Int>) throws -> Int {
        let value = try read { () throws(YAMLError) in try node.int(in: Int.min...Int.max) }
        guard range.contains(value) else { throw impossible("\(value) is not in \(range.lowerBound)…\(range.upperBound)") }
        return value
    }

    func double(in range: ClosedRange<Double>) throws -> Double {
        let value = try read { () throws(YAMLError) in try node.double(in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) }
        guard range.contains(value) else { throw impossible("\(value) is not in \(range.lowerBound)…\(range.upperBound)") }
        return value
    }

    /// A duration: a number of seconds (`8`, `0.6`) or a number with a unit
    /// (`600ms`, `8s`, `2min`, `12h`, `90d`).
    func duration(in range: ClosedRange<Duration>) throws -> Duration {
        guard let written = node.text, !node.isNull else { throw wrongType("a duration such as 8s or 600ms") }
        let text = written.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("h", 3600), ("d", 86_400)]
        var seconds: Double?
        if let plain = Double(text) {
            seconds = plain
        } else if let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) }),
            let number = Double(text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces))
        {
            seconds = number * factor
        }
        guard let seconds, seconds.isFinite else { throw wrongType("a duration such as 8s or 600ms") }
        // Range-checked in seconds first: converting 1e300 s to whole
        // milliseconds would trap (`timeouts.answer: 1e300` stopped the daemon).
        let bounds = Double(range.lowerBound.components.seconds)...Double(range.upperBound.components.seconds + 1)
        let value = bounds.contains(seconds) ? Duration.milliseconds(Int64((seconds * 1000).rounded())) : nil
        guard let value, range.contains(value) else {
            throw impossible("\(text) is not between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound))")
        }
        return value
    }

    func oneOf(_ allowed: [String]) throws -> String {
        let value = try string()
        guard allowed.contains(value) else {
            throw impossible("\"\(value)\" is not one of \(allowed.joined(separator: ", "))")
        }
        return value
    }

    func audioEndpoint() throws -> AudioEndpoint {
        let value = try string()
        guard let endpoint = AudioEndpoint(configValue: value) else {
            throw impossible("\"\(value)\" is neither an ALSA device name, file:<path> nor spool:<path>")
        }
        return endpoint
    }

    static func format(_ duration: Duration) -> String {
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if ms % 86_400_000 == 0 { return "\(ms / 86_400_000)d" }
        return ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
    }
}

/// The PocketSphinx options Parley tunes, turned into the argv the library
/// parses (cmd_ln_parse_r). Defaults are the tuned values; see BENCHMARKS.md
/// "Recognition and speech out" for what each one bought.
public struct DecoderSettings: Sendable, Hashable {
    /// Acoustic model folder (-hmm): Debian's stock en-us model unless the
    /// daemon's `speech.acoustic_model` chose another
    /// (``AcousticModel/configuredDefault``; ``wake()`` for the wake word's).
    public var acousticModel = AcousticModel.configuredDefault.folder
    /// An MLLR transform (-mllr, from `mllr_solve`) applied to the model's
    /// means when the decoder starts; nil for none.
    public var mllrTransform: String? = nil
    /// The household's ``RoomTransform`` this decoder applies (the daemon's
    /// command and dictation decoders); nil for none (the wake detector, and
    /// every decoder of a tool or test that gives it none).
    public var room: RoomTransform.Slot? = nil
    /// Pronouncing dictionary (-dict). The decoder is given a reduced copy
    /// with only the words in use; this is the source.
    public var dictionary = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
    public var beam = 1e-80
    public var wordBeam = 1e-50
    public var phoneBeam = 1e-80
    public var maxHMMsPerFrame = -1
    public var downsampling = 1
    /// -ds of the rejection's phone loop when it runs as a decoder of its
    /// own (`StreamingCommandDecoder`); nil: `downsampling`.
    public var loopDownsampling: Int? = nil
    public var topN = 4
    public var languageWeight = 3.0
    public var phoneLookahead = 5
    public var cmnInit: String? = nil
    public var removeNoise = true
    public var removeSilence = true
    public var keywordThreshold = 1e-20
    /// Extra raw options, e.g. ["-fsgusefiller", "no"].
    public var extra: [String] = []

    public init() {}

    /// The wake word detector's settings: the model
    /// ``AcousticModel/configuredWakeDefault`` names.
    public static func wake() -> DecoderSettings {
        var s = DecoderSettings()
        s.acousticModel = AcousticModel.configuredWakeDefault.folder
        return s
    }

    /// The naive configuration the baseline used (library defaults).
    public static var libraryDefaults: DecoderSettings {
        var s = DecoderSettings()
        s.beam = 1e-48; s.wordBeam = 7e-29; s.phoneBeam = 1e-48
        s.maxHMMsPerFrame = 30000; s.downsampling = 1; s.topN = 4
        s.languageWeight = 6.5; s.phoneLookahead = 5; s.cmnInit = nil
        return s
    }

    func arguments(dictionaryPath: String) -> [String] {
        var a = [
            "-hmm", acousticModel, "-dict", dictionaryPath,
            "-beam", "\(beam)", "-wbeam", "\(wordBeam)", "-pbeam", "\(phoneBeam)",
            "-maxhmmpf", "\(maxHMMsPerFrame)", "-ds", "\(downsampling)", "-topn", "\(topN)",
            "-lw", "\(languageWeight)", "-pl_window", "\(phoneLookahead)",
            "-remove_noise", removeNoise ? "yes" : "no",
            "-remove_silence", removeSilence ? "yes" : "no",
            "-kws_threshold", "\(keywordThreshold)",
            "-logfn", "/dev/null",
        ]
        if let cmnInit { a += ["-cmninit", cmnInit] }
        if let mllrTransform { a += ["-mllr", mllrTransform] }
        return a + extra
    }

    /// Applies "name=value" overrides (from benchmarks and the command line).
    public mutating func apply(_ assignment: String) throws {
        let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            throw SpeechError.badSetting(name: assignment, value: "", expected: "name=value")
        }
        let (name, value) = (parts[0], parts[1])
        func double() throws -> Double {
            guard let d = Double(value) else { throw SpeechError.badSetting(name: name, value: value, expected: "a number") }
            return d
        }
        func int() throws -> Int {
            guard let d = Int(value) else { throw SpeechError.badSetting(name: name, value: value, expected: "an integer") }
            return d
        }
        func bool() throws -> Bool {
            switch value { case "yes", "true", "1": return true
            case "no", "false", "0": return false
            default: throw SpeechError.badSetting(name: name, value: value, expected: "yes or no") }
        }
        switch name {
        case "beam": beam = try double()
        case "wbeam": wordBeam = try double()
        case "pbeam": phoneBeam = try double()
        case "maxhmmpf": maxHMMsPerFrame = try int()
        case "ds": downsampling = try int()
        case "loop_ds": loopDownsampling = try int()
        case "topn": topN = try int()
        case "lw": languageWeight = try double()
        case "pl_window": phoneLookahead = try int()
        case "cmninit": cmnInit = value
        case "remove_noise": removeNoise = try bool()
        case "remove_silence": removeSilence = try bool()
        case "kws_threshold": keywordThreshold = try double()
        case "hmm", "acoustic_model": acousticModel = try AcousticModel(parsing: value).folder
        case "mllr": mllrTransform = value
        default: extra += ["-" + name, value]
        }
    }
}

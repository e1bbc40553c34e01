/// How the capture front end treats the signal before the endpointer and
/// the recogniser see it (`speech.front_end`, `parley understand
/// --front-end`). A denoiser can hurt a recogniser, so `none` stays
/// possible (and is the default until measurements say otherwise).
public struct FrontEndSettings: Sendable, Equatable, CustomStringConvertible {
    public enum Mode: String, Sendable, CaseIterable {
        /// The signal as captured; no stage runs.
        case none
        /// speexdsp's spectral noise suppression.
        case denoise
        /// Noise suppression and automatic gain control.
        case denoiseAGC = "denoise+agc"
        /// DeepFilterNet3, a neural noise suppressor, on what the command
        /// decoders hear (ParleyDenoise): from an utterance's start, lead-in
        /// included, and in named mode only after the wake word; never on
        /// idle audio, so the speexdsp stage does not run in this mode.
        case neural
    }

    public var mode: Mode
    /// Maximum attenuation of noise in dB (negative; speexdsp's default is -15).
    public var noiseSuppressDecibels: Int
    /// The level automatic gain aims for, in Int16 units (speexdsp's default 8000).
    public var agcLevel: Float
    /// Most gain automatic gain may apply, in dB (speexdsp's default 30).
    public var agcMaxGainDecibels: Int

    public init(mode: Mode = .none, noiseSuppressDecibels: Int = -15, agcLevel: Float = 8_000,
                agcMaxGainDecibels: Int = 30) {
        self.mode = mode
        self.noiseSuppressDecibels = noiseSuppressDecibels
        self.agcLevel = agcLevel
        self.agcMaxGainDecibels = agcMaxGainDecibels
    }

    public static let none = FrontEndSettings()
    /// The neural stage as trained (no attenuation limit): `neural`.
    public static let neural = FrontEndSettings(mode: .neural, noiseSuppressDecibels: defaultDecibels(.neural))

    /// Whether the speexdsp stage runs on every captured frame.
    public var isActive: Bool { mode == .denoise || mode == .denoiseAGC }
    /// Whether the neural stage runs on utterances.
    public var isNeural: Bool { mode == .neural }

    /// Reads `none`, `denoise`, `denoise+agc`, `neural`, optionally with the
    /// suppression in dB after a colon (`denoise:-25`, `denoise+agc:-20`;
    /// for `neural`, the network's attenuation limit, -100 for none).
    /// The error names the value and what is expected.
    public init(parsing text: String) throws(FrontEndError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let mode = Mode(rawValue: parts[0].trimmingCharacters()) else {
            throw .invalidSetting(value: text, expected: Self.expected)
        }
        self.init(mode: mode, noiseSuppressDecibels: Self.defaultDecibels(mode))
        if parts.count == 2 {
            let range = mode == .neural ? -100...0 : -60...0
            guard mode != .none, let decibels = Int(parts[1].trimmingCharacters()), range.contains(decibels) else {
                throw .invalidSetting(value: text, expected: Self.expected)
            }
            noiseSuppressDecibels = decibels
        }
    }

    static let expected =
        "none, denoise, denoise+agc or neural, optionally followed by the noise suppression in dB from -100 to 0 (e.g. denoise:-25, neural:-30)"

    /// speexdsp's default suppression; the network unlimited (as trained).
    public static func defaultDecibels(_ mode: Mode) -> Int { mode == .neural ? -100 : -15 }

    public var description: String {
        mode == .none || noiseSuppressDecibels == Self.defaultDecibels(mode) ? mode.rawValue : "\(mode.rawValue):\(noiseSuppressDecibels)"
    }
}

extension String {
    fileprivate func trimmingCharacters() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

/// Why the front end could not be set up.
public enum FrontEndError: Error, Equatable, CustomStringConvertible {
    /// A setting that is not one of the known ones.
    case invalidSetting(value: String, expected: String)
    /// speexdsp refused to create its state (frame size or rate it cannot take).
    case initFailed(frameSize: Int, sampleRate: Int)
    /// speexdsp refused a control request.
    case controlRefused(request: String, value: String)

    public var description: String {
        switch self {
        case .invalidSetting(let value, let expected):
            "front end '\(value)' is not valid: expected \(expected)"
        case .initFailed(let frameSize, let sampleRate):
            "speexdsp could not create a preprocessor for \(frameSize)-sample frames at \(sampleRate) Hz"
        case .controlRefused(let request, let value):
            "speexdsp refused \(request) = \(value)"
        }
    }
}

/// The capture front end: speexdsp's preprocessor run on 16 kHz mono Int16
/// frames in place, between capture and the listening driver. Real-time
/// safe: the speexdsp state is created at init, and `process` allocates,
/// locks and blocks nothing (the malloc-counting test proves it).
///
/// The echo canceller (`EchoCanceller`, `speech.echo_cancel`) runs on the
/// same frames before it, with a preprocessor of its own linked to its
/// state for the residual echo (`FrontEndSource` runs both).
///
/// Not thread-safe: one thread (the listen thread, or a tool's) owns it.
public final class FrontEnd {
    /// 10 ms at 16 kHz: speexdsp's FFT works best on 10-20 ms frames.
    public static let frameSamples = 160
    public static let sampleRate = 16_000

    public let settings: FrontEndSettings
    private let speex: SpeexFunctions
    private let state: OpaquePointer
    /// The first frame, run once before it is processed for real: the
    /// preprocessor hands each frame out a frame late (its overlap-add), so
    /// its very first output would be 10 ms of near silence, from which the
    /// endpointer learns a noise floor of zero and takes a noisy room for
    /// speech (kitchen noise through `parley understand`: segments from
    /// 0 s, several recordings misheard). Primed, the first frame is handed
    /// out twice instead. Allocated at init.
    private let primer = UnsafeMutablePointer<Int16>.allocate(capacity: FrontEnd.frameSamples)

    /// Frames processed so far.
    public private(set) var frames = 0

    /// nil for `none`: no stage runs.
    public convenience init?(_ settings: FrontEndSettings) throws(FrontEndError) {
        guard settings.isActive else { return nil }
        try self.init(settings: settings, speex: .system)
    }

    init(settings: FrontEndSettings, speex: SpeexFunctions) throws(FrontEndError) {
        guard let state = speex.preprocessInit(Int32(Self.frameSamples), Int32(Self.sampleRate)) else {
            throw .initFailed(frameSize: Self.frameSamples, sampleRate: Self.sampleRate)
        }
        self.settings = settings
        self.speex = speex
        self.state = state
        let agc = settings.mode == .denoiseAGC
        // Every stored property is set: if a control below is refused and
        // init throws, deinit still runs and destroys the state (once).
        try control(SpeexRequest.denoise, "denoise", settings.isActive ? 1 : 0)
        try control(SpeexRequest.noiseSuppress, "noise suppression (dB)", Int32(settings.noiseSuppressDecibels))
        try control(SpeexRequest.agc, "automatic gain", agc ? 1 : 0)
        if agc {
            try controlFloat(SpeexRequest.agcLevel, "automatic gain level", settings.agcLevel)
            try control(SpeexRequest.agcMaxGain, "automatic gain maximum (dB)", Int32(settings.agcMaxGainDecibels))
        }
        // Dereverberation is not tuned. speexdsp's own VAD (off by default)
        // is left alone: the endpointer decides speech, and setting it at all
        // prints a warning to standard error from inside the library.
        try control(SpeexRequest.dereverb, "dereverberation", 0)
    }

    private func control(_ request: Int32, _ name: String, _ value: Int32) throws(FrontEndError) {
        guard speex.preprocessControlInt(state, request, value) == 0 else {
            throw .controlRefused(request: name, value: "\(value)")
        }
    }

    private func controlFloat(_ request: Int32, _ name: String, _ value: Float) throws(FrontEndError) {
        guard speex.preprocessControlFloat(state, request, value) == 0 else {
            throw .controlRefused(request: name, value: "\(value)")
        }
    }

    deinit {
        speex.preprocessDestroy(state)
        primer.deallocate()
    }

    /// Processes `samples` in place, one 10 ms frame after another; the
    /// count must be a whole number of frames (`FrontEndSource` keeps the
    /// rest of a block for the next one).
    public func process(_ samples: UnsafeMutableBufferPointer<Int16>) {
        precondition(samples.count % Self.frameSamples == 0, "the front end takes whole 160-sample frames")
        guard let base = samples.baseAddress else { return }
        if frames == 0 && samples.count > 0 {
            primer.update(from: base, count: Self.frameSamples)
            _ = speex.preprocessRun(state, primer)
        }
        var offset = 0
        while offset < samples.count {
            _ = speex.preprocessRun(state, base + offset)
            offset += Self.frameSamples
        }
        frames += samples.count / Self.frameSamples
    }
}

import Foundation

/// Whether and how the capture path cancels the device's own voice
/// (`speech.echo_cancel`, `parley-bench audio echo-room --echo`): speexdsp's
/// adaptive echo canceller, with the samples Parley plays as its reference.
public struct EchoSettings: Sendable, Equatable, CustomStringConvertible {
    public enum Mode: String, Sendable, CaseIterable {
        /// The microphone as captured.
        case off
        /// The adaptive filter, then speexdsp's preprocessor suppresses the
        /// echo the filter left (`SPEEX_PREPROCESS_SET_ECHO_STATE`).
        case on
        /// The adaptive filter alone (no residual suppression), for comparison.
        case linear
    }

    public var mode: Mode
    /// How long an echo the filter models, in milliseconds: the room's
    /// reverberation the canceller removes (speexdsp suggests a third of the
    /// reverberation time; longer costs more and adapts more slowly).
    public var tailMilliseconds: Int

    public init(mode: Mode = .off, tailMilliseconds: Int = 128) {
        self.mode = mode
        self.tailMilliseconds = tailMilliseconds
    }

    public static let off = EchoSettings()

    public var isActive: Bool { mode != .off }

    /// Reads `off`, `on`, `linear`, optionally with the tail in
    /// milliseconds after a colon (`on:200`). The error names the value and
    /// what is expected.
    public init(parsing text: String) throws(FrontEndError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let mode = Mode(rawValue: parts[0]) else { throw .invalidSetting(value: text, expected: Self.expected) }
        self.init(mode: mode)
        if parts.count == 2 {
            guard mode != .off, let tail = Int(parts[1]), Self.tailRange.contains(tail) else {
                throw .invalidSetting(value: text, expected: Self.expected)
            }
            tailMilliseconds = tail
        }
    }

    /// 10 ms is one frame; past half a second speexdsp's filter costs more
    /// than the whole listening path and adapts too slowly to follow a person moving.
    static let tailRange = 10...500
    static let expected = "off, on or linear, optionally followed by the echo tail in ms from 10 to 500 (e.g. on:200)"

    public var description: String {
        mode == .off || tailMilliseconds == 128 ? mode.rawValue : "\(mode.rawValue):\(tailMilliseconds)"
    }
}

/// speexdsp's acoustic echo canceller on 16 kHz mono Int16 frames: each
/// 10 ms frame of the microphone is processed with the 10 ms of what the
/// device played that the microphone heard at the same time (the
/// reference, `EchoReference`), and what is left is the room without the
/// device's voice. In `on` mode a preprocessor linked to the echo state
/// then suppresses the residual echo (its noise suppression at 0 dB:
/// denoising is `FrontEnd`'s, `speech.front_end`). The preprocessor hands
/// each frame out one frame (10 ms) later than it came in (its
/// overlap-add, measured), as `FrontEnd`'s does; the filter adds no delay.
///
/// While the device has been silent for longer than the echo tail and a
/// second (and before it first speaks), nothing it played can still be in
/// the microphone: the canceller hands the microphone out as captured
/// (with the preprocessor's one-frame lag, so stream positions never
/// shift) and does not run speexdsp at all until the device plays again,
/// so a person speaking to a quiet device is heard as without it and idle
/// listening costs nothing for it (BENCHMARKS.md, "Echo cancellation").
/// The switch between the two is a one-frame cross-fade.
///
/// Real-time safe: both states and the output frame are made at init;
/// `process` allocates, locks and blocks nothing (the malloc-counting test
/// proves it). Not thread-safe: one thread (the listen thread, or a
/// tool's) owns it.
public final class EchoCanceller {
    public static let frameSamples = FrontEnd.frameSamples
    public static let sampleRate = FrontEnd.sampleRate

    public let settings: EchoSettings
    private let speex: SpeexFunctions
    private let echo: OpaquePointer
    private var residual: OpaquePointer?
    private let out: UnsafeMutablePointer<Int16>
    /// The microphone's previous frame: the pass-through's one-frame lag in `on` mode.
    private let previous: UnsafeMutablePointer<Int16>
    /// Reference frames since the device's voice was last in one (starts
    /// past `quietFrames`: before the device has said anything the
    /// microphone passes through).
    private var silentFrames: Int
    /// The echo tail plus a second, in frames: after this many silent
    /// reference frames nothing played is left in the microphone (a
    /// kitchen's reverberation dies in 0.3–0.6 s), and the pauses between
    /// the sentences of one answer (espeak-ng's are about 0.3 s) stay processed.
    private let quietFrames: Int
    /// Whether the last frame handed out was the microphone as captured.
    public private(set) var passingThrough = true
    /// Frames passed through without running speexdsp at all (the device
    /// quiet for longer than `quietFrames`).
    public private(set) var skippedFrames = 0

    /// Frames processed so far.
    public private(set) var frames = 0
    /// Frames processed while the device was heard (`isPlaying`): how much
    /// the filter has had to adapt on.
    public private(set) var playedFrames = 0

    /// 3 s of the device's voice: before it, the filter has not yet learnt
    /// the room and much of the echo comes through (in the simulated room,
    /// the device's first words kept -14 dB; every later false hit -35 dB or less).
    public static let adaptedFrames = 300

    /// Whether the filter has adapted on enough of the device's voice to be
    /// trusted (`ListeningOutcome.gated`: before, only a cancel phrase
    /// interrupts the device, as without cancellation).
    public var hasAdapted: Bool { playedFrames >= Self.adaptedFrames }

    /// Whether a reference frame holds the device's voice (above -50 dBFS
    /// at its peak) rather than silence.
    @inline(__always)
    public static func isPlaying(_ frame: UnsafeBufferPointer<Int16>) -> Bool {
        for sample in frame where sample > 100 || sample < -100 { return true }
        return false
    }

    /// nil for `off`.
    public convenience init?(_ settings: EchoSettings) throws(FrontEndError) {
        guard settings.isActive else { return nil }
        try self.init(settings: settings, speex: .system)
    }

    init(settings: EchoSettings, speex: SpeexFunctions) throws(FrontEndError) {
        let filter = settings.tailMilliseconds * Self.sampleRate / 1_000
        guard let echo = speex.echoInit(Int32(Self.frameSamples), Int32(filter)) else {
            throw .initFailed(frameSize: Self.frameSamples, sampleRate: Self.sampleRate)
        }
        self.settings = settings
        self.speex = speex
        self.echo = echo
        out = .allocate(capacity: Self.frameSamples)
        out.initialize(repeating: 0, count: Self.frameSamples)
        previous = .allocate(capacity: Self.frameSamples)
        previous.initialize(repeating: 0, count: Self.frameSamples)
        quietFrames = (settings.tailMilliseconds + 1_000) / 10
        silentFrames = quietFrames + 1
        // Every stored property is set: a refusal below throws, and deinit
        // destroys what was made (once).
        guard speex.echoControlInt(echo, SpeexRequest.echoSamplingRate, Int32(Self.sampleRate)) == 0 else {
            throw .controlRefused(request: "echo sampling rate", value: "\(Self.sampleRate)")
        }
        guard settings.mode == .on else { return }
        guard let preprocess = speex.preprocessInit(Int32(Self.frameSamples), Int32(Self.sampleRate)) else {
            throw .initFailed(frameSize: Self.frameSamples, sampleRate: Self.sampleRate)
        }
        residual = preprocess
        // The residual suppression is applied only with "denoise" on; at
        // 0 dB the noise floor is left as it is and only the echo is cut.
        try control(preprocess, SpeexRequest.denoise, "denoise", 1)
        try control(preprocess, SpeexRequest.noiseSuppress, "noise suppression (dB)", 0)
        try control(preprocess, SpeexRequest.agc, "automatic gain", 0)
        try control(preprocess, SpeexRequest.dereverb, "dereverberation", 0)
        guard speex.preprocessSetEchoState(preprocess, echo) == 0 else {
            throw .controlRefused(request: "preprocessor echo state", value: "the echo canceller")
        }
    }

    private func control(_ state: OpaquePointer, _ request: Int32, _ name: String, _ value: Int32) throws(FrontEndError) {
        guard speex.preprocessControlInt(state, request, value) == 0 else {
            throw .controlRefused(request: name, value: "\(value)")
        }
    }

    deinit {
        if let residual { speex.preprocessDestroy(residual) }
        speex.echoDestroy(echo)
        out.deallocate()
        previous.deallocate()
    }

    /// Cancels the echo of `reference` in `microphone`, in place, one 10 ms
    /// frame after another. Both hold the same whole number of frames, the
    /// reference sample `i` being what was played when microphone sample
    /// `i` was captured (silence where nothing played).
    public func process(_ microphone: UnsafeMutableBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>) {
        precondition(microphone.count % Self.frameSamples == 0, "the echo canceller takes whole 160-sample frames")
        precondition(reference.count == microphone.count, "one reference sample per microphone sample")
        guard let mic = microphone.baseAddress, let played = reference.baseAddress else { return }
        let n = Self.frameSamples
        var offset = 0
        while offset < microphone.count {
            if Self.isPlaying(UnsafeBufferPointer(start: played + offset, count: n)) {
                playedFrames += 1
                silentFrames = 0
            } else if silentFrames <= quietFrames {
                silentFrames += 1
            }
            if frames == 0 && offset == 0 {
                // The lag's first frame: a copy of the first captured one,
                // not 10 ms of digital silence, from which an endpointer
                // would learn a noise floor of zero and take the whole
                // room for speech.
                previous.update(from: mic, count: n)
            }
            // The microphone as captured, at the processed frame's stream
            // position: the previous frame after the preprocessor (`on`),
            // this one after the filter alone (`linear`).
            let raw = residual == nil ? mic + offset : previous
            let passing = silentFrames > quietFrames
            if passing && passingThrough {
                // A quiet device: nothing to cancel, and the filter's
                // reference history is already silence. Idle listening
                // pays nothing for the canceller (skippedFrames).
                skippedFrames += 1
            } else {
                speex.echoCancel(echo, mic + offset, played + offset, out)
                if let residual { _ = speex.preprocessRun(residual, out) }
            }
            if passing != passingThrough {
                // One frame from what was handed out to what will be.
                for i in 0..<n {
                    let w = Float(i + 1) / Float(n + 1)
                    let (from, to) = passing ? (Float(out[i]), Float(raw[i])) : (Float(raw[i]), Float(out[i]))
                    out[i] = Int16(clamping: Int((from * (1 - w) + to * w).rounded()))
                }
            } else if passing {
                out.update(from: raw, count: n)
            }
            passingThrough = passing
            if residual != nil { previous.update(from: mic + offset, count: n) }
            (mic + offset).update(from: out, count: n)
            offset += n
        }
        frames += microphone.count / n
    }
}

/// Whether an utterance heard while the device spoke is someone else's
/// voice or what the canceller left of the device's own: the energy the
/// canceller kept of the microphone over the utterance. The device's voice
/// alone is cut by the canceller's whole enhancement (30 dB and more in the
/// simulated room); a person speaking over it keeps their own level (10 dB
/// under the echo keeps about -10 dB). Residual echo that the recogniser
/// takes for "stop it" is refused here (BENCHMARKS.md, "Echo cancellation");
/// before the filter has adapted (`EchoCanceller.hasAdapted`) the listener
/// hears cancel phrases as it did without cancellation, and no command
/// (`ListeningOutcome.gated`).
public enum EchoGate {
    /// Chosen on the simulated room's mixtures (training/bin/eval-echo.sh).
    public static let defaultThresholdDecibels = -25.0

    /// 10 log10(cleaned energy / microphone energy); 0 for silence.
    public static func keptDecibels(microphone: ArraySlice<Int16>, cleaned: ArraySlice<Int16>) -> Double {
        func energy(_ samples: ArraySlice<Int16>) -> Double { samples.reduce(0) { $0 + Double($1) * Double($1) } }
        let before = energy(microphone)
        guard before > 0 else { return 0 }
        return 10 * log10(max(energy(cleaned), 1) / before)
    }

    public static func accepts(keptDecibels: Double, threshold: Double = defaultThresholdDecibels) -> Bool {
        keptDecibels >= threshold
    }
}

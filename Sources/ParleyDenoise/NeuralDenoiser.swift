import ParleyAudio

/// DeepFilterNet3 on 16 kHz mono Int16 utterances, streamed: the network
/// runs at 48 kHz on 10 ms frames, so each block is resampled up (×3),
/// denoised frame by frame and resampled back down.
///
/// The network and both resamplers delay the signal by a fixed number of
/// samples (`delaySamples`: 30 ms of the network's look-ahead and overlap,
/// plus the filters' group delay). One state runs across utterances (its
/// model takes most of a second to load); per utterance, `begin` marks the
/// stream position where it starts and `finish` pushes silence through
/// until its last sample is out, so what an utterance gives is its own
/// samples, denoised, aligned with what went in and of the same length.
///
/// Not thread-safe: the listen thread (or a tool's) owns it.
public final class NeuralDenoiser {
    public static let sampleRate = 16_000
    /// The network's rate, and its frame there (10 ms).
    static let networkRate = 48_000
    /// The network's own delay, measured (a chirp through the C API
    /// correlates best 1,440 samples late at 48 kHz: its 20 ms look-ahead
    /// plus 10 ms of overlap-add). NeuralDenoiserTests checks the whole
    /// chain's alignment.
    static let networkDelay = 1_440
    /// 10 ms at 16 kHz: input is handed to the up-sampler in such pieces.
    static let inputChunk = 160

    public let settings: FrontEndSettings
    public let assets: DeepFilterAssets
    private let library: DeepFilterLibrary
    private let state: OpaquePointer
    private let frame: Int
    private let up: PolyphaseResampler
    private let down: PolyphaseResampler
    /// Total delay from an input sample to its denoised output, at 16 kHz.
    public let delaySamples: Int
    /// 48 kHz samples waiting for a whole network frame.
    private var pending: [Float]
    private var pendingCount: Int
    private var networkOut: [Float]
    private var downOut: [Float]
    /// Samples taken and given since the state was made (16 kHz).
    private var totalIn: Int64 = 0
    private var totalOut: Int64 = 0
    /// Where the open utterance starts (input position).
    private var utteranceStart: Int64 = 0

    /// `settings.noiseSuppressDecibels` is the most the network may
    /// attenuate (DeepFilterNet's attenuation limit; -100 and below: none).
    public init(settings: FrontEndSettings, assets: DeepFilterAssets) throws(NeuralFrontEndError) {
        let library = try DeepFilterLibrary.load(assets.library)
        try ModelCheck.verify(assets.model)
        let limit = Float(-settings.noiseSuppressDecibels)
        guard let state = assets.model.withCString({ library.create($0, limit, nil) }) else {
            throw .createFailed(path: assets.model)
        }
        self.settings = settings
        self.assets = assets
        self.library = library
        self.state = state
        frame = library.frameLength(state)
        up = PolyphaseResampler(inputRate: Self.sampleRate, outputRate: Self.networkRate, maxInput: Self.inputChunk)
        down = PolyphaseResampler(inputRate: Self.networkRate, outputRate: Self.sampleRate, maxInput: frame)
        // The up-sampler's delay plus the network's is padded at the start
        // to a whole number of 16 kHz samples, so that the chain's delay is
        // whole and the output lines up with the input exactly.
        let upDelay = up.delayOutputSamples + Self.networkDelay
        let padding = (3 - upDelay % 3) % 3
        delaySamples = (upDelay + padding) / 3 + down.delayOutputSamples
        pending = [Float](repeating: 0, count: frame + up.maxOutput(forInput: Self.inputChunk))
        pendingCount = padding
        networkOut = [Float](repeating: 0, count: frame)
        downOut = [Float](repeating: 0, count: down.maxOutput(forInput: frame))
    }

    /// Made from the places the runtime is searched for.
    public convenience init(settings: FrontEndSettings) throws(NeuralFrontEndError) {
        try self.init(settings: settings, assets: try DeepFilterAssets.locate())
    }

    deinit { library.free(state) }

    /// Starts an utterance at the next sample fed.
    public func begin() {
        utteranceStart = totalIn
    }

    /// Denoises more of the open utterance; gives what is out so far (the
    /// first call gives `delaySamples` fewer than it took).
    public func process(_ samples: [Int16]) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(samples.count + Self.inputChunk)
        samples.withUnsafeBufferPointer { input in
            var offset = 0
            while offset < input.count {
                let count = min(Self.inputChunk, input.count - offset)
                let slot = up.inputSlot
                for i in 0..<count { slot[i] = Float(input[offset + i]) / 32_768 }
                feed(count: count, into: &out)
                offset += count
            }
        }
        return out
    }

    /// One whole utterance at once (`begin`, `process`, `finish`): its
    /// samples denoised, aligned with what went in and as many.
    public func denoise(utterance samples: [Int16]) -> [Int16] {
        begin()
        return process(samples) + finish()
    }

    /// Ends the utterance: silence goes through until its last sample is
    /// out. Gives the rest of its samples.
    public func finish() -> [Int16] {
        let end = totalIn
        var out: [Int16] = []
        out.reserveCapacity(delaySamples + 2 * Self.inputChunk)
        while totalOut - Int64(delaySamples) < end {
            let slot = up.inputSlot
            for i in 0..<Self.inputChunk { slot[i] = 0 }
            feed(count: Self.inputChunk, into: &out)
        }
        // The silence pushed past the end is not the utterance's.
        let extra = Int(totalOut - Int64(delaySamples) - end)
        if extra > 0 { out.removeLast(min(extra, out.count)) }
        return out
    }

    /// A whole utterance: begin, process, finish.
    public func denoise(_ samples: [Int16]) -> [Int16] {
        begin()
        return process(samples) + finish()
    }

    /// `count` samples written to the up-sampler's slot: through the
    /// network and down again; the utterance's outputs are appended.
    private func feed(count: Int, into out: inout [Int16]) {
        totalIn += Int64(count)
        pending.withUnsafeMutableBufferPointer { buffer in
            pendingCount += up.process(count: count, output: buffer.baseAddress! + pendingCount)
        }
        while pendingCount >= frame {
            // The frame's local SNR estimate it returns is not used.
            _ = pending.withUnsafeMutableBufferPointer { input in
                networkOut.withUnsafeMutableBufferPointer { output in
                    library.processFrame(state, input.baseAddress, output.baseAddress)
                }
            }
            pending.withUnsafeMutableBufferPointer { buffer in
                let rest = pendingCount - frame
                if rest > 0 { buffer.baseAddress!.update(from: buffer.baseAddress! + frame, count: rest) }
            }
            pendingCount -= frame
            let slot = down.inputSlot
            for i in 0..<frame { slot[i] = networkOut[i] }
            let produced = downOut.withUnsafeMutableBufferPointer { down.process(count: frame, output: $0.baseAddress!) }
            for i in 0..<produced {
                // Output position `totalOut` carries input `totalOut - delay`.
                if totalOut - Int64(delaySamples) >= utteranceStart {
                    let value = (downOut[i] * 32_768).rounded()
                    out.append(Int16(max(-32_768, min(32_767, value))))
                }
                totalOut += 1
            }
        }
    }
}

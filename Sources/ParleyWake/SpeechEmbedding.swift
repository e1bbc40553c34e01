import Foundation

/// Google's speech_embedding on a stream of 16 kHz samples: one 96-value
/// embedding every 80 ms (1,280 samples), each of the last 775 ms (76 mel
/// frames), the same numbers as the wheel's two TFLite models computed
/// window by window (held to them in SpeechEmbeddingTests).
///
/// Why streamed layer by layer: consecutive windows share 68 of their 76
/// frames, and the network's convolutions are unpadded in time, so each
/// layer's output rows depend only on its newest input rows. Each stage
/// keeps the rows its kernel still needs and computes only the new ones:
/// about 5.8 M multiply-adds a hop (72 M a second) instead of 9.5 times as
/// many for whole windows. Use from one thread; no allocation after `init`.
public final class SpeechEmbedding {
    public static let hop = 1280
    /// Samples per mel call: 8 frames of 512 every 160.
    public static let call = 1760
    public static let framesPerCall = 8
    public static let frameHop = 160
    /// Samples from an embedding's first to its last (76 frames).
    public static let span = 75 * 160 + 512

    private let weights: SpeechEmbeddingWeights
    private var pending: [Float]
    private var pendingCount = 0
    private var fft = RealFFT(size: SpeechEmbeddingWeights.fft)
    /// One windowed frame, then its power per bin.
    private var frame: [Double]
    private var spectrum: [Double]
    private var melRows: [Float]
    private var stages: [ConvStage]
    /// Embeddings made since the stream began (`reset`).
    public private(set) var count = 0

    public init(weights: SpeechEmbeddingWeights) {
        self.weights = weights
        pending = Array(repeating: 0, count: Self.call)
        frame = Array(repeating: 0, count: SpeechEmbeddingWeights.fft)
        spectrum = Array(repeating: 0, count: SpeechEmbeddingWeights.fft / 2 + 1)
        melRows = Array(repeating: 0, count: Self.framesPerCall * SpeechEmbeddingWeights.bands)
        var freq = SpeechEmbeddingWeights.bands
        stages = weights.convs.enumerated().map { i, conv in
            defer { if conv.poolTime != nil { freq /= 2 } }
            return ConvStage(conv, freq: freq, activate: i < weights.convs.count - 1)
        }
    }

    public func reset() {
        pendingCount = 0
        count = 0
        for s in stages { s.reset() }
    }

    /// Feeds samples; `embedding` gets each new embedding (valid during the call only).
    public func feed(_ samples: UnsafeBufferPointer<Int16>, embedding: (UnsafeBufferPointer<Float>) -> Void) {
        var i = 0
        while i < samples.count {
            let take = min(Self.call - pendingCount, samples.count - i)
            pending.withUnsafeMutableBufferPointer { p in
                for k in 0..<take { p[pendingCount + k] = Float(samples[i + k]) }
            }
            pendingCount += take
            i += take
            if pendingCount == Self.call {
                melCall()
                for f in 0..<Self.framesPerCall { push(frame: f, embedding: embedding) }
                // The next call starts one hop later: keep its first 480 samples.
                pending.withUnsafeMutableBufferPointer { p in
                    let keep = Self.call - Self.hop
                    for k in 0..<keep { p[k] = p[Self.hop + k] }
                }
                pendingCount = Self.call - Self.hop
            }
        }
    }

    /// The 8 log-mel frames of the pending call, floored 80 dB under the call's
    /// loudest value and scaled as the embedding expects (dB / 10 + 2).
    private func melCall() {
        let bins = SpeechEmbeddingWeights.bins, bands = SpeechEmbeddingWeights.bands, n = SpeechEmbeddingWeights.fft
        var loudest = -Float.infinity
        for f in 0..<Self.framesPerCall {
            pending.withUnsafeBufferPointer { audio in
                weights.window.withUnsafeBufferPointer { window in
                    for t in 0..<n { frame[t] = Double(audio[f * Self.frameHop + t] * window[t]) }
                }
            }
            fft.power(of: &frame, into: &spectrum)
            weights.mel.withUnsafeBufferPointer { mel in
                spectrum.withUnsafeBufferPointer { power in
                    melRows.withUnsafeMutableBufferPointer { rows in
                        let row = rows.baseAddress! + f * bands
                        for b in 0..<bands { row[b] = 0 }
                        for k in 0..<bins {
                            let p = Float(power[k])
                            let m = mel.baseAddress! + k * bands
                            for b in 0..<bands { row[b] += p * m[b] }
                        }
                        for b in 0..<bands {
                            let db = 10 * log10(max(row[b], 1e-10))
                            row[b] = db
                            loudest = max(loudest, db)
                        }
                    }
                }
            }
        }
        for j in 0..<melRows.count { melRows[j] = max(melRows[j], loudest - 80) / 10 + 2 }
    }

    /// One mel frame through the stages; an embedding when it comes out of the last.
    private func push(frame f: Int, embedding: (UnsafeBufferPointer<Float>) -> Void) {
        let bands = SpeechEmbeddingWeights.bands
        var produced = melRows.withUnsafeBufferPointer { rows in
            stages[0].push(UnsafeBufferPointer(rebasing: rows[(f * bands)..<((f + 1) * bands)]))
        }
        var s = 1
        while produced && s < stages.count {
            let previous = stages[s - 1]
            produced = previous.output.withUnsafeBufferPointer { stages[s].push($0) }
            s += 1
        }
        if produced {
            count += 1
            stages[stages.count - 1].output.withUnsafeBufferPointer { embedding($0) }
        }
    }
}

/// One convolution of the embedding network on a stream of rows (one time
/// step: freq x channels): it keeps its last `kernelTime` input rows
/// (frequency-padded with zeros for "same" kernels) and makes one output row
/// per input row once it has enough, then the activation and the pool.
final class ConvStage {
    let conv: SpeechEmbeddingWeights.Conv
    let freq: Int
    let activate: Bool
    private let pad: Int
    private let rowSize: Int
    /// The last kernelTime input rows, oldest first by `(next + j) % kernelTime`.
    private var history: [Float]
    private var next = 0
    private var seen = 0
    private var convolved: [Float]
    /// The newest output row (after the pool): freq/2 x outputs, or freq x outputs without one.
    private(set) var output: [Float]
    /// Convolved rows so far, for the time pool's pairing.
    private var made = 0
    /// The weights as (kernelTime, kernelFreq, inputs, outputs): the outputs
    /// of one input value side by side, for `convolve`'s lanes.
    private let laneWeights: [Float]

    init(_ conv: SpeechEmbeddingWeights.Conv, freq: Int, activate: Bool) {
        self.conv = conv
        self.freq = freq
        self.activate = activate
        pad = conv.kernelFreq / 2
        rowSize = (freq + 2 * pad) * conv.inputs
        history = Array(repeating: 0, count: rowSize * conv.kernelTime)
        convolved = Array(repeating: 0, count: freq * conv.outputs)
        output = Array(repeating: 0, count: (conv.poolTime == nil ? freq : freq / 2) * conv.outputs)
        let o = conv.outputs, kt = conv.kernelTime, span = conv.kernelFreq * conv.inputs
        var lanes = [Float](repeating: 0, count: conv.weights.count)
        for out in 0..<o {
            for t in 0..<kt {
                for j in 0..<span { lanes[(t * span + j) * o + out] = conv.weights[(out * kt + t) * span + j] }
            }
        }
        laneWeights = lanes
    }

    func reset() {
        next = 0
        seen = 0
        made = 0
        for i in history.indices { history[i] = 0 }
    }

    /// Takes one input row (freq x inputs); true when `output` holds a new row.
    func push(_ row: UnsafeBufferPointer<Float>) -> Bool {
        let c = conv.inputs, kt = conv.kernelTime
        history.withUnsafeMutableBufferPointer { h in
            let base = next * rowSize + pad * c
            for j in 0..<(freq * c) { h[base + j] = row[j] }
        }
        next = (next + 1) % kt
        seen += 1
        guard seen >= kt else { return false }
        convolve()
        made += 1
        return pool()
    }

    /// One output row: for each frequency, every output channel at once,
    /// eight lanes a step, as a sum of each input value times its weights
    /// for eight outputs (`laneWeights`). Why not a dot product per output:
    /// most spans here are short (3 to 96 values), so a dot's horizontal sum
    /// and loop set-up cost more than its multiply-adds; this way each input
    /// value is loaded once per block of eight outputs and nothing is summed
    /// across lanes.
    private func convolve() {
        let o = conv.outputs, kt = conv.kernelTime, span = conv.kernelFreq * conv.inputs, c = conv.inputs
        let blocks = o / 8
        let activate = self.activate
        history.withUnsafeBufferPointer { h in
            laneWeights.withUnsafeBufferPointer { w in
                conv.bias.withUnsafeBufferPointer { b in
                    convolved.withUnsafeMutableBufferPointer { y in
                        let hp = h.baseAddress!, wp = UnsafeRawPointer(w.baseAddress!), bp = UnsafeRawPointer(b.baseAddress!)
                        for f in 0..<freq {
                            for block in 0..<blocks {
                                var sum = bp.loadUnaligned(fromByteOffset: block * 32, as: SIMD8<Float>.self)
                                for t in 0..<kt {
                                    // Oldest row first: the slot after the newest. In a
                                    // padded row, frequency f's kernel starts at f.
                                    let x = hp + ((next + t) % kt) * rowSize + f * c
                                    var row = wp + ((t * span) * o + block * 8) * 4
                                    for j in 0..<span {
                                        sum += SIMD8(repeating: x[j]) * row.loadUnaligned(as: SIMD8<Float>.self)
                                        row += o * 4
                                    }
                                }
                                let out = y.baseAddress! + f * o + block * 8
                                UnsafeMutableRawPointer(out).storeBytes(of: sum, as: SIMD8<Float>.self)
                                // Scalar: the standard library's generic SIMD max is not
                                // inlined here and cost a quarter of the embedding.
                                if activate { for k in 0..<8 { out[k] = leakyFloored(out[k]) } }
                            }
                            // Outputs past the last whole block of eight, one at a time.
                            for out in (blocks * 8)..<o {
                                var sum = b[out]
                                for t in 0..<kt {
                                    let x = hp + ((next + t) % kt) * rowSize + f * c
                                    for j in 0..<span { sum += x[j] * w[(t * span + j) * o + out] }
                                }
                                y[f * o + out] = activate ? leakyFloored(sum) : sum
                            }
                        }
                    }
                }
            }
        }
    }

    /// The activation after every convolution but the last: leaky ReLU (0.2) floored at -0.4.
    @inline(__always) private func leakyFloored(_ x: Float) -> Float { max(x > 0 ? x : 0.2 * x, -0.4) }

    /// The pool after the convolution: 2 in frequency, and 2 in time where
    /// `poolTime` is 2 (rows paired from the stream's start: 0-1, 2-3, ...).
    private func pool() -> Bool {
        let o = conv.outputs
        guard let time = conv.poolTime else {
            output.withUnsafeMutableBufferPointer { out in
                convolved.withUnsafeBufferPointer { y in for j in 0..<y.count { out[j] = y[j] } }
            }
            return true
        }
        let first = time == 1 || made % 2 == 1
        output.withUnsafeMutableBufferPointer { out in
            convolved.withUnsafeBufferPointer { y in
                for f in 0..<(freq / 2) {
                    for k in 0..<o {
                        let v = max(y[2 * f * o + k], y[(2 * f + 1) * o + k])
                        out[f * o + k] = first ? v : max(out[f * o + k], v)
                    }
                }
            }
        }
        return time == 1 || made % 2 == 0
    }
}

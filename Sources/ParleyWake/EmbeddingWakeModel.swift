import Foundation

/// A wake name's head over speech_embedding vectors, as
/// training/parley_training/head.py writes it (`parley wake train`, or the
/// shipped model/wake/<name>.embedding.json): JSON
/// `{"kind": "speech-embedding-head", "name", "context", "dims",
/// "threshold", "mean", "scale", "layers": [{"weights" (out x in), "bias"}]}`
/// plus what training recorded about itself (ignored here). An ensemble
/// has `"members": [{"layers": [...]}, ...]` instead of `"layers"`: heads
/// over the same standardised inputs whose logits are averaged.
public struct EmbeddingWakeModel: Sendable, Decodable {
    public static let kind = "speech-embedding-head"

    public var kind: String
    public var name: String
    /// Embeddings per window (16: 1.28 s of them, about 2 s of audio).
    public var context: Int
    public var dims: Int
    /// Logits at or above this are the name, at sensitivity 0.5.
    public var threshold: Double
    public var mean: [Float]
    public var scale: [Float]
    /// One head's layers per member (one member for a single head); the score is their logits' mean.
    public var members: [[DenseStack.Layer]]
    /// The first member's layers (a single head's).
    public var layers: [DenseStack.Layer] { members[0] }

    private struct Member: Decodable { var layers: [DenseStack.Layer] }

    enum CodingKeys: String, CodingKey { case kind, name, context, dims, threshold, mean, scale, layers, members }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(String.self, forKey: .kind)
        name = try c.decode(String.self, forKey: .name)
        context = try c.decode(Int.self, forKey: .context)
        dims = try c.decode(Int.self, forKey: .dims)
        threshold = try c.decode(Double.self, forKey: .threshold)
        mean = try c.decode([Float].self, forKey: .mean)
        scale = try c.decode([Float].self, forKey: .scale)
        if c.contains(.members) {
            guard !c.contains(.layers) else {
                throw DecodingError.dataCorruptedError(forKey: .layers, in: c, debugDescription: "both \"layers\" and \"members\"")
            }
            members = try c.decode([Member].self, forKey: .members).map(\.layers)
            guard !members.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .members, in: c, debugDescription: "no members")
            }
        } else {
            members = [try c.decode([DenseStack.Layer].self, forKey: .layers)]
        }
    }

    /// Reads and checks a head file; the error names the file and what is wrong.
    public static func load(_ path: String) throws(WakeModelError) -> EmbeddingWakeModel {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        let model: EmbeddingWakeModel
        do {
            model = try JSONDecoder().decode(EmbeddingWakeModel.self, from: data)
        } catch {
            throw .headInvalid(path: path, reason: "\(error)")
        }
        guard model.kind == kind else { throw .headInvalid(path: path, reason: "kind is \"\(model.kind)\", expected \"\(kind)\"") }
        guard model.dims == SpeechEmbeddingWeights.dims, (1...64).contains(model.context) else {
            throw .headInvalid(path: path, reason: "\(model.context) x \(model.dims) inputs, expected 1-64 x \(SpeechEmbeddingWeights.dims)")
        }
        guard model.mean.count == model.context * model.dims else {
            throw .headInvalid(path: path, reason: "\(model.mean.count) input means, expected \(model.context * model.dims)")
        }
        for (i, layers) in model.members.enumerated() {
            if let why = DenseStack.check(mean: model.mean, scale: model.scale, layers: layers) {
                throw .headInvalid(path: path, reason: model.members.count == 1 ? why : "member \(i + 1): \(why)")
            }
        }
        return model
    }
}

/// A wake head on a stream: speech_embedding every 80 ms, the head over
/// the last `context` embeddings, a detection when its logit reaches the
/// threshold, at most one a `refractorySeconds`. Use from one thread.
public final class EmbeddingSpotter {
    public let model: EmbeddingWakeModel
    public let threshold: Double
    /// How far sensitivity 0 and 1 move the threshold from the model's, in logits.
    public static let sensitivitySpan = 8.0
    /// The word stays in the head's 2 s context after it ends, and its
    /// score with it: one wake per 2 s (training/parley_training counts false
    /// wakes the same way).
    public static let refractorySeconds = 2.0

    private let embedding: SpeechEmbedding
    /// The speech_embedding models it streams: another spotter in the same
    /// process (the hey gate beside the name's head) takes them from here
    /// instead of reading and checking the files again.
    public let weights: SpeechEmbeddingWeights
    /// One per member; a window's score is their logits' mean.
    private let heads: [DenseStack]
    /// The last `context` embeddings, oldest first from `ringNext`.
    private var ring: [Float]
    private var ringNext = 0
    private var window: [Float]
    private var lastDetection = Int.min / 2
    private let gap: Int
    /// The highest score since the stream began; -infinity before the first window.
    public private(set) var peak = -Double.infinity
    /// The latest window's score; -infinity before the first.
    public private(set) var latest = -Double.infinity

    public init(model: EmbeddingWakeModel, weights: SpeechEmbeddingWeights, sensitivity: Double = 0.5) {
        self.model = model
        threshold = model.threshold + (0.5 - min(1, max(0, sensitivity))) * Self.sensitivitySpan
        self.weights = weights
        embedding = SpeechEmbedding(weights: weights)
        heads = model.members.map { DenseStack(mean: model.mean, scale: model.scale, layers: $0) }
        ring = Array(repeating: 0, count: model.context * model.dims)
        // Its own storage: a copy of `ring` would share it until the first write, an allocation mid-stream.
        window = Array(repeating: 0, count: model.context * model.dims)
        gap = Int(Self.refractorySeconds * 16_000 / Double(SpeechEmbedding.hop))
    }

    /// Samples from the stream's start to the end of the first window it scores.
    public var firstWindowEnd: Int { SpeechEmbedding.hop * (model.context - 1) + SpeechEmbedding.span }

    public func reset() {
        embedding.reset()
        ringNext = 0
        lastDetection = Int.min / 2
        resetScores()
    }

    /// Forgets the scores seen (`peak`, `latest`) but not the stream: the
    /// next windows go on from the audio already fed.
    public func resetScores() {
        peak = -.infinity
        latest = -.infinity
    }

    /// Embeddings made since the stream began (each one 80 ms of audio).
    public var embeddings: Int { embedding.count }

    /// Feeds samples; `detected` gets each detection's stream time in
    /// samples (the end of the window that reached the threshold) and its score.
    public func feed(_ samples: UnsafeBufferPointer<Int16>, detected: (Int64, Double) -> Void) {
        scored(samples) { index, score in
            if score >= threshold, index - lastDetection > gap {
                lastDetection = index
                detected(Int64(SpeechEmbedding.hop * index + SpeechEmbedding.span), score)
            }
        }
    }

    /// Every new embedding's index and, from the `context`-th on, its window's score.
    private func scored(_ samples: UnsafeBufferPointer<Int16>, each: (Int, Double) -> Void) {
        let dims = model.dims, context = model.context
        embedding.feed(samples) { e in
            ring.withUnsafeMutableBufferPointer { r in
                for j in 0..<dims { r[ringNext * dims + j] = e[j] }
            }
            ringNext = (ringNext + 1) % context
            let index = embedding.count - 1
            guard embedding.count >= context else { return }
            window.withUnsafeMutableBufferPointer { w in
                ring.withUnsafeBufferPointer { r in
                    for k in 0..<context {
                        let slot = (ringNext + k) % context
                        for j in 0..<dims { w[k * dims + j] = r[slot * dims + j] }
                    }
                }
            }
            var sum = 0.0
            window.withUnsafeBufferPointer { w in
                for head in heads { sum += Double(head.logit(w)) }
            }
            let score = sum / Double(heads.count)
            latest = score
            peak = max(peak, score)
            each(index, score)
        }
    }

    /// Seconds of quiet `padded` puts either side of a recording.
    public static let paddingSeconds = 1.0

    /// A recording with a second of faint noise (about 3 units rms, a quiet
    /// room's floor) before and after, as the heads were trained: a short
    /// recording otherwise ends before the head's first window (2 s), and
    /// digital silence is a sound no microphone makes. Deterministic.
    public static func padded(_ samples: [Int16]) -> [Int16] {
        let n = Int(paddingSeconds * 16_000)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func floor() -> Int16 {
            // The sum of four uniforms on [-1, 1) (variance 4/3), scaled to 3 rms: near-Gaussian.
            var sum = 0.0
            for _ in 0..<4 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                sum += Double(state >> 11) / Double(1 << 53) * 2 - 1
            }
            return Int16((sum * 3 / (4.0 / 3).squareRoot()).rounded())
        }
        var out = [Int16]()
        out.reserveCapacity(samples.count + 2 * n)
        for _ in 0..<n { out.append(floor()) }
        out += samples
        for _ in 0..<n { out.append(floor()) }
        return out
    }

    /// Every window's score of a whole recording from a fresh stream (tests, evaluation).
    public static func scores(of samples: [Int16], model: EmbeddingWakeModel, weights: SpeechEmbeddingWeights) -> [Double] {
        var out: [Double] = []
        let spotter = EmbeddingSpotter(model: model, weights: weights)
        samples.withUnsafeBufferPointer { spotter.scored($0) { _, s in out.append(s) } }
        return out
    }
}

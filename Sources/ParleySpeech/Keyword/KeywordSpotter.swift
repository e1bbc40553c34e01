import Foundation
import ParleyWake

/// A keyword network (`KeywordModel`) on a stream: `KeywordFeatures`'
/// windows through the network every pooled frame (30 ms); a window's score
/// is the mean logit of the last `smooth` windows (the word gives about ten
/// high windows in a row, a stray window one). A score at or above the
/// threshold is a detection, at most one a second (`refractorySeconds`).
/// Use from one thread; no allocation after `init`.
public final class KeywordSpotter {
    public let model: KeywordModel
    /// Scores at or above this are the word.
    public let threshold: Double
    /// Detections at most this often (the device listens for a command after one).
    public static let refractorySeconds = 1.0

    private var features: KeywordFeatures
    private let networks: [DenseStack]
    private var recent: [Double]
    private var recentNext = 0
    private var lastDetection = Int.min / 2
    private let gap: Int
    /// Samples in one pooled frame, and from a window's end frame start to its last sample.
    private let pooledSamples: Int
    private let frameTail: Int
    /// The highest score since the stream began (`reset`); -infinity before the first window.
    public private(set) var peak = -Double.infinity
    /// The highest score of the windows the last `feed` made; -infinity when it made none.
    public private(set) var lastFeedPeak = -Double.infinity

    /// How far one step of sensitivity moves the threshold, in logits: 0
    /// puts it 5 above the model's, 1 five below.
    public static let sensitivitySpan = 10.0

    public init(model: KeywordModel, sensitivity: Double = 0.5) {
        self.model = model
        threshold = model.threshold + (0.5 - min(1, max(0, sensitivity))) * Self.sensitivitySpan
        features = KeywordFeatures(model.features)
        networks = model.members.map(DenseStack.init)
        recent = Array(repeating: 0, count: model.features.smooth)
        let f = model.features
        pooledSamples = f.hop * f.pool
        frameTail = f.frame - f.hop
        gap = Int(Self.refractorySeconds * Double(f.rate) / Double(pooledSamples))
    }

    /// Starts again as on a new stream (stream times count from here).
    public func reset() {
        features.reset()
        for i in recent.indices { recent[i] = 0 }
        recentNext = 0
        lastDetection = Int.min / 2
        peak = -.infinity
        lastFeedPeak = -.infinity
    }

    /// Feeds samples; `detected` gets each detection's stream time in
    /// samples (the end of the window that reached the threshold, about
    /// the word's end) and its score.
    public func feed(_ samples: UnsafeBufferPointer<Int16>, detected: (Int64, Double) -> Void) {
        lastFeedPeak = -.infinity
        scored(samples) { index, score in
            lastFeedPeak = max(lastFeedPeak, score)
            if score >= threshold, index - lastDetection > gap {
                lastDetection = index
                detected(Int64((index + 1) * pooledSamples + frameTail), score)
            }
        }
    }

    /// Feeds samples; `each` gets every new window's index (pooled frames
    /// from the stream's start, less one) and score.
    private func scored(_ samples: UnsafeBufferPointer<Int16>, each: (Int, Double) -> Void) {
        let networks = self.networks
        features.feed(samples) { window, pooledFrames in
            var logit = 0.0
            // Index loops here and in `logit`: reduce and enumerated() allocate in a debug build.
            for n in 0..<networks.count { logit += Double(networks[n].logit(window)) }
            self.recent[self.recentNext] = logit / Double(networks.count)
            self.recentNext = (self.recentNext + 1) % self.recent.count
            var sum = 0.0
            for i in 0..<self.recent.count { sum += self.recent[i] }
            let score = sum / Double(self.recent.count)
            self.peak = max(self.peak, score)
            each(pooledFrames - 1, score)
        }
    }

    /// Feeds samples; the stream times in seconds of any detections in them.
    public func process(_ samples: [Int16]) -> [Double] {
        var times: [Double] = []
        let rate = Double(model.features.rate)
        samples.withUnsafeBufferPointer { feed($0) { sample, _ in times.append(Double(sample) / rate) } }
        return times
    }

    /// Every window's score of a whole recording from a fresh stream (tests,
    /// benchmarks): one per pooled frame from the first full window on.
    public static func scores(of samples: [Int16], model: KeywordModel) -> [Double] {
        var out: [Double] = []
        samples.withUnsafeBufferPointer { KeywordSpotter(model: model).scored($0) { _, score in out.append(score) } }
        return out
    }
}

extension DenseStack {
    /// One network of a `KeywordModel`.
    convenience init(_ network: KeywordModel.Network) {
        self.init(mean: network.inputMean, scale: network.inputScale, layers: network.layers)
    }
}

import Foundation
import ParleyWake

/// The keyword network's features on a stream, computed as
/// training/parley_training/kws.py computes them (a test holds the two to the same
/// numbers): 25 ms Hann frames every 10 ms, the power spectrum of a 512-point
/// FFT, 32 mel bands, each band divided by its own slow average (PCEN: a
/// steady noise's level and colour drop out), then frames pooled three at a
/// time (30 ms). Every pooled frame ends a window of the last 32 (0.96 s),
/// given back with each band's mean over the window taken away.
///
/// Feed samples as they come; no allocation after `init`.
public struct KeywordFeatures {
    public let settings: KeywordModel.Features
    /// Pooled frames made so far.
    public private(set) var pooledFrames = 0

    private var fft: RealFFT
    private let hann: [Double]
    /// Per band: the first FFT bin and the triangle's weights from there.
    private let melFirst: [Int]
    private let melWeights: [[Double]]
    /// Samples not yet framed; at most a frame's worth after each feed.
    private var pending: [Double]
    private var pendingCount = 0
    private var frame: [Double]
    private var power: [Double]
    private var mel: [Double]
    /// PCEN's smoothed energy per band; nil until `warmUp` frames came.
    private var smoothed: [Double]
    private var warm = false
    /// kws.py starts PCEN's average at the mean of the first frames.
    private static let warmUpFrames = 10
    /// The warm-up frames' mel energies, frame-major, and how many came.
    private var early: [Double]
    private var earlyCount = 0
    private var pool: [Double]
    private var pooledCount = 0
    /// The last `window` pooled frames, a ring.
    private var ring: [Float]
    private var ringNext = 0
    /// The window handed out, and its band means.
    private var values: [Float]
    private var means: [Double]

    public init(_ settings: KeywordModel.Features) {
        self.settings = settings
        fft = RealFFT(size: settings.fft)
        hann = (0..<settings.frame).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(settings.frame)) }
        (melFirst, melWeights) = Self.melFilters(settings)
        pending = Array(repeating: 0, count: settings.frame + 16_000)
        frame = Array(repeating: 0, count: settings.fft)
        power = Array(repeating: 0, count: settings.fft / 2 + 1)
        mel = Array(repeating: 0, count: settings.bands)
        smoothed = Array(repeating: 0, count: settings.bands)
        early = Array(repeating: 0, count: Self.warmUpFrames * settings.bands)
        pool = Array(repeating: 0, count: settings.bands)
        ring = Array(repeating: 0, count: settings.window * settings.bands)
        values = Array(repeating: 0, count: settings.window * settings.bands)
        means = Array(repeating: 0, count: settings.bands)
    }

    /// kws.py's `mel_matrix`: triangles on the mel scale, edges evenly
    /// spaced from `lowHz` to `highHz`, peak 1.
    static func melFilters(_ f: KeywordModel.Features) -> ([Int], [[Double]]) {
        func mel(_ hz: Double) -> Double { 2595 * log10(1 + hz / 700) }
        func hz(_ mel: Double) -> Double { 700 * (pow(10, mel / 2595) - 1) }
        let low = mel(f.lowHz), high = mel(f.highHz)
        let edges = (0..<(f.bands + 2)).map { hz(low + (high - low) * Double($0) / Double(f.bands + 1)) }
        var first: [Int] = [], weights: [[Double]] = []
        for b in 0..<f.bands {
            let (lo, mid, hi) = (edges[b], edges[b + 1], edges[b + 2])
            var row: [(Int, Double)] = []
            for bin in 0...(f.fft / 2) {
                let freq = Double(bin) * Double(f.rate) / Double(f.fft)
                let w = max(0, min((freq - lo) / (mid - lo), (hi - freq) / (hi - mid)))
                if w > 0 { row.append((bin, w)) }
            }
            first.append(row.first?.0 ?? 0)
            weights.append(row.map(\.1))
        }
        return (first, weights)
    }

    /// Starts again as on a new stream.
    public mutating func reset() {
        pendingCount = 0
        warm = false
        earlyCount = 0
        pooledCount = 0
        pooledFrames = 0
        ringNext = 0
        for i in pool.indices { pool[i] = 0 }
    }

    /// Feeds samples; `window` is called with each new window (the values
    /// of the last `window` pooled frames, band means removed) once enough
    /// have come, and the count of pooled frames so far.
    public mutating func feed(_ samples: UnsafeBufferPointer<Int16>, window: (UnsafeBufferPointer<Float>, Int) -> Void) {
        var used = 0
        while used < samples.count {
            let room = pending.count - pendingCount
            let take = min(room, samples.count - used)
            for i in 0..<take { pending[pendingCount + i] = Double(samples[used + i]) }
            pendingCount += take
            used += take
            var start = 0
            while pendingCount - start >= settings.frame {
                spectrum(at: start)
                start += settings.hop
                normalised(window)
            }
            // Keep the unframed rest at the front.
            if start > 0 {
                let rest = pendingCount - start
                for i in 0..<rest { pending[i] = pending[start + i] }
                pendingCount = rest
            }
        }
    }

    /// The mel energies of the frame starting at `start` in `pending`, into `mel`.
    private mutating func spectrum(at start: Int) {
        for i in 0..<settings.frame { frame[i] = pending[start + i] * hann[i] }
        for i in settings.frame..<settings.fft { frame[i] = 0 }
        fft.power(of: &frame, into: &power)
        let scale = 1 / Double(settings.fft)
        for b in 0..<settings.bands {
            var sum = 0.0
            let first = melFirst[b]
            // Indices, not enumerated(): its iterator allocates in a debug build.
            for k in 0..<melWeights[b].count { sum += melWeights[b][k] * power[first + k] }
            mel[b] = sum * scale
        }
    }

    /// PCEN of the frame in `mel` (after the warm-up frames), pooled.
    private mutating func normalised(_ window: (UnsafeBufferPointer<Float>, Int) -> Void) {
        let bands = settings.bands
        if !warm {
            for b in 0..<bands { early[earlyCount * bands + b] = mel[b] }
            earlyCount += 1
            guard earlyCount == Self.warmUpFrames else { return }
            for b in 0..<bands {
                var sum = 0.0
                for f in 0..<earlyCount { sum += early[f * bands + b] }
                smoothed[b] = sum / Double(earlyCount)
            }
            warm = true
            for f in 0..<earlyCount {
                for b in 0..<bands { mel[b] = early[f * bands + b] }
                compress(window)
            }
            earlyCount = 0
            return
        }
        compress(window)
    }

    private mutating func compress(_ window: (UnsafeBufferPointer<Float>, Int) -> Void) {
        let p = settings.pcen
        let offset = pow(p.delta, p.r)
        for b in 0..<settings.bands {
            smoothed[b] = (1 - p.s) * smoothed[b] + p.s * mel[b]
            pool[b] += pow(mel[b] / pow(1e-6 + smoothed[b], p.alpha) + p.delta, p.r) - offset
        }
        pooledCount += 1
        guard pooledCount == settings.pool else { return }
        let bands = settings.bands
        let base = ringNext * bands
        for b in 0..<bands {
            ring[base + b] = Float(pool[b] / Double(settings.pool))
            pool[b] = 0
        }
        pooledCount = 0
        ringNext = (ringNext + 1) % settings.window
        pooledFrames += 1
        guard pooledFrames >= settings.window else { return }
        emit(window)
    }

    /// The window ending at the newest pooled frame, oldest first, each
    /// band's mean taken away.
    private mutating func emit(_ window: (UnsafeBufferPointer<Float>, Int) -> Void) {
        let bands = settings.bands, count = settings.window
        for b in 0..<bands { means[b] = 0 }
        for f in 0..<count {
            let source = ((ringNext + f) % count) * bands
            for b in 0..<bands {
                values[f * bands + b] = ring[source + b]
                means[b] += Double(ring[source + b])
            }
        }
        for b in 0..<bands {
            let mean = Float(means[b] / Double(count))
            for f in 0..<count { values[f * bands + b] -= mean }
        }
        let frames = pooledFrames
        values.withUnsafeBufferPointer { window($0, frames) }
    }
}

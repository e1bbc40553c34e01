import Foundation

/// Adds noise at a target SNR the way the Picovoice speech-to-intent
/// benchmark does: a random slice of the noise is scaled so that the loudest
/// 2048-sample frame of speech over the loudest 2048-sample frame of noise
/// equals the SNR (energy ratio in dB).
public struct NoiseMixer: Sendable {
    public static let frameLength = 2048
    public let noise: [Int16]

    public init(noise: PCMAudio) throws {
        guard noise.samples.count >= Self.frameLength else {
            throw SpeechError.badSetting(name: "noise", value: "\(noise.samples.count) samples", expected: "at least 2048 samples")
        }
        self.noise = noise.samples
    }

    /// Energy (mean square) of the loudest non-overlapping 2048-sample frame.
    public static func peakFrameEnergy<C: Collection>(_ x: C) -> Double where C.Element == Float {
        var best = 0.0
        var acc = 0.0
        var n = 0
        for v in x {
            acc += Double(v) * Double(v); n += 1
            if n == frameLength { best = max(best, acc / Double(n)); acc = 0; n = 0 }
        }
        if n > 0 && best == 0 { best = acc / Double(n) }
        return best
    }

    /// Speech plus noise at `snr` dB; `seed` picks the slice reproducibly.
    public func mix(_ speech: PCMAudio, snr: Double, seed: UInt64) -> PCMAudio {
        let s = speech.samples.map { Float($0) }
        let count = s.count
        var rng = SplitMix64(seed: seed)
        let start = noise.count > count ? Int(rng.next() % UInt64(noise.count - count)) : 0
        var slice = [Float](repeating: 0, count: count)
        for i in 0..<count { slice[i] = Float(noise[(start + i) % noise.count]) }
        let speechEnergy = Self.peakFrameEnergy(s)
        let noiseEnergy = Self.peakFrameEnergy(slice)
        guard noiseEnergy > 0 else { return speech }
        let gain = Float((speechEnergy / noiseEnergy / pow(10, snr / 10)).squareRoot())
        var out = [Int16](repeating: 0, count: count)
        for i in 0..<count {
            out[i] = Int16(max(-32768, min(32767, (s[i] + gain * slice[i]).rounded())))
        }
        return PCMAudio(samples: out)
    }
}

/// Small deterministic generator so noisy evaluations are reproducible.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

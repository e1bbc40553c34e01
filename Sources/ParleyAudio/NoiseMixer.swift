import Foundation

/// Mixes noise into speech the way the Picovoice speech-to-intent benchmark
/// did for its published results (docs/evaluation-data.md): a random
/// slice of the noise is scaled so that the energy of the loudest
/// 2048-sample frame of speech over the energy of the loudest 2048-sample
/// frame of noise equals the target SNR; frames are consecutive and
/// non-overlapping (a trailing partial frame is ignored), and, as in the
/// published mixer, the sum is then scaled so its peak is half of full scale
/// (no clipping). The slice start is drawn from SplitMix64(seed), so a seed
/// fixes the mix.
public enum NoiseMixer {
    /// Frame length of the peak-energy SNR definition.
    public static let frameLength = 2048

    /// Energy (sum of squares) of the loudest whole frame.
    public static func peakFrameEnergy(_ samples: ArraySlice<Int16>, frameLength: Int = frameLength) -> Double {
        var best = 0.0
        var start = samples.startIndex
        while start + frameLength <= samples.endIndex {
            var energy = 0.0
            for s in samples[start..<start + frameLength] { energy += Double(s) * Double(s) }
            best = max(best, energy)
            start += frameLength
        }
        return best
    }

    /// The slice of `noise` (of `length` samples) that `seed` selects.
    public static func noiseSlice(_ noise: [Int16], length: Int, seed: UInt64) -> ArraySlice<Int16> {
        precondition(noise.count >= length, "noise (\(noise.count) samples) shorter than speech (\(length))")
        var rng = SplitMix64(seed: seed)
        let start = Int(rng.next() % UInt64(noise.count - length + 1))
        return noise[start..<start + length]
    }

    /// Speech plus a seeded random slice of noise at `snrDB` (peak-frame definition).
    public static func mix(speech: [Int16], noise: [Int16], snrDB: Double, seed: UInt64) -> [Int16] {
        let slice = noiseSlice(noise, length: speech.count, seed: seed)
        let speechEnergy = peakFrameEnergy(speech[...])
        let noiseEnergy = peakFrameEnergy(slice)
        let scale = noiseEnergy > 0 ? (speechEnergy / (noiseEnergy * pow10(snrDB / 10))).squareRoot() : 0
        var mixed = [Double](repeating: 0, count: speech.count)
        var peak = 0.0
        for i in 0..<speech.count {
            let v = Double(speech[i]) + Double(slice[slice.startIndex + i]) * scale
            mixed[i] = v
            peak = max(peak, abs(v))
        }
        let normalise = peak > 0 ? 32767 / (2 * peak) : 1
        return mixed.map { Int16(($0 * normalise).rounded()) }
    }

    private static func pow10(_ x: Double) -> Double { Foundation.pow(10, x) }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator whose
/// output is the same on every platform and Swift version.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

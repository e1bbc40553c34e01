import Foundation

/// Speech-like audio without a synthesiser: light noise with "words" —
/// 250 ms bursts of a voiced 200 Hz tone and 100 ms gaps, as syllables —
/// wherever `words` says (seconds). The endpointer takes the words for
/// speech and the gaps for nothing; tests of the listening path that need
/// no recogniser (a `ScriptedDecoder` decides what was said) use it.
public enum SyntheticSpeech {
    /// `noise`: the peak of the noise under everything (200 is a quiet
    /// room; the words peak at 6,000).
    public static func samples(seconds: Double, words: [ClosedRange<Double>], seed: UInt64 = 7,
                               noise: Double = 200) -> [Int16] {
        var state = seed
        return (0..<Int(seconds * 16_000)).map { i in
            // A 64-bit LCG (Knuth's MMIX constants): deterministic noise, no dependency.
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let t = Double(i) / 16_000
            var v = (Double((state >> 33) % 2_001) - 1_000) / 1_000 * noise
            if let word = words.first(where: { $0.contains(t) }), (t - word.lowerBound).truncatingRemainder(dividingBy: 0.35) < 0.25 {
                v += 6_000 * sin(2 * Double.pi * 200 * t)
            }
            return Int16(max(-32_768, min(32_767, v)))
        }
    }
}

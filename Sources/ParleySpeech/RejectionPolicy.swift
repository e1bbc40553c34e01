import Foundation

/// Noise-aware rejection threshold for the command stage. The phone-loop
/// likelihood ratio (`CommandResult.confidence`) of real commands falls as
/// noise rises (the noise fits the free phone loop better than the forced
/// command path), so one fixed threshold either accepts too much in quiet or
/// rejects real commands in noise. The policy estimates the utterance's SNR
/// from its own frames and relaxes the threshold linearly below `cleanSNR`.
public struct RejectionPolicy: Sendable, Hashable {
    /// At and above this SNR (dB) the base threshold applies unchanged.
    public var cleanSNR: Double
    /// Threshold relaxation per dB of SNR below `cleanSNR` (confidence units,
    /// natural log per frame). 0 makes the threshold fixed.
    public var relaxPerDecibel: Double
    /// The most the threshold is relaxed.
    public var maximumRelaxation: Double
    /// The most speech the command path may leave as silence
    /// (`RejectionEvidence.absorbedSpeech`, weighted by `quietWeight`):
    /// 1 rejects when more is left over than was recognised.
    public var maximumAbsorbedSpeech: Double
    /// The absorbed-speech check fades in over this many dB above
    /// `cleanSNR`: in noise the phone loop decodes the noise itself as
    /// phones, so leftover "speech" means nothing there.
    public var quietSpan: Double

    public init(cleanSNR: Double = 30, relaxPerDecibel: Double = 0.1, maximumRelaxation: Double = 3,
                maximumAbsorbedSpeech: Double = 1, quietSpan: Double = 20) {
        self.cleanSNR = cleanSNR
        self.relaxPerDecibel = relaxPerDecibel
        self.maximumRelaxation = maximumRelaxation
        self.maximumAbsorbedSpeech = maximumAbsorbedSpeech
        self.quietSpan = quietSpan
    }

    /// How much the absorbed-speech check counts at `snr`: 0 at and below
    /// `cleanSNR`, 1 from `cleanSNR + quietSpan` up.
    public func quietWeight(snr: Double) -> Double {
        guard quietSpan > 0 else { return snr > cleanSNR ? 1 : 0 }
        return min(1, max(0, (snr - cleanSNR) / quietSpan))
    }

    /// The threshold for an utterance: `base` lowered by the estimated noise.
    public func threshold(base: Double, samples: [Int16]) -> Double {
        guard relaxPerDecibel > 0 else { return base }
        return threshold(base: base, snr: Self.estimatedSNR(samples))
    }

    public func threshold(base: Double, snr: Double) -> Double {
        base - min(maximumRelaxation, max(0, cleanSNR - snr) * relaxPerDecibel)
    }

    /// A rough SNR (dB) of an utterance: the level of its loud frames (95th
    /// percentile of 20 ms frame energies) over its noise floor (10th
    /// percentile), the floor being the frames outside speech that the
    /// endpointer leaves around every utterance. 60 dB for digital silence.
    /// (The wake verifier's window asks for 10 ms frames and the 90th.)
    public static func estimatedSNR(_ samples: [Int16], frame: Int = 320, loudPercentile: Int = 95) -> Double {
        guard samples.count >= frame * 4 else { return 60 }
        var levels: [Double] = []
        levels.reserveCapacity(samples.count / frame)
        var start = 0
        while start + frame <= samples.count {
            var sum = 0.0
            for i in start..<(start + frame) { let x = Double(samples[i]); sum += x * x }
            levels.append(10 * log10(sum / Double(frame) + 1))
            start += frame
        }
        levels.sort()
        let floor = levels[levels.count / 10]
        let loud = levels[min(levels.count - 1, levels.count * loudPercentile / 100)]
        return min(60, max(0, loud - floor))
    }
}

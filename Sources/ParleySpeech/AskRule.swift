import Foundation

/// When a command the recogniser accepted is asked back ("Did you say ...?",
/// one yes/no turn) instead of acted on (issue 26 item 3). In noise the
/// recogniser's confidence of a wrong command is often as high as the
/// rejection threshold lets through: kitchen noise at 6 dB made one command
/// in three a wrong action. Below a line (the utterance's phone-loop ratio,
/// or its weakest word's) the command is accepted but checked first; a
/// wrong one is then answered "no" and nothing is done.
///
/// The lines were chosen by `scripts/eval-confidence.sh` on the training
/// noises (never kitchen.wav): the lowest `10 x wrong actions + asks of
/// right commands` over a grid, one pair of lines below `splitSNR` (the
/// utterance's estimated SNR, `RejectionEvidence.snr`) and one at and above
/// it. The ratios themselves, not their margin over the noise-relaxed
/// rejection threshold, and two bands rather than one or other splits:
/// those alternatives cost more on the held-out folds. BENCHMARKS.md,
/// "Asking when unsure (issue 26 item 3)".
public struct AskRule: Sendable, Hashable {
    /// A band's lines: below either, the command is asked back.
    public struct Lines: Sendable, Hashable {
        /// `CommandResult.confidence` (the utterance's ratio per frame).
        public var confidence: Double
        /// `RejectionEvidence.weakestWord` (its lowest word's ratio).
        public var weakestWord: Double

        public init(confidence: Double, weakestWord: Double) {
            self.confidence = confidence
            self.weakestWord = weakestWord
        }
    }

    /// For utterances whose estimated SNR is below `splitSNR`.
    public var noisy: Lines
    /// At and above `splitSNR`.
    public var quiet: Lines
    /// dB.
    public var splitSNR: Double

    public init(noisy: Lines = Lines(confidence: -0.3, weakestWord: -2.5),
                quiet: Lines = Lines(confidence: 0, weakestWord: -8), splitSNR: Double = 20) {
        self.noisy = noisy
        self.quiet = quiet
        self.splitSNR = splitSNR
    }

    /// Whether an utterance falls in the noisy band (its estimated SNR below `splitSNR`).
    public func isNoisy(_ evidence: RejectionEvidence) -> Bool { evidence.snr < splitSNR }

    /// Whether an accepted `result` is asked back. Results without rejection
    /// evidence (rejection off: nothing measured) and rejected ones are not.
    public func asks(_ result: CommandResult) -> Bool {
        guard result.match != nil, result.rejection == nil, let evidence = result.evidence else { return false }
        let lines = isNoisy(evidence) ? noisy : quiet
        return result.confidence < lines.confidence || evidence.weakestWord < lines.weakestWord
    }
}

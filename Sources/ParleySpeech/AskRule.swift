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
        /// The lowest lattice posterior of any word
        /// (`RejectionEvidence.WordEvidence.posterior`); 0: not read.
        public var posterior: Double

        public init(confidence: Double, weakestWord: Double, posterior: Double = 0) {
            self.confidence = confidence
            self.weakestWord = weakestWord
            self.posterior = posterior
        }
    }

    /// For utterances whose estimated SNR is below `splitSNR`.
    public var noisy: Lines
    /// At and above `splitSNR`.
    public var quiet: Lines
    /// dB.
    public var splitSNR: Double
    /// A word whose lattice posterior is below this is doubted (`doubted`).
    public var doubtPosterior: Double

    public init(noisy: Lines = Lines(confidence: -0.3, weakestWord: -2.5),
                quiet: Lines = Lines(confidence: 0, weakestWord: -8), splitSNR: Double = 20,
                doubtPosterior: Double = 0.9) {
        self.noisy = noisy
        self.quiet = quiet
        self.splitSNR = splitSNR
        self.doubtPosterior = doubtPosterior
    }

    /// The SNR the bands are split on: the room's, before the neural front
    /// end when one ran (`RejectionEvidence.inputSNR`), since the lines were
    /// chosen for how noisy the room is and denoised audio reads quiet.
    public func bandSNR(_ evidence: RejectionEvidence) -> Double { evidence.inputSNR ?? evidence.snr }

    /// Whether an utterance falls in the noisy band (its estimated SNR below `splitSNR`).
    public func isNoisy(_ evidence: RejectionEvidence) -> Bool { bandSNR(evidence) < splitSNR }

    /// Whether an accepted `result` is asked back. Results without rejection
    /// evidence (rejection off: nothing measured) and rejected ones are not.
    public func asks(_ result: CommandResult) -> Bool {
        guard result.match != nil, result.rejection == nil, let evidence = result.evidence else { return false }
        let lines = isNoisy(evidence) ? noisy : quiet
        let lowestPosterior = evidence.words.compactMap(\.posterior).min() ?? 1
        return result.confidence < lines.confidence || evidence.weakestWord < lines.weakestWord
            || lowestPosterior < lines.posterior
    }

    /// The words of an asked-back command that the recogniser doubts: those
    /// whose lattice posterior is below `doubtPosterior`, in order. When they
    /// are all one slot's value, that slot alone is asked back ("Large, did
    /// I hear that right?"); empty (no lattice, or every word likely) means
    /// the doubt is the command's as a whole, asked back whole.
    public func doubted(_ result: CommandResult) -> [String] {
        guard let evidence = result.evidence else { return [] }
        return evidence.words.filter { ($0.posterior ?? 1) < doubtPosterior }.map(\.word)
    }
}

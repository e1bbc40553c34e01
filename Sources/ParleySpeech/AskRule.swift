import Foundation

/// When a command the recogniser accepted is asked back ("Did you say ...?",
/// one yes/no turn) instead of acted on (issue 26 item 3). In noise the
/// recogniser's confidence of a wrong command is often as high as the
/// rejection threshold lets through: kitchen noise at 6 dB made one command
/// in three a wrong action. Below a line (the utterance's phone-loop ratio,
/// or its weakest word's) the command is accepted but checked first; a
/// wrong one is then answered "no" and nothing is done.
///
/// The lines were chosen by `training/bin/eval-confidence.sh` on the training
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
    /// The rule for what the neural front end denoised (the evidence
    /// carries `inputSNR`): its own lines, chosen on denoised audio, since
    /// the network changes both the ratios and the SNR the decoder sees.
    /// Nil: the lines above, split on the room's SNR.
    public var denoised: Bands?

    /// A whole rule's lines, for one kind of audio.
    public struct Bands: Sendable, Hashable {
        public var noisy: Lines
        public var quiet: Lines
        public var splitSNR: Double
        /// Whether the split reads the room's SNR (before the network,
        /// `RejectionEvidence.inputSNR`) or the denoised audio's (`snr`).
        public var splitsOnRoom: Bool
        public var doubtPosterior: Double

        public init(noisy: Lines, quiet: Lines, splitSNR: Double, splitsOnRoom: Bool, doubtPosterior: Double) {
            self.noisy = noisy
            self.quiet = quiet
            self.splitSNR = splitSNR
            self.splitsOnRoom = splitsOnRoom
            self.doubtPosterior = doubtPosterior
        }
    }

    public init(noisy: Lines = Lines(confidence: -0.3, weakestWord: -2.5),
                quiet: Lines = Lines(confidence: 0, weakestWord: -8), splitSNR: Double = 20,
                doubtPosterior: Double = 0.9, denoised: Bands? = AskRule.neural) {
        self.noisy = noisy
        self.quiet = quiet
        self.splitSNR = splitSNR
        self.doubtPosterior = doubtPosterior
        self.denoised = denoised
    }

    /// The lines that apply to `evidence`: `denoised`'s when the neural
    /// front end ran and there is such a rule, otherwise the plain ones
    /// (split on the room's SNR when the network ran: denoised audio reads
    /// quiet whatever the room).
    public func bands(_ evidence: RejectionEvidence) -> Bands {
        if evidence.inputSNR != nil, let denoised { return denoised }
        return Bands(noisy: noisy, quiet: quiet, splitSNR: splitSNR, splitsOnRoom: true, doubtPosterior: doubtPosterior)
    }

    /// Whether an utterance falls in its rule's noisy band.
    public func isNoisy(_ evidence: RejectionEvidence) -> Bool {
        let bands = bands(evidence)
        return (bands.splitsOnRoom ? evidence.inputSNR ?? evidence.snr : evidence.snr) < bands.splitSNR
    }

    /// Whether an accepted `result` is asked back. Results without rejection
    /// evidence (rejection off: nothing measured), rejected ones and
    /// corroborated ones are not.
    public func asks(_ result: CommandResult) -> Bool {
        guard result.match != nil, result.rejection == nil, let evidence = result.evidence,
              !evidence.corroborated else { return false }
        let bands = bands(evidence)
        let lines = isNoisy(evidence) ? bands.noisy : bands.quiet
        let lowestPosterior = evidence.words.compactMap(\.posterior).min() ?? 1
        return result.confidence < lines.confidence || evidence.weakestWord < lines.weakestWord
            || lowestPosterior < lines.posterior
    }

    /// The rule for denoised audio (issue 49), chosen by
    /// `training/bin/eval-ask-neural.sh` on five folds of the coffee recordings
    /// in kitchen noise through the network (the cost of
    /// `training/bin/eval-confidence.sh`): in a room under 20 dB (its SNR
    /// before the network) a confidence under -0.1 or a word more than 4.5
    /// below the phone loop asks; at and above 20 dB nothing does (the old
    /// lines asked 7% of clean orders and caught no wrong one). Chosen
    /// again with corroboration (`RejectionEvidence.corroborated`: what the
    /// network's decode and the plain one agree on is never asked, so the
    /// lines are fitted on the rest), the folds kept the noisy band's lines
    /// and added a weakest-word line of -4 in the quiet band; that line is
    /// left out: built-ins are never corroborated, and it would ask about
    /// one quiet-room command in seven that has a weak word (16 of the 111
    /// clean orders), which the orders alone cannot show. No posterior line:
    /// the daemon does not compute them (`measuresWordPosteriors`: their
    /// latency). The doubt line is 0 (nothing is asked by one slot alone):
    /// held out, asking the doubted slot alone made one more wrong action
    /// at 12 dB and averted none (the posteriors fall on "a" against "an"
    /// far more than on a misheard value). BENCHMARKS.md, "Asking on
    /// denoised audio".
    public static let neural = Bands(
        noisy: Lines(confidence: -0.1, weakestWord: -4.5),
        quiet: Lines(confidence: -3, weakestWord: -.infinity), splitSNR: 20, splitsOnRoom: true, doubtPosterior: 0)

    /// The words of an asked-back command that the recogniser doubts: those
    /// whose lattice posterior is below `doubtPosterior`, in order. When they
    /// are all one slot's value, that slot alone is asked back ("Large, did
    /// I hear that right?"); empty (no lattice, or every word likely) means
    /// the doubt is the command's as a whole, asked back whole.
    public func doubted(_ result: CommandResult) -> [String] {
        guard let evidence = result.evidence else { return [] }
        let line = bands(evidence).doubtPosterior
        return evidence.words.filter { ($0.posterior ?? 1) < line }.map(\.word)
    }
}

/// Rejection while an utterance is still being spoken (issue 27 item 4),
/// measured and not shipped.
///
/// Idle listening pays for its two decoders (the command grammar and the
/// free phone loop rejection compares it with) on every stretch of speech
/// the endpointer hears; a television's speech is forced into the grammar
/// for up to ten seconds per utterance, and only the phone-loop comparison
/// at the end rejects it. The idea: make that comparison on the words
/// decoded so far (`RejectionEvidence.ratio` without the word still being
/// decoded, against the utterance's own noise-relaxed threshold) and, once
/// it is `margin` below the line, end both decoders and ignore the rest.
///
/// Measured (scripts/eval-early-reject.sh at 2f148e6; BENCHMARKS.md, "Rejecting while
/// spoken"): the words so far do not tell television from a command early
/// enough. Right commands in noise look as low as -4.2 below the line at
/// 1.5 s and -1.7 at 3 s, while television speech sits at -0.5 to -2.1; the
/// margin that loses no right command on the training folds leaves none of
/// the television undecoded. So the daemon decodes every utterance to its
/// end, and this stays for `parley understand --reject-early` (measuring,
/// and trying other numbers) until a sharper early signal exists.
public struct EarlyRejection: Sendable, Equatable {
    /// Audio fed (the decoder lead-in included) before the first look.
    public var firstLookSamples: Int
    /// Audio fed between two looks.
    public var intervalSamples: Int
    /// How far below the threshold the words so far must score to give the
    /// utterance up; nil looks and records (`CommandResult.looks`) without
    /// ever giving up, for measuring.
    public var margin: Double?

    public init(firstLookSamples: Int, intervalSamples: Int, margin: Double?) {
        precondition(firstLookSamples > 0 && intervalSamples > 0,
                     "EarlyRejection: look after \(firstLookSamples) and every \(intervalSamples) samples, expected positive counts")
        self.firstLookSamples = firstLookSamples
        self.intervalSamples = intervalSamples
        self.margin = margin
    }

    /// Looks every 250 ms from 750 ms on and gives nothing up: what
    /// `parley understand --reject-early measure` prints.
    public static let measuring = EarlyRejection(firstLookSamples: 12_000, intervalSamples: 4_000, margin: nil)

    /// `off`, `measure`, or `MARGIN[:FIRST_MS[:INTERVAL_MS]]` (the interval
    /// 250 ms and the first look 1 500 ms when not given); nil for off.
    public static func parse(_ text: String) throws -> EarlyRejection? {
        switch text {
        case "off": return nil
        case "measure": return .measuring
        default:
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (1...3).contains(parts.count), let margin = Double(parts[0]), margin >= 0,
                  let first = parts.count > 1 ? Int(parts[1]) : 1_500, first > 0,
                  let interval = parts.count > 2 ? Int(parts[2]) : 250, interval > 0 else {
                throw SpeechError.badSetting(
                    name: "early rejection", value: text,
                    expected: "off, measure or MARGIN[:FIRST_MS[:INTERVAL_MS]] (a margin of at least 0, positive milliseconds)")
            }
            return EarlyRejection(firstLookSamples: first * 16, intervalSamples: interval * 16, margin: margin)
        }
    }
}

/// One look at an utterance while it was spoken.
public struct PartialLook: Sendable, Equatable {
    /// Audio fed when it was taken (16 kHz samples, lead-in included).
    public var fedSamples: Int
    /// The words-so-far ratio minus the threshold (negative: below it).
    public var margin: Double
}

extension CommandScoring {
    /// The evidence on the words finished so far of a search still running:
    /// the last segment of the command path (a word or silence still being
    /// decoded, scored over part of its frames) is left out, and nil when no
    /// finished word remains.
    static func partialEvidence(_ words: [SphinxDecoder.Segment], loop: [SphinxDecoder.Segment],
                                threshold: Double, snr: Double) -> RejectionEvidence? {
        let finished = words.dropLast()
        guard finished.contains(where: { !$0.isFiller }) else { return nil }
        return evidence(Array(finished), loop: loop, threshold: threshold, snr: snr)
    }
}

/// Rejection while an utterance is still being spoken (issue 27 item 4).
///
/// Idle listening pays for its two decoders (the command grammar and the
/// free phone loop rejection compares it with) on every stretch of speech
/// the endpointer hears. A television talks all day: its speech is forced
/// into the grammar for up to the endpointer's ten seconds per utterance,
/// and only the phone-loop comparison at the end rejects it. The same
/// comparison made on the words decoded so far says much earlier that
/// this is not a command; `StreamingCommandDecoder` then ends both
/// decoders and ignores the rest of the utterance.
///
/// The comparison is `RejectionEvidence.ratio` on the words finished so
/// far (the word still being decoded is left out: its score is partial),
/// against the utterance's own noise-relaxed threshold. A command is given
/// up only when it is `margin` below that line, where commands said to the
/// device were never seen (scripts/eval-early-reject.sh chose the numbers on
/// folds; BENCHMARKS.md, "Rejecting while spoken").
public struct EarlyRejection: Sendable, Equatable {
    /// Audio fed (the decoder lead-in included) before the first look.
    public var firstLookSamples: Int
    /// Audio fed between two looks.
    public var intervalSamples: Int
    /// How far below the threshold the words so far must score to give the
    /// utterance up; nil looks and records (`RejectionEvidence.partial`)
    /// without ever giving up, for measuring.
    public var margin: Double?

    public init(firstLookSamples: Int = EarlyRejection.shipped.firstLookSamples,
                intervalSamples: Int = EarlyRejection.shipped.intervalSamples,
                margin: Double? = EarlyRejection.shipped.margin) {
        precondition(firstLookSamples > 0 && intervalSamples > 0,
                     "EarlyRejection: look after \(firstLookSamples) and every \(intervalSamples) samples, expected positive counts")
        self.firstLookSamples = firstLookSamples
        self.intervalSamples = intervalSamples
        self.margin = margin
    }

    private init(first: Int, interval: Int, margin: Double?) {
        firstLookSamples = first
        intervalSamples = interval
        self.margin = margin
    }

    /// What the daemon runs on idle listening (`speech.reject_early`).
    public static let shipped = EarlyRejection(first: 24_000, interval: 8_000, margin: 1.5)

    /// Looks every 250 ms from 750 ms on and gives nothing up: what
    /// `parley understand --reject-early measure` prints to choose the numbers.
    public static let measuring = EarlyRejection(first: 12_000, interval: 4_000, margin: nil)

    /// `off`, `on` (the shipped numbers), `measure`, or
    /// `MARGIN[:FIRST_MS[:INTERVAL_MS]]` (for evaluation); nil for off.
    public static func parse(_ text: String) throws -> EarlyRejection? {
        switch text {
        case "off": return nil
        case "on": return .shipped
        case "measure": return .measuring
        default:
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (1...3).contains(parts.count), let margin = Double(parts[0]), margin >= 0,
                  let first = parts.count > 1 ? Int(parts[1]) : shipped.firstLookSamples / 16, first > 0,
                  let interval = parts.count > 2 ? Int(parts[2]) : shipped.intervalSamples / 16, interval > 0 else {
                throw SpeechError.badSetting(
                    name: "early rejection", value: text,
                    expected: "off, on, measure or MARGIN[:FIRST_MS[:INTERVAL_MS]] (a margin of at least 0, positive milliseconds)")
            }
            return EarlyRejection(first: first * 16, interval: interval * 16, margin: margin)
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

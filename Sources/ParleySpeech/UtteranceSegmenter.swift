import ParleyAudio
import ParleyCore

/// How the listening path turns endpointed speech into decoder input; the
/// `UtteranceSegmenter` applies it.
public struct UtteranceListening: Sendable, Equatable {
    /// Audio fed to the decoders before the endpointer's segment start (which
    /// already includes its 200 ms pre-roll). PocketSphinx's noise removal
    /// and voice detector learn the room from the first frames they see; with
    /// more of the room before the words they clean the words better (kitchen
    /// noise, `parley understand`: 12 dB 85.6% → 88.3%, 6 dB 56.8% → 58.6%).
    public var decoderLeadInMilliseconds = 400
    /// When the endpointer reports the end of speech but the words so far
    /// are not yet a whole phrase of the grammar ("a large …"), the
    /// utterance is held open this long for the rest of it; speech resuming
    /// within it continues the same utterance. A whole phrase ends at once,
    /// so this costs no latency on complete commands (12 dB 88.3% → 90.1%).
    /// 0 turns it off.
    public var phraseHoldMilliseconds = 600
    /// Phrase-complete endpointing: speech that has paused this long, whose
    /// words are a whole phrase nothing in the grammar can extend ("… with
    /// milk and sugar", "yes", "the second one"), ends there instead of
    /// after the endpointer's trailing silence. A whole phrase that can
    /// still go on ("a large latte", which "with milk" may follow) waits
    /// for the trailing silence; one that is not yet whole is held as
    /// above. The endpointer reports the pause (`EndpointEvent.speechPaused`).
    /// Chosen on paused recordings (BENCHMARKS.md, "Phrase-complete
    /// endpointing"). 0 turns it off.
    public var completePhraseSilenceMilliseconds = 150
    /// The silence after which a whole phrase that the grammar can still
    /// extend ends. At or above the endpointer's trailing silence (the
    /// default) such a phrase ends at the trailing silence, as any speech.
    public var extendablePhraseSilenceMilliseconds = 600

    /// The pauses the endpointer reports: the two silences above that are on.
    var pauseMilliseconds: [Int] {
        [completePhraseSilenceMilliseconds, extendablePhraseSilenceMilliseconds].filter { $0 > 0 }
    }

    public init() {}
}

/// The one listening path's decisions, as a pure state machine: endpointer
/// events and stream positions in, decoder decisions out. One driver runs
/// it, `ListeningDriver`, for the daemon's `ListeningPipeline` (the capture
/// ring) and `RecordedUtterances` (`parley understand`, a file) alike, so
/// every accuracy figure is measured on the logic the device runs.
///
/// Positions are absolute sample positions of one stream (the ring's
/// numbering, or the file's sample index). The driver:
/// 1. passes each `EndpointEvent` to `handle(_:floor:)`,
/// 2. once a block's events are handled, calls `advance(to:)` with the
///    position one past the newest sample it has,
/// 3. carries out the decisions returned, in order. After a `.checkPhrase`
///    it asks its decoder whether the words fed so far form a whole phrase
///    and answers with `phraseChecked(whole:)`, which returns what follows.
///
/// What it decides:
/// - lead-in: an utterance's decoder input starts
///   `UtteranceListening.decoderLeadInMilliseconds` before the endpointer's
///   segment start (never before `floor`);
/// - hold-back: while in speech the decoders are fed up to the newest sample
///   minus the part of the trailing silence the endpointer will cut off
///   (trailing silence − post-roll, plus one partial frame), so they see
///   exactly the endpointed utterance and at its end only the finish remains;
/// - phrase hold: at a speech end whose words are not yet a whole phrase the
///   utterance is held open `phraseHoldMilliseconds`; speech resuming within
///   it continues the same utterance;
/// - phrase-complete end: at a pause (`speechPaused`, after
///   `completePhraseSilenceMilliseconds`) whose words are a complete phrase
///   the utterance ends at once, without waiting for the trailing silence;
/// - length bound: an utterance's speech ends at most the endpointer's
///   `maximumSegmentMilliseconds` after its start, over the whole utterance
///   (a held one that speech continues included), so speech that never
///   stops (a TV, a stuck noise source) never feeds a decoder without end.
///
/// Drivers create their `Endpointer` from `endpointer` (not from the
/// configuration they passed in): it carries the pause length.
public struct UtteranceSegmenter: Sendable {
    /// What the driver does.
    public enum Decision: Sendable, Equatable {
        /// Start an utterance on the decoders (choose its grammar now); its
        /// decoder input starts at `start` (lead-in included), the speech
        /// itself at `speech`.
        case begin(start: Int64, speech: Int64)
        /// Feed these samples to the open utterance (contiguous with the last feed).
        case feed(Range<Int64>)
        /// Everything up to the speech end (or the pause) is fed: ask the
        /// decoder how far the words have come through the grammar and
        /// answer with `phraseChecked(_:)`.
        case checkPhrase
        /// End the open utterance: everything in `utterance` has been fed;
        /// take the decoder's result.
        case finish(utterance: Range<Int64>)
        /// End the open utterance's part in `utterance` as `finish` does,
        /// while speech goes on in the next one (`split`).
        case finishPart(utterance: Range<Int64>)
        /// Drop the open utterance on the decoders.
        case cancel
    }

    /// The endpointer's configuration as given, with `pauseMilliseconds`
    /// set from `listening` (the driver's `Endpointer` uses this one).
    public let endpointer: EndpointerConfiguration
    public let listening: UtteranceListening

    /// The utterance being fed: where its decoder input starts and how far it has been fed.
    public private(set) var open: (start: Int64, fed: Int64)?
    /// A speech end held open (phrase hold): the segment's end, and the
    /// position until which more speech continues it.
    private var held: (end: Int64, until: Int64)?
    /// A speech end, or a pause of so many milliseconds, waiting for the
    /// driver's phrase check.
    private var checking: (end: Int64, pause: Int?)?
    /// The newest position seen.
    private var position: Int64 = 0
    /// One past the last sample the open utterance may reach: its speech
    /// start plus the endpointer's maximum segment length.
    private var limit: Int64 = .max

    public init(endpointer: EndpointerConfiguration = EndpointerConfiguration(),
                listening: UtteranceListening = UtteranceListening()) {
        var endpointer = endpointer
        endpointer.pauseMilliseconds = listening.pauseMilliseconds
        self.endpointer = endpointer
        self.listening = listening
    }

    private func samples(milliseconds: Int) -> Int64 {
        Int64(milliseconds) * Int64(endpointer.sampleRate) / 1000
    }

    /// The longest speech an utterance may have (the endpointer's bound on a segment).
    private var maximumSpeech: Int64 { samples(milliseconds: endpointer.maximumSegmentMilliseconds) }

    /// While in speech the utterance's end is at least this far before the
    /// newest sample (plus one frame: the endpointer may still hold a partial one).
    public var holdBack: Int64 {
        let silence = endpointer.trailingSilenceMilliseconds
        return samples(milliseconds: silence - min(endpointer.postRollMilliseconds, silence))
            + Int64(endpointer.frameSamples)
    }

    /// Whether an utterance is open (being fed, held or checked).
    public var isOpen: Bool { open != nil }

    /// An endpointer event. `floor`: the oldest position the driver can
    /// still feed from (the ring's oldest sample; 0 for a file).
    /// `holdAllowed`: whether a speech end may be held for the rest of the
    /// phrase (the driver's grammar has whole phrases to wait for).
    /// `earlyEndAllowed`: whether a pause may end a complete phrase (the
    /// driver's grammar is one of whole phrases and still the one in use).
    public mutating func handle(_ event: EndpointEvent, floor: Int64 = 0, holdAllowed: Bool = true,
                                earlyEndAllowed: Bool = true) -> [Decision] {
        switch event {
        case .speechStarted(let start, _):
            if held != nil, open != nil {      // the command goes on
                held = nil
                return []
            }
            var decisions: [Decision] = []
            if open != nil { decisions.append(.cancel) }
            let first = max(start - samples(milliseconds: listening.decoderLeadInMilliseconds), floor)
            open = (first, first)
            held = nil
            limit = max(start, floor) + maximumSpeech
            decisions.append(.begin(start: first, speech: max(start, floor)))
            return decisions
        case .speechEnded(let start, let segmentEnd, let reportedAt):
            guard open != nil else { return [] }
            let end = segmentEnd
            // A segment the endpointer cut at its bound, or an utterance at
            // its own: nothing more may join it, so no hold.
            let atBound = reportedAt - start >= maximumSpeech || end >= limit
            if listening.phraseHoldMilliseconds > 0, holdAllowed, !atBound {
                checking = (end, nil)
                return feed(upTo: end) + [.checkPhrase]
            }
            return finish(at: end)
        case .speechPaused(_, let end, _, let silence):
            // A pause inside an utterance being fed (not one already held
            // at a speech end, whose end is decided).
            guard open != nil, held == nil, checking == nil, earlyEndAllowed, silence > 0 else { return [] }
            checking = (end, silence)
            return feed(upTo: end) + [.checkPhrase]
        }
    }

    /// The driver's answer to `.checkPhrase`: how far the words fed so far
    /// have come through its grammar. At a pause a complete phrase ends the
    /// utterance after `completePhraseSilenceMilliseconds`, an extendable
    /// one after `extendablePhraseSilenceMilliseconds`; at a speech end any
    /// whole phrase does, and one not yet whole is held for the rest of it.
    public mutating func phraseChecked(_ progress: PhraseProgress) -> [Decision] {
        guard let (end, pause) = checking else { return [] }
        checking = nil
        if let pause {
            let needed = switch progress {
            // Never later than a phrase that could still go on.
            case .complete: listening.pauseMilliseconds.min() ?? 0
            case .extendable: listening.extendablePhraseSilenceMilliseconds
            case .incomplete: Int.max
            }
            return needed > 0 && pause >= needed ? finish(at: end) : []
        }
        if progress.isWhole { return finish(at: end) }
        held = (end, end + samples(milliseconds: listening.phraseHoldMilliseconds))
        return []
    }

    /// The stream reached `newest` (one past the newest sample): a held
    /// utterance whose hold ran out ends at its speech end; an open one is
    /// fed up to the hold-back.
    public mutating func advance(to newest: Int64) -> [Decision] {
        position = max(position, newest)
        if let pending = held, position >= pending.until {
            return finish(at: pending.end)
        }
        // Held utterances are fed on too: if the speech resumes, the
        // decoder needs the pause and what follows it.
        guard checking == nil else { return [] }
        // The length bound: the endpointer cuts its own segments, but a held
        // utterance that speech continued spans several.
        if open != nil, position - holdBack >= limit {
            return finish(at: held?.end ?? limit)
        }
        return feed(upTo: position - holdBack)
    }

    /// Ends the open utterance at `end`, where what it was decoded for
    /// stopped applying, and opens the next from `next` (neither before the
    /// open one's start): what was said up to `end` is decided on its own,
    /// with the grammar it began with, and the speech that goes on belongs
    /// to the next. (The device's voice stopped: what was said over it may
    /// be a "stop"; what follows, an answer.)
    public mutating func split(at end: Int64, next: Int64) -> [Decision] {
        guard let current = open else { return [] }
        var decisions = finish(at: end, part: true)
        let first = max(current.start, next)
        open = (first, first)
        limit = first + maximumSpeech
        decisions.append(.begin(start: first, speech: first))
        return decisions
    }

    /// The stream ended (a recording's end): speech still open ends there,
    /// as if the trailing silence had followed; a held one at its speech end.
    public mutating func endOfStream() -> [Decision] {
        guard open != nil else { return [] }
        return finish(at: held?.end ?? checking?.end ?? position)
    }

    /// The driver stops listening: an open utterance is dropped.
    public mutating func stop() -> [Decision] {
        guard open != nil else { return [] }
        open = nil
        held = nil
        checking = nil
        return [.cancel]
    }

    private mutating func feed(upTo end: Int64) -> [Decision] {
        guard var current = open, end > current.fed else { return [] }
        defer { current.fed = end; open = current }
        return [.feed(current.fed..<end)]
    }

    /// Feeds the open utterance up to `end` (not past its length bound) and
    /// ends it there; `part`: speech goes on in the next (`split`).
    private mutating func finish(at end: Int64, part: Bool = false) -> [Decision] {
        guard let current = open else { return [] }
        let end = min(end, limit)
        let decisions = feed(upTo: end)
        open = nil
        held = nil
        checking = nil
        let utterance = current.start..<max(current.start, end)
        return decisions + [part ? .finishPart(utterance: utterance) : .finish(utterance: utterance)]
    }
}

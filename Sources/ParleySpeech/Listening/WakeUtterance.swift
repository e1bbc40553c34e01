import ParleyCore

/// Named mode's wake detector as the daemon's listener drives it: an
/// utterance decoder that says whether the wake phrase was confirmed, and
/// that says as soon as its first stage proposes the phrase (`WakeGate`
/// starts the command decoders then).
public protocol WakeDecoding: UtteranceDecoder<Bool> {
    /// The first stage has proposed the wake phrase in the open utterance
    /// (confirmed or not: the command grammar decides commands itself).
    var proposed: Bool { get }
}

/// The wake detector on one utterance, as the listening driver's decoder:
/// `begin` resets the keyword search, `feed` streams audio through both
/// stages, `finish` says whether the wake phrase was confirmed. The daemon
/// feeds it a commands utterance from its speech start (no lead-in) to the
/// newest sample, beside the command decoder.
public final class WakeUtterance: WakeDecoding {
    public let detector: WakeDetector
    /// The wake phrase was confirmed in the open utterance.
    public private(set) var woke = false
    /// Samples fed since the detector was made: its stream times count them
    /// (``WakeDetector/reset()`` does not restart them).
    public private(set) var samplesFed: Int64 = 0
    /// Where the last confirmed wake phrase of the open utterance ended, in
    /// samples fed (``samplesFed``'s count); nil before one is confirmed.
    public private(set) var wakeEndSample: Int64?
    private var failure: (any Error)?
    /// The detector's stage-1 count when the open utterance began.
    private var proposalsBefore = 0

    public init(_ detector: WakeDetector) {
        self.detector = detector
    }

    public func begin() {
        woke = false
        wakeEndSample = nil
        failure = nil
        proposalsBefore = detector.proposals
        do { try detector.reset() } catch { failure = error }
    }

    public var proposed: Bool { detector.proposals > proposalsBefore }

    public func feed(_ samples: [Int16]) {
        defer { samplesFed += Int64(samples.count) }
        do {
            if let time = try detector.process(samples).last {
                woke = true
                wakeEndSample = Int64((time * Double(PCMAudio.sampleRate)).rounded())
            }
        } catch {
            failure = error
        }
    }

    /// The detector's latest error since the last call (the listener logs
    /// it and goes on listening: a failed feed is a missed wake word).
    public func takeFailure() -> (any Error)? {
        defer { failure = nil }
        return failure
    }

    /// No phrases of its own: the command grammar decides the end.
    public func phraseProgress() -> PhraseProgress { .extendable }

    public func finish() -> Bool { woke }

    public func cancel() {}
}

import ParleyCore

/// The wake detector on one utterance, as the listening driver's decoder:
/// `begin` resets the keyword search, `feed` streams audio through both
/// stages, `finish` says whether the wake phrase was confirmed. The daemon
/// feeds it a commands utterance from its speech start (no lead-in) to the
/// newest sample, beside the command decoder.
public final class WakeUtterance: UtteranceDecoder {
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

    public init(_ detector: WakeDetector) {
        self.detector = detector
    }

    public func begin() {
        woke = false
        wakeEndSample = nil
        failure = nil
        do { try detector.reset() } catch { failure = error }
    }

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

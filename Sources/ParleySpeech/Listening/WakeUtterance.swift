import ParleyCore

/// Named mode's wake detector as the daemon's listener drives it: an
/// utterance decoder that says whether the wake phrase was confirmed, and
/// that says as soon as its first stage proposes the phrase (`WakeGate`
/// starts the command decoders then).
public protocol WakeDecoding: UtteranceDecoder<Bool> {
    /// The first stage has proposed the wake phrase in the open utterance
    /// (confirmed or not: the command grammar decides commands itself).
    var proposed: Bool { get }
    /// Audio before the utterance's speech start the detector wants fed
    /// first, in samples (the keyword network's noise average settles on it).
    var leadInSamples: Int { get }
    /// Samples fed since the detector was made.
    var samplesFed: Int64 { get }
    /// Where the last confirmed wake phrase of the open utterance ended, in
    /// samples fed (``samplesFed``'s count); nil before one is confirmed.
    var wakeEndSample: Int64? { get }
    /// The detector's latest error since the last call (the listener logs
    /// it and goes on listening: a failed feed is a missed wake word).
    func takeFailure() -> (any Error)?
    /// Whether an utterance it never proposed the phrase in may still be a
    /// command: the listener then trusts the words for the name (not the
    /// proposal), and by default `unopenedAtEnd` decodes a short, noisy one.
    var unproposedMayBeCommands: Bool { get }
    /// What `WakeGate` does with a short utterance it never opened on, at
    /// its end: by default, decoded when noisy where
    /// `unproposedMayBeCommands`, else rejected.
    var unopenedAtEnd: WakeGate.AtEnd { get }
    /// Whether its confirmation covers "hey" too (PocketSphinx's keyphrase
    /// does; the keyword network hears the name alone, so where "hey" is
    /// required the listener asks the command decoders for it).
    var hearsHey: Bool { get }
    /// Whether the command decoders may start now (`WakeGate`): the name
    /// proposed, or for `HeyGatedWake` "hey" heard.
    var opensGate: Bool { get }
    /// Whether it gates direct mode's "hey <phrase>" commands too (`HeyGatedWake`).
    var gatesDirectCommands: Bool { get }
    /// Begins an utterance whose first sample fed (its lead-in's) is at
    /// stream position `position`. A detector whose own stream already
    /// holds the audio up to a later position may take that stream up and
    /// skip what it was fed before (`HeyGatedWake`); the default begins anew.
    func begin(at position: Int64)
}

extension WakeDecoding {
    public func begin(at position: Int64) { begin() }
    public var unproposedMayBeCommands: Bool { true }
    public var unopenedAtEnd: WakeGate.AtEnd { unproposedMayBeCommands ? .decodedWhenNoisy : .rejected }
    public var hearsHey: Bool { true }
    public var opensGate: Bool { proposed }
    public var gatesDirectCommands: Bool { false }
    public var leadInSamples: Int { 0 }
    public var samplesFed: Int64 { 0 }
    public var wakeEndSample: Int64? { nil }
    public func takeFailure() -> (any Error)? { nil }
}

/// The keyword network (`KeywordSpotter`) on one utterance, as the
/// listening driver's wake decoder: fed from half a second before the
/// speech start (as its evaluation pads each recording, so PCEN's average
/// starts from the room, not from the word) to the newest sample.
///
/// It proposes the phrase (the command decoders start, `WakeGate`) when a
/// score comes within `proposalMargin` of the threshold, and confirms it at
/// the threshold. Held out (training/bin/eval-wake-kws.sh's five folds), 399 of
/// 400 recordings of "computer", clean and with four noises at 10 dB,
/// reached that margin; an utterance that never does is not decoded as a
/// command at all (`unproposedMayBeCommands`), which is what keeps a noisy
/// room cheap: PocketSphinx's first stage missed more, so its gate decoded
/// short noisy utterances at their end.
public final class KeywordWakeUtterance: WakeDecoding {
    public let spotter: KeywordSpotter
    public let leadInSamples = PCMAudio.sampleRate / 2
    public let unproposedMayBeCommands = false
    public let hearsHey = false
    /// Logits below the threshold a score proposes the phrase at.
    public static let proposalMargin = 6.0
    public private(set) var woke = false
    /// The open utterance's highest score so far (the spotter restarts with it).
    public var peak: Double { spotter.peak }
    public private(set) var samplesFed: Int64 = 0
    public private(set) var wakeEndSample: Int64?
    /// `samplesFed` when the open utterance began: the spotter's stream times count from there.
    private var base: Int64 = 0

    public init(_ spotter: KeywordSpotter) {
        self.spotter = spotter
    }

    public func begin() {
        woke = false
        wakeEndSample = nil
        base = samplesFed
        spotter.reset()
    }

    public var proposed: Bool { woke || peak >= spotter.threshold - Self.proposalMargin }

    public func feed(_ samples: [Int16]) {
        samples.withUnsafeBufferPointer { buffer in
            spotter.feed(buffer) { end, _ in
                woke = true
                wakeEndSample = base + end
            }
        }
        samplesFed += Int64(samples.count)
    }

    public func phraseProgress() -> PhraseProgress { .extendable }

    public func finish() -> Bool { woke }

    public func cancel() {}
}

/// The PocketSphinx wake detector on one utterance, as the listening driver's decoder:
/// `begin` resets the keyword search, `feed` streams audio through both
/// stages, `finish` says whether the wake phrase was confirmed. The daemon
/// feeds it a commands utterance from its speech start (no lead-in) to the
/// newest sample, beside the command decoder.
public final class WakeUtterance: WakeDecoding {
    public let detector: WakeDetector
    /// The wake phrase was confirmed in the open utterance.
    public private(set) var woke = false
    /// Its stream times count these (``WakeDetector/reset()`` does not restart them).
    public private(set) var samplesFed: Int64 = 0
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

    public func takeFailure() -> (any Error)? {
        defer { failure = nil }
        return failure
    }

    /// No phrases of its own: the command grammar decides the end.
    public func phraseProgress() -> PhraseProgress { .extendable }

    public func finish() -> Bool { woke }

    public func cancel() {}
}

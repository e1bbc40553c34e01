import ParleyCore

/// Named mode's first stage for the command decoders. There a command
/// begins with the wake phrase ("hey computer, coffee time"), and the wake
/// detector hears every commands utterance anyway; so the command grammar
/// and its phone loop (two decoders, most of what idle listening costs with
/// a television on) start only once the detector's stage 1 proposes the
/// phrase within `windowSamples` of the utterance's speech start. Until
/// then the utterance's decoder input is held here, and handed over when
/// the proposal comes, in the pieces it arrived in (so the decoders see
/// exactly what they would have seen from the start): they catch up while
/// the person is still saying the command.
///
/// With no proposal by the end of the window the gate shuts, but goes on
/// holding up to `heldLimit`: a short utterance in noise is still decoded at
/// its end from those pieces (`remainder`). In noise the endpointer may
/// start a segment after the wake phrase has begun, and stage 1 misses a
/// few, while the command grammar, which forces the name onto what is
/// there, can still hear the command (kitchen noise at 10 dB: 5 of 72
/// commands). In a quiet room stage 1 proposed the wake phrase of every
/// development command, so talk there is left undecoded; so is speech that
/// runs on past the limit (a television).
///
/// With the keyword network (`KeywordWakeUtterance`, the default) the
/// proposal is a score near its threshold, and an utterance without one is
/// never decoded (`AtEnd.rejected`). The hey gate (`HeyGatedWake`) decodes
/// every short one at its end (`AtEnd.decodedWhenShort`): a missed "hey"
/// then costs a late answer, not the command, and what the gate saves is
/// the speech that runs on (a television's utterances of 10-15 s). With
/// PocketSphinx's detector, stage 1 is the permissive one (`WakeDetector.candidateThreshold`): it
/// proposed "computer" in all 80 clean development recordings and in 74 to
/// 79 of them mixed with noise at 10 dB. The second stage's threshold (the
/// wake sensitivity) plays no part, so a command is not held to a stricter
/// test of its wake phrase than before.
public struct WakeGate: Sendable {
    public enum State: Sendable, Equatable {
        /// No proposal yet, within the window: the input is held.
        case waiting
        /// Proposed in time: the command decoders run.
        case open
        /// The window passed without a proposal: the input is held for a
        /// decode at the end while it fits `heldLimit`.
        case shut
    }

    /// How long after the speech start the wake phrase may end, in
    /// seconds: the longest "hey <name>" the verifier's window allows,
    /// plus the block a proposal is reported in and the endpointer's lag
    /// behind the first word.
    public static let windowSeconds = WakeVerifier.windowSeconds + 0.4

    /// The longest utterance (decoder input, seconds) decoded at its end
    /// without a proposal. Every development command ("computer" and a
    /// coffee order) is under 7 s of speech, under 8 s with the lead-in;
    /// speech that runs on reaches the endpointer's 15 s limit.
    public static let heldSeconds = 8.0

    /// The same limit for the hey gate (`AtEnd.decodedWhenShort`), whose
    /// head may miss a "hey" in any room: longer, since what it leaves
    /// undecoded is lost where ungated it was not. People's recorded coffee
    /// orders, with their pauses, run to 11.6 s (95th percentile of the 111
    /// development recordings, silences included); a television's
    /// utterances mostly reach the endpointer's 15 s limit (6 of the idle
    /// scene's 8 in 120 s, the others ended by the recording or the decoders).
    public static let heySeconds = 12.0

    /// What becomes of an utterance the gate never opened on, at its end
    /// (`remainder`), when it was short enough to be a command (`heldLimit`).
    public enum AtEnd: Sendable, Equatable {
        /// Rejected undecoded: the first stage proposes every near miss itself.
        case rejected
        /// Decoded when noisy (its estimated SNR below `cleanSNR`): in noise
        /// PocketSphinx's stage 1 misses names the command grammar still hears.
        case decodedWhenNoisy
        /// Decoded whenever short: the first stage is a cheap filter, not the
        /// only way a command is heard.
        case decodedWhenShort
    }

    public private(set) var state = State.waiting
    public let windowSamples: Int64
    public let heldLimit: Int
    private var held: [[Int16]] = []
    private var heldCount = 0
    /// More than `heldLimit` came without a proposal: nothing is held.
    public private(set) var overflowed = false

    /// What a short utterance with no proposal gives at its end
    /// (`WakeDecoding.unopenedAtEnd`).
    public let atEnd: AtEnd

    /// `heldLimit` nil: `heySeconds` for `.decodedWhenShort`, else `heldSeconds`.
    public init(windowSamples: Int64 = Int64(WakeGate.windowSeconds * Double(PCMAudio.sampleRate)),
                heldLimit: Int? = nil, atEnd: AtEnd = .decodedWhenNoisy) {
        self.windowSamples = windowSamples
        let seconds = atEnd == .decodedWhenShort ? Self.heySeconds : Self.heldSeconds
        self.heldLimit = heldLimit ?? Int(seconds * Double(PCMAudio.sampleRate))
        self.atEnd = atEnd
    }

    /// The utterance's decoder input, in order; returns what the command
    /// decoders get now (nothing until the gate opens).
    public mutating func pass(_ samples: [Int16]) -> [Int16] {
        guard state != .open else { return samples }
        if !overflowed {
            heldCount += samples.count
            if heldCount <= heldLimit {
                held.append(samples)
            } else {
                overflowed = true
                held = []
            }
        }
        return []
    }

    /// The wake detector has heard `speechSamples` of the utterance's
    /// speech; `proposed`: its stage 1 has proposed the phrase. Returns the
    /// held input, piece by piece, when this opens the gate (start the
    /// command decoders and feed them each piece), nil otherwise. An
    /// utterance that outgrew `heldLimit` before its proposal cannot open
    /// (its start is gone): it began long before its wake phrase.
    public mutating func heard(speechSamples: Int64, proposed: Bool) -> [[Int16]]? {
        guard state == .waiting else { return nil }
        if proposed && !overflowed {
            state = .open
            defer { held = [] }
            return held
        }
        if speechSamples >= windowSamples { state = .shut }
        return nil
    }

    /// At the utterance's end, the gate not open: the held input, piece by
    /// piece, to decode now when it was short enough to be a command and
    /// `atEnd` allows it (`.decodedWhenNoisy`: its estimated SNR below
    /// `cleanSNR`, where the command stage starts allowing for noise:
    /// `RejectionPolicy`); nil otherwise (reject the utterance undecoded).
    public mutating func remainder(cleanSNR: Double = RejectionPolicy().cleanSNR) -> [[Int16]]? {
        defer { held = []; heldCount = 0 }
        return decodesAtEnd(cleanSNR: cleanSNR) ? held : nil
    }

    /// Whether `remainder` would give the held input, without taking it:
    /// the listener's rare path that decodes the whole utterance again with
    /// a newer grammar decides by it too.
    public func decodesAtEnd(cleanSNR: Double = RejectionPolicy().cleanSNR) -> Bool {
        guard state != .open && !overflowed else { return false }
        switch atEnd {
        case .rejected: return false
        case .decodedWhenNoisy: return RejectionPolicy.estimatedSNR(held.flatMap { $0 }) < cleanSNR
        case .decodedWhenShort: return true
        }
    }

    /// The phrase check's answer before the command decoders run (nil once
    /// they do: ask them). Waiting, the wake phrase may be under way, so a
    /// speech end is held for it; shut, the utterance ends at its trailing
    /// silence (a command whose wake phrase was missed ends a little later
    /// than it would have).
    public var progress: PhraseProgress? {
        switch state {
        case .open: nil
        case .waiting: .incomplete
        case .shut: .extendable
        }
    }
}

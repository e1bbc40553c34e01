import ParleyCore

/// Named mode's first stage for the command decoders. There a command
/// begins with the wake phrase ("hey computer, coffee time"), and the wake
/// detector hears every commands utterance anyway; so the command grammar
/// and its phone loop (two decoders, most of what idle listening costs with
/// a television on) start only once the detector's stage 1 proposes the
/// phrase within `windowSamples` of the utterance's speech start. Until
/// then the utterance's decoder input is held here, and handed over when the
/// proposal comes, in the pieces it arrived in (so the decoders see exactly
/// what they would have seen from the start): they catch up while the
/// person is still saying the command. With no proposal by the end of the window the
/// utterance cannot be a command; it is rejected undecoded.
///
/// Stage 1 is the permissive one (`WakeDetector.candidateThreshold`): it
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
        /// The window passed without a proposal: nothing is decoded.
        case shut
    }

    /// How long after the speech start the wake phrase may end, in
    /// seconds: the longest "hey <name>" the verifier's window allows,
    /// plus the block a proposal is reported in and the endpointer's lag
    /// behind the first word.
    public static let windowSeconds = WakeVerifier.windowSeconds + 0.4

    public private(set) var state = State.waiting
    public let windowSamples: Int64
    private var held: [[Int16]] = []

    public init(windowSamples: Int64 = Int64(WakeGate.windowSeconds * Double(PCMAudio.sampleRate))) {
        self.windowSamples = windowSamples
    }

    /// The utterance's decoder input, in order; returns what the command
    /// decoders get now (nothing while it is held, or once shut).
    public mutating func pass(_ samples: [Int16]) -> [Int16] {
        switch state {
        case .open: return samples
        case .waiting: held.append(samples); return []
        case .shut: return []
        }
    }

    /// The wake detector has heard `speechSamples` of the utterance's
    /// speech; `proposed`: its stage 1 has proposed the phrase. Returns the
    /// held input, piece by piece, when this opens the gate (start the
    /// command decoders and feed them each piece), nil otherwise.
    public mutating func heard(speechSamples: Int64, proposed: Bool) -> [[Int16]]? {
        guard state == .waiting else { return nil }
        if proposed {
            state = .open
            defer { held = [] }
            return held
        }
        if speechSamples >= windowSamples {
            state = .shut
            held = []
        }
        return nil
    }

    /// The phrase check's answer before the command decoders run (nil once
    /// they do: ask them). Waiting, the wake phrase may be under way, so a
    /// speech end is held for it; shut, no phrase of the grammar can come,
    /// so the utterance ends at its trailing silence.
    public var progress: PhraseProgress? {
        switch state {
        case .open: nil
        case .waiting: .incomplete
        case .shut: .extendable
        }
    }
}

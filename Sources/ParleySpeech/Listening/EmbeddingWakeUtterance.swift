import ParleyCore
import ParleyWake

/// The speech_embedding wake head (ParleyWake's `EmbeddingSpotter`) on one
/// utterance, as the listening driver's wake decoder (`wake.detector:
/// embedding`). Fed from `leadInSamples` before the speech start: the
/// head's first window ends about 2 s into its stream, and the room before
/// the word is what the recordings it trained on had too.
///
/// It proposes the phrase (`WakeGate` starts the command decoders) when a
/// score comes within `proposalMargin` of the threshold, confirms it at the
/// threshold, and, as the keyword network, leaves utterances it never
/// proposed the phrase in undecoded (`unproposedMayBeCommands`): a noisy
/// room costs the embedding, never the command decoders.
public final class EmbeddingWakeUtterance: WakeDecoding {
    public let spotter: EmbeddingSpotter
    public let leadInSamples = 2 * PCMAudio.sampleRate
    public let unproposedMayBeCommands = false
    public let hearsHey = false
    /// Logits below the threshold a score proposes the phrase at.
    public static let proposalMargin = 4.0
    public private(set) var woke = false
    public private(set) var samplesFed: Int64 = 0
    public private(set) var wakeEndSample: Int64?
    /// `samplesFed` when the open utterance began: the spotter's stream times count from there.
    private var base: Int64 = 0

    public init(_ spotter: EmbeddingSpotter) {
        self.spotter = spotter
    }

    public func begin() {
        woke = false
        wakeEndSample = nil
        base = samplesFed
        spotter.reset()
    }

    public var proposed: Bool { woke || spotter.peak >= spotter.threshold - Self.proposalMargin }

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

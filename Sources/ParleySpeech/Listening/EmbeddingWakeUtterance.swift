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
///
/// With a first stage (the name's keyword network, `KeywordSpotter`, about
/// a seventh of the embedding's cost) the embedding sleeps until the
/// network's score comes within `firstStageMargin` of its threshold; then
/// it hears the last `replaySamples` of the utterance at once and streams
/// on. Speech that sounds nothing like the name (a television, a
/// conversation) then costs the network alone. Once the network has been
/// far from its line for `sleepSamples` and the embedding is far from its
/// proposal line too, the embedding sleeps again: a television's utterance
/// runs on for 10-15 s after one word that sounded like the name.
public final class EmbeddingWakeUtterance: WakeDecoding {
    public let spotter: EmbeddingSpotter
    public let firstStage: KeywordSpotter?
    public let leadInSamples = 2 * PCMAudio.sampleRate
    /// Logits below the network's threshold that wake the embedding. Of the
    /// 244 development recordings of "computer" in kitchen noise at 10 dB,
    /// the network's proposal margin (6) let 234 through, 10 let 242; 10
    /// wakes the embedding on 57 of 300 real utterances of other wake
    /// words (BENCHMARKS.md, "A wake word real speech cannot fool").
    public static let firstStageMargin = 10.0
    /// What the embedding hears when the first stage wakes it: the head's
    /// whole context (about 2 s) and the word's start before it.
    public static let replaySamples = 3 * PCMAudio.sampleRate
    /// How long the network stays below its waking line before the
    /// embedding sleeps again: as long as the replay, so that a name said
    /// after it is heard whole from the replay when the network wakes it.
    public static let sleepSamples = 3 * PCMAudio.sampleRate
    /// `samplesFed` after the last block in which the network came within
    /// `firstStageMargin` of its threshold.
    private var lastNear: Int64 = 0
    /// The highest score of the embedding's streams before the current one
    /// (each waking starts a stream anew).
    private var earlierPeak = -Double.infinity
    /// The embedding has run in the open utterance.
    public private(set) var embeddingAwake = false
    private var recent: [Int16]
    private var recentNext = 0
    private var recentCount = 0
    public let unproposedMayBeCommands = false
    public let hearsHey = false
    /// Logits below the threshold a score proposes the phrase at.
    public static let proposalMargin = 4.0
    public private(set) var woke = false
    public private(set) var samplesFed: Int64 = 0
    public private(set) var wakeEndSample: Int64?
    /// `samplesFed` when the open utterance began: the spotter's stream times count from there.
    private var base: Int64 = 0

    /// The decoder for a head file as the daemon and `parley detect-wake`
    /// run it: the speech_embedding models from where they are installed,
    /// and the name's keyword network (`networkPath`, where there is one) as
    /// the first stage, both at `sensitivity`.
    public static func load(head: String, networkPath: String?, sensitivity: Double) throws -> EmbeddingWakeUtterance {
        let weights = try SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate())
        let spotter = EmbeddingSpotter(model: try EmbeddingWakeModel.load(head), weights: weights, sensitivity: sensitivity)
        let first = networkPath.flatMap { try? KeywordModel.load($0) }.map { KeywordSpotter(model: $0, sensitivity: sensitivity) }
        return EmbeddingWakeUtterance(spotter, firstStage: first)
    }

    public init(_ spotter: EmbeddingSpotter, firstStage: KeywordSpotter? = nil) {
        self.spotter = spotter
        self.firstStage = firstStage
        recent = Array(repeating: 0, count: firstStage == nil ? 0 : Self.replaySamples)
    }

    public func begin() {
        woke = false
        wakeEndSample = nil
        base = samplesFed
        streamOffset = 0
        spotter.reset()
        firstStage?.reset()
        embeddingAwake = firstStage == nil
        recentNext = 0
        recentCount = 0
        lastNear = samplesFed
        earlierPeak = -.infinity
    }

    /// The highest score the embedding gave in the open utterance.
    public var peak: Double { max(earlierPeak, spotter.peak) }
    public var proposed: Bool { woke || peak >= spotter.threshold - Self.proposalMargin }

    public func feed(_ samples: [Int16]) {
        defer { samplesFed += Int64(samples.count) }
        guard let firstStage else {
            stream(samples)
            return
        }
        samples.withUnsafeBufferPointer { firstStage.feed($0) { _, _ in } }
        remember(samples)
        let now = samplesFed + Int64(samples.count)
        if firstStage.lastFeedPeak >= firstStage.threshold - Self.firstStageMargin { lastNear = now }
        if !embeddingAwake {
            guard lastNear == now else { return }
            embeddingAwake = true
            // A stream after a sleep starts anew; its scores so far are kept.
            if spotter.embeddings > 0 {
                earlierPeak = peak
                spotter.reset()
            }
            // The stream the embedding hears starts `replayed` samples back.
            let replayed = replay()
            streamOffset = Int64(now - base) - Int64(replayed.count)
            stream(replayed)
            return
        }
        stream(samples)
        if !proposed, now - lastNear >= Int64(Self.sleepSamples) {
            embeddingAwake = false
        }
    }

    /// Where the embedding's stream starts in the utterance (0 without a first stage).
    private var streamOffset: Int64 = 0

    private func stream(_ samples: [Int16]) {
        samples.withUnsafeBufferPointer { buffer in
            spotter.feed(buffer) { end, _ in
                woke = true
                wakeEndSample = base + streamOffset + end
            }
        }
    }

    private func remember(_ samples: [Int16]) {
        let n = recent.count
        for s in samples.suffix(n) {
            recent[recentNext] = s
            recentNext = (recentNext + 1) % n
        }
        recentCount = min(n, recentCount + samples.count)
    }

    /// The remembered samples, oldest first.
    private func replay() -> [Int16] {
        let n = recent.count
        return (0..<recentCount).map { recent[(recentNext - recentCount + $0 + n) % n] }
    }

    public func phraseProgress() -> PhraseProgress { .extendable }

    public func finish() -> Bool { woke }

    public func cancel() {}
}

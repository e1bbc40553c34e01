import Foundation

/// The listening pipeline's one seam for Home Assistant: a command said
/// after the wake word that no phrase of Parley's matched, with its audio
/// from the wake word's end (nothing earlier) to the utterance's end, the
/// capture rate, what the recogniser made of it (for logs) and when the
/// person stopped speaking. Called on the listen thread: it must not block.
public typealias RejectedUtteranceHandler =
    @Sendable (_ samples: [Int16], _ sampleRate: Int, _ heard: String, _ spokenEnd: ContinuousClock.Instant) -> Void

extension ListeningPipeline {
    /// Sets (or clears) where rejected commands go (``RejectedUtteranceHandler``).
    public func onRejected(_ handler: RejectedUtteranceHandler?) {
        rejectedHandler.withLock { $0 = handler }
    }

    /// Where a rejected utterance's command starts, or nil when it is not a
    /// command to hand on:
    /// - "hey <name>" confirmed, then words no phrase matched: from the wake
    ///   phrase's end, if enough follows it to be more than the trailing
    ///   silence ("hey <name>" alone opens the window, as before);
    /// - in the window the wake word opened (or the button): the whole utterance.
    static func rejectedCommandStart(kind: Kind, wakeEnd: Int64?, woke: Bool, utteranceStart: Int64, end: Int64,
                                     minimumSamples: Int64) -> Int64? {
        switch kind {
        case .commands:
            guard woke, let wakeEnd, end - wakeEnd >= minimumSamples else { return nil }
            return wakeEnd
        case .window:
            return end - utteranceStart >= minimumSamples ? utteranceStart : nil
        case .followUp, .dictation, .bargeIn:
            return nil
        }
    }

    /// The endpointer's trailing silence and 0.4 s of words: less than that after the
    /// wake word is the wake word alone.
    static func minimumRejectedSamples(_ trailingSilence: Duration, rate: Int) -> Int64 {
        let silence = Double(trailingSilence.components.seconds) + Double(trailingSilence.components.attoseconds) / 1e18
        return Int64((silence + 0.4) * Double(rate))
    }
}

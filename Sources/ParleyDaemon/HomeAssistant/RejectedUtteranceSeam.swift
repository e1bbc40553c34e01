import Foundation
import ParleySpeech

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

    /// Hands a rejected command to the handler set with ``onRejected(_:)``,
    /// when there is one and the utterance is a command to hand on
    /// (``rejectedCommandStart(kind:wakeEnd:woke:utteranceStart:end:minimumSamples:)``);
    /// whether it did (then the outcome is not acted on: Home Assistant answers).
    func handOnRejected(_ outcome: ListeningOutcome, kind: ListeningKind, heard: String, wakeEnd: Int64?, woke: Bool,
                        utterance: Range<Int64>, spokenEnd: ContinuousClock.Instant) -> Bool {
        switch outcome {
        case .reject, .woken: break
        case .ignored, .interrupt, .interruptWith, .text: return false
        }
        guard let rejected = rejectedHandler.withLock({ $0 }) else { return false }
        let ring = capture.ring
        guard let start = Self.rejectedCommandStart(kind: kind, wakeEnd: wakeEnd, woke: woke, utteranceStart: utterance.lowerBound,
                                                    end: utterance.upperBound,
                                                    minimumSamples: Self.minimumRejectedSamples(endpointSilence, rate: ring.sampleRate))
        else { return false }
        shared.withLock { $0.rejections += 1 }
        logger.info("rejected command handed on", metadata: [
            "heard": "\(heard)", "start-sample": "\(start)", "end-sample": "\(utterance.upperBound)",
        ])
        rejected(ring.samples(from: start, count: Int(utterance.upperBound - start)), ring.sampleRate, heard, spokenEnd)
        return true
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

import Foundation
import Logging
import ParleyCore
import ParleySpeech

// What the listener does with an utterance once it is decided
// (`ListeningOutcome`): counts, log lines, the engine.
extension ListeningPipeline {
    /// When an utterance ended and was decided, for the latency figures.
    /// `endSample`: the utterance's end (with the endpointer's post-roll) as
    /// a position in the captured stream; `decidedSample`: the newest
    /// captured position when the end was decided (how long the listener
    /// waited after the words is `decidedSample` minus where they ended;
    /// scripts/bench-daemon.sh).
    struct Decided {
        var spokenEnd: ContinuousClock.Instant
        /// Where the decoder input began (lead-in included).
        var startSample: Int64
        var endSample: Int64
        var decidedSample: Int64
        var decodeStart: ContinuousClock.Instant
    }

    /// Carries out an utterance's outcome: counts, log lines, the engine.
    /// `unsure`: the command is asked back before it runs (`AskRule`);
    /// `doubted`: the words of it in doubt (one slot's: only that is asked).
    func act(_ outcome: ListeningOutcome, command: CommandResult, decided: Decided, unsure: Bool = false,
             doubted: [String] = []) {
        switch outcome {
        case .ignored:
            break
        case .interrupt(let heard):
            logger.info("interrupted", metadata: ["heard": "\(heard)"])
            interruptSpeech()
            hand("cancel", spokenEnd: nil)
        case .interruptWith(let text):
            shared.withLock { $0.recognitions += 1 }
            logger.info("interrupted by a command", metadata: ["text": "\(text)", "confidence": "\(command.confidence)"])
            interruptSpeech()
            hand(text, spokenEnd: decided.spokenEnd)
        case .text(let text, dictated: true):
            shared.withLock { $0.recognitions += 1 }
            logger.info("heard", metadata: ["text": "\(text)", "dictation": "true"])
            hand(text, spokenEnd: decided.spokenEnd)
        case .text(let text, dictated: false):
            shared.withLock { $0.recognitions += 1 }
            let now = ContinuousClock.now
            var metadata: Logger.Metadata = [
                "text": "\(text)", "confidence": "\(command.confidence)", "unsure": "\(unsure)",
                "latency-ms": "\(LatencyProbe.milliseconds(now - decided.spokenEnd))", "end-sample": "\(decided.endSample)",
                "decided-sample": "\(decided.decidedSample)", "decode-ms": "\(LatencyProbe.milliseconds(now - decided.decodeStart))",
            ]
            metadata.merge(Self.evidenceMetadata(command), uniquingKeysWith: { $1 })
            logger.info("heard", metadata: metadata)
            hand(text, spokenEnd: decided.spokenEnd, unsure: unsure, doubted: doubted)
        case .woken:
            logger.info("woken", metadata: ["name": "\(wake.name)"])
            inbox.send(.woken(window: Wiring.seconds(wake.window)))
        case .reject(let heard, let why):
            shared.withLock { $0.rejections += 1 }
            // Where it was in the stream: a command cut in two shows as
            // two rejections, the second starting where the first ended.
            logger.debug("rejected", metadata: ["heard": "\(heard)", "why": "\(why)",
                                                "start-sample": "\(decided.startSample)", "end-sample": "\(decided.endSample)"]
                .merging(Self.evidenceMetadata(command), uniquingKeysWith: { $1 }))
        }
    }

    /// What rejection measured, for the log: why an utterance in noise was
    /// taken or not (training/bin/eval-idle-heard.sh reads these).
    static func evidenceMetadata(_ command: CommandResult) -> Logger.Metadata {
        guard let evidence = command.evidence else { return [:] }
        var metadata: Logger.Metadata = [
            "confidence": "\(command.confidence)", "snr-db": "\(String(format: "%.1f", evidence.snr))", "threshold": "\(String(format: "%.3f", evidence.threshold))",
            "weakest-word": "\(String(format: "%.3f", evidence.weakestWord))",
            "absorbed": "\(String(format: "%.2f", evidence.absorbedSpeech))",
        ]
        // The plain decode agreed with the network's: not asked (`DenoisedCommandDecoder`).
        if evidence.corroborated { metadata["corroborated"] = "true" }
        return metadata
    }

    /// Hands text to the engine without waiting for it: the listen thread
    /// goes on listening (a "cancel" must be heard while an app performs).
    private func hand(_ text: String, spokenEnd: ContinuousClock.Instant?, unsure: Bool = false, doubted: [String] = []) {
        if let spokenEnd { latency.commandEnded(at: spokenEnd) }
        inbox.send(unsure ? .unsure(text, doubted: doubted) : .text(text))
    }
}

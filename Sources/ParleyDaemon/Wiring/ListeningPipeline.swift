import Foundation
import Logging
import ParleyAudio
import ParleyCore
import ParleySpeech
import ServiceLifecycle
import Synchronization

/// Sound in to engine: the capture ring is read on a dedicated thread
/// ("parley-listen"), the endpointer cuts utterances at trailing silence,
/// PocketSphinx decodes each against the current grammar (wake + commands,
/// or the answers the open question expects) while it is spoken, and a match
/// is handed to the engine as text. Decoding blocks, so it runs on the
/// decoders' own threads (`StreamingCommandDecoder`), never on the
/// cooperative pool.
public final class ListeningPipeline: Service, RecogniserPort, AudioPort {
    private let capture: CaptureService
    private let engine: ConversationEngine
    private let wake: ParleyConfig.Wake
    private let endpointSilence: Duration
    private let playbackName: String
    private let logger: Logger
    private let shared = Mutex(Shared())
    private let stopping = Atomic<Bool>(false)

    private struct Shared {
        /// The grammar to switch to before the next decode (set by the engine's listening events).
        var pendingModel: PhraseModel?
        var commandModel = PhraseModel()
        var followUp = false
        var recognitions = 0
        var rejections = 0
        var grammarSize = 0
    }

    private let latency: LatencyProbe
    private let isSpeaking: @Sendable () -> Bool

    /// `isSpeaking`: true while the device's own voice plays; that audio is
    /// not listened to, so the device never wakes on itself.
    public init(capture: CaptureService, engine: ConversationEngine, wake: ParleyConfig.Wake,
                endpointSilence: Duration, playbackName: String, latency: LatencyProbe,
                isSpeaking: @escaping @Sendable () -> Bool = { false }, logger: Logger) {
        self.latency = latency
        self.isSpeaking = isSpeaking
        self.capture = capture
        self.engine = engine
        self.wake = wake
        self.endpointSilence = endpointSilence
        self.playbackName = playbackName
        self.logger = logger
    }

    /// Every command preceded by the wake: "hey <phrase>" (direct) and
    /// "hey <name> <phrase>" (named).
    static func wakeModel(_ commands: PhraseModel, wake: ParleyConfig.Wake) -> PhraseModel {
        let hey = PhraseNode.words(["hey"])
        let name = PhraseNode.words(wake.name.split(separator: " ").map(String.init))
        let prefix: PhraseNode =
            wake.direct && wake.named ? .sequence([hey, .optional(name)])
            : wake.direct ? hey : .sequence([hey, name])
        var model = commands
        model.rules = commands.rules.map { rule in
            var wrapped = rule
            wrapped.body = .sequence([prefix, rule.body])
            return wrapped
        }
        return model
    }

    /// The transcript without the wake words, as the engine expects it.
    static func stripWake(_ words: [String], wake: ParleyConfig.Wake) -> [String] {
        var rest = words[...]
        if rest.first == "hey" { rest = rest.dropFirst() }
        let name = wake.name.split(separator: " ").map(String.init)
        if !name.isEmpty, rest.starts(with: name) { rest = rest.dropFirst(name.count) }
        return Array(rest)
    }

    /// Called for the engine's `.listening` events.
    public func listen(_ mode: ListeningMode) async {
        switch mode {
        case .commands:
            let commands = await engine.phraseModel()
            shared.withLock { s in
                s.commandModel = commands
                s.pendingModel = Self.wakeModel(commands, wake: wake)
                s.followUp = false
            }
        case .followUp(let model):
            shared.withLock { s in
                s.pendingModel = model
                s.followUp = true
            }
        }
    }

    // MARK: Ports

    public func recognitions() async -> Int { shared.withLock { $0.recognitions } }
    public func grammarSize() async -> Int { shared.withLock { $0.grammarSize } }

    public func audioStatus() async -> AudioStatus {
        AudioStatus(
            capture: capture.configuration.device.name, playback: playbackName,
            state: capture.status.state.description, overruns: capture.status.overruns)
    }

    // MARK: Service

    public func run() async throws {
        let commands = await engine.phraseModel()
        let initial = Self.wakeModel(commands, wake: wake)
        let recognizer = try StreamingCommandDecoder(model: initial)
        shared.withLock { $0.grammarSize = initial.rules.count; $0.commandModel = commands }
        try capture.start()
        let transfer = RecognizerTransfer(recognizer)
        let thread = Thread { [self] in
            listenLoop(transfer.recognizer)
        }
        thread.name = "parley-listen"
        thread.start()
        try? await gracefulShutdown()
        stopping.store(true, ordering: .sequentiallyConsistent)
        capture.stop()
        // The loop checks the stop flag at least every 100 ms; wait for it to
        // finish its current utterance so the recogniser is not torn down under it.
        while !loopDone.load(ordering: .acquiring) && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
    }

    private let loopDone = Atomic<Bool>(false)

    /// The utterance being decoded while it is spoken.
    private struct Utterance {
        var start: Int64
        /// Everything before this stream position has been fed to the decoders.
        var fed: Int64
        /// Whether it answers a question (no wake words expected).
        var followUp: Bool
    }

    /// Reads the ring, endpoints, and feeds the decoders while the person
    /// speaks, holding back only the part of the trailing silence the
    /// endpointer will cut off (trailing silence minus post-roll), so the
    /// decoders see exactly the endpointed utterance; at its end only
    /// ps_end_utt and scoring remain.
    private func listenLoop(_ recognizer: StreamingCommandDecoder) {
        defer { loopDone.store(true, ordering: .releasing) }
        let ring = capture.ring
        let milliseconds = Int(endpointSilence.components.seconds * 1000
            + endpointSilence.components.attoseconds / 1_000_000_000_000_000)
        let endpointer = Endpointer(configuration: EndpointerConfiguration(trailingSilenceMilliseconds: milliseconds))
        let configuration = endpointer.configuration
        // While in speech the utterance's end is at least this far before the newest sample.
        let holdBack = Int64(max(0, milliseconds - min(configuration.postRollMilliseconds, milliseconds))
            * configuration.sampleRate / 1000)
        var position = ring.writePosition
        var buffer = [Int16](repeating: 0, count: 1_600)
        var events: [EndpointEvent] = []
        var utterance: Utterance?
        while !stopping.load(ordering: .acquiring) {
            guard ring.waitForSamples(after: position, timeoutNanoseconds: 100_000_000) else { continue }
            let read = buffer.withUnsafeMutableBufferPointer { ring.read(from: position, into: $0) }
            guard read.count > 0 else { continue }
            position = read.position + Int64(read.count)
            if isSpeaking() { continue }  // the device's own voice
            buffer.withUnsafeBufferPointer { all in
                endpointer.process(UnsafeBufferPointer(rebasing: all[0..<read.count])) { events.append($0) }
            }
            for event in events {
                switch event {
                case .speechStarted(let start, _):
                    let followUp = applyPendingModel(to: recognizer)
                    recognizer.begin()
                    utterance = Utterance(start: start, fed: start, followUp: followUp)
                case .speechEnded(let start, let end, _):
                    guard let current = utterance else { continue }
                    utterance = nil
                    if end > current.fed {
                        recognizer.feed(ring.samples(from: current.fed, count: Int(end - current.fed)))
                    }
                    // When the last sample of the utterance was captured (the ring
                    // is filled in real time), for the latency figures.
                    let age = Double(ring.writePosition - end) / Double(ring.sampleRate)
                    let spokenEnd = ContinuousClock.now - .milliseconds(Int64(age * 1000))
                    finish(current, samples: { ring.samples(from: start, count: Int(end - start)) }, with: recognizer,
                           spokenEnd: spokenEnd, endSample: end)
                }
            }
            events.removeAll(keepingCapacity: true)
            if var current = utterance, position - holdBack > current.fed {
                recognizer.feed(ring.samples(from: current.fed, count: Int(position - holdBack - current.fed)))
                current.fed = position - holdBack
                utterance = current
            }
        }
        if utterance != nil { recognizer.cancel() }
    }

    /// Switches to the grammar the engine asked for last, if any; returns
    /// whether that grammar is a question's answers.
    private func applyPendingModel(to recognizer: StreamingCommandDecoder) -> Bool {
        let (pending, followUp) = shared.withLock { s -> (PhraseModel?, Bool) in
            defer { s.pendingModel = nil }
            return (s.pendingModel, s.followUp)
        }
        if let pending {
            do {
                try recognizer.update(model: pending)
                shared.withLock { $0.grammarSize = pending.rules.count }
            } catch {
                logger.error("grammar update failed: \(error)")
            }
        }
        return followUp
    }

    /// Ends the utterance and hands a match to the engine. When the engine
    /// changed the grammar while the person spoke (a question was asked
    /// meanwhile), the streamed decode used the old one: the buffered
    /// utterance is decoded again with the new grammar.
    /// `endSample`: the utterance's end (with the endpointer's post-roll) as a
    /// position in the captured stream; latencies are measured from it.
    private func finish(_ utterance: Utterance, samples: () -> [Int16], with recognizer: StreamingCommandDecoder,
                        spokenEnd: ContinuousClock.Instant, endSample: Int64) {
        var followUp = utterance.followUp
        let result: CommandResult
        do {
            if shared.withLock({ $0.pendingModel != nil }) {
                recognizer.cancel()
                followUp = applyPendingModel(to: recognizer)
                result = try recognizer.recognize(samples())
            } else {
                result = try recognizer.finish()
            }
        } catch {
            logger.error("recognition failed: \(error)")
            return
        }
        guard result.match != nil else {
            shared.withLock { $0.rejections += 1 }
            logger.debug("rejected", metadata: ["heard": "\(result.transcript)", "why": "\(result.rejection ?? "")"])
            return
        }
        shared.withLock { $0.recognitions += 1 }
        let words = result.transcript.split(separator: " ").map(String.init)
        let text = (followUp ? words : Self.stripWake(words, wake: wake)).joined(separator: " ")
        latency.commandEnded(at: spokenEnd)
        logger.info("heard", metadata: [
            "text": "\(text)", "confidence": "\(result.confidence)",
            "latency-ms": "\(LatencyProbe.milliseconds(ContinuousClock.now - spokenEnd))", "end-sample": "\(endSample)",
        ])
        let engine = self.engine
        let done = DispatchSemaphore(value: 0)
        Task {
            await engine.hear(text, confidence: nil)
            done.signal()
        }
        // Hear in order: the next utterance waits for the engine to take this one.
        done.wait()
    }
}

/// Hands the recogniser (a non-Sendable class) to the one thread that uses it.
private struct RecognizerTransfer: @unchecked Sendable {
    let recognizer: StreamingCommandDecoder
    init(_ recognizer: StreamingCommandDecoder) { self.recognizer = recognizer }
}

/// Latency from the end of a spoken command (its last captured sample) to
/// the engine taking it (logged by the listener as `latency-ms`) and to the
/// first sample of the spoken answer queued for playback (logged by the
/// speaker as `answer-latency-ms`). scripts/bench-daemon.sh reads both.
public final class LatencyProbe: Sendable {
    private let pending = Mutex<ContinuousClock.Instant?>(nil)

    public init() {}

    func commandEnded(at instant: ContinuousClock.Instant) {
        pending.withLock { $0 = instant }
    }

    /// The time since the last command ended, once per command.
    func answerStarted() -> Duration? {
        pending.withLock { value in
            defer { value = nil }
            return value.map { ContinuousClock.now - $0 }
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

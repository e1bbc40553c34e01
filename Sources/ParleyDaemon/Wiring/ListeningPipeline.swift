import CParleyShims
import Foundation
import Logging
import ParleyAudio
import ParleyCore
import ParleySpeech
import ServiceLifecycle
import Synchronization

/// Sound in to engine: the capture ring is read on a dedicated thread
/// ("parley-listen"), the endpointer cuts utterances at trailing silence,
/// PocketSphinx decodes each against the grammar of the moment while it is
/// spoken, and a match is handed to the engine as text. Decoding blocks, so
/// it runs on the decoders' own threads (`StreamingCommandDecoder`), never on
/// the cooperative pool.
///
/// The grammar of an utterance (SPEC 3):
/// - no conversation open: "hey <phrase>" (direct wake) and "hey <name>
///   <phrase>" (named wake), plus "hey <name>" alone, which the wake
///   detector (`WakeDetector`, the one `parley detect-wake` measures) must
///   confirm before it opens a window;
/// - a window (after the button or "hey <name>"): the commands, wake words optional;
/// - a question: only its answers (`ListeningMode.followUp`);
/// - while the device itself speaks: only "cancel", "stop" and their kin, so
///   a person can interrupt it but its own voice wakes nothing.
public final class ListeningPipeline: Service, RecogniserPort, AudioPort {
    let capture: CaptureService
    private let engine: ConversationEngine
    private let wake: ParleyConfig.Wake
    /// The wake words' grammar and stripping, from `wake`.
    let wakeGrammar: WakeGrammar
    private let endpointSilence: Duration
    private let completePhraseSilence: Duration
    private let playbackName: String
    private let logger: Logger
    private let shared = Mutex(Shared())
    /// The grammars `listen` asks for, compiled off the asking task (``GrammarBuilds``).
    let grammars: GrammarBuilds
    private let stopping = Atomic<Bool>(false)
    /// What the listen thread hands to the engine (rare events, bounded).
    private let inbox = EngineInbox()

    /// Which grammar an utterance is decoded with.
    enum Kind: Sendable, Equatable {
        /// Wake words required; the wake detector listens too.
        case commands
        /// Commands, wake words optional.
        case window
        /// Answers to the open question.
        case followUp
        /// An open-text answer: the dictation decoder too.
        case dictation
        /// The device is speaking: cancel phrases only.
        case bargeIn
    }

    private struct Shared {
        var recognitions = 0
        var rejections = 0
        /// Utterances ended (at the trailing silence or, complete, at a
        /// pause), and samples the listen thread
        /// found overwritten in the ring before it read them.
        var segments = 0
        var lostSamples: Int64 = 0
        var grammarSize = 0
    }

    private let latency: LatencyProbe
    private let isSpeaking: @Sendable () -> Bool
    private let interruptSpeech: @Sendable () -> Void
    private let showFault: @Sendable () -> Void
    /// Given each recognised command's audio, rate and words when the
    /// device keeps confirmed audio (``RoomLearning``); nil otherwise.
    private let onHeard: (@Sendable (_ samples: [Int16], _ sampleRate: Int, _ words: String) -> Void)?
    /// The seam for Home Assistant (RejectedUtteranceSeam.swift): given a
    /// command said after the wake word that no phrase of Parley's matched.
    let rejectedHandler = Mutex<RejectedUtteranceHandler?>(nil)

    /// How often the fault is shown again while the microphone is missing:
    /// the LEDs' error state is a flash, so one flash would be over long
    /// before anyone looks.
    static let faultInterval: Duration = .seconds(2)

    /// How often the service's own loop looks at the capture state and the
    /// listen thread's counters. Every wake-up of an idle device costs (at
    /// 50 ms this loop was about a tenth of idle listening's CPU).
    static let watchInterval: Duration = .milliseconds(500)

    /// Audio the listen thread waits for before it wakes (30 ms: three capture
    /// periods). One wake-up per capture period was a fifth of idle
    /// listening's CPU; the endpointer and the decoders see the audio at most
    /// 20 ms later than with one period (BENCHMARKS.md, "Idle listening").
    static let listenBatchSamples = 480

    /// `isSpeaking`: true while the device's own voice plays; meanwhile only
    /// cancel phrases are listened for, and `interruptSpeech` silences the
    /// device when one is heard. `showFault` shows the error state on the
    /// LEDs; it is called every ``faultInterval`` while the microphone is
    /// missing. `compileGrammar` compiles what `listen` asks for (tests slow
    /// it down to stand in for a slow board).
    public init(capture: CaptureService, engine: ConversationEngine, wake: ParleyConfig.Wake,
                endpointSilence: Duration,
                completePhraseSilence: Duration = .milliseconds(UtteranceListening().completePhraseSilenceMilliseconds),
                playbackName: String, latency: LatencyProbe,
                isSpeaking: @escaping @Sendable () -> Bool = { false },
                interruptSpeech: @escaping @Sendable () -> Void = {},
                showFault: @escaping @Sendable () -> Void = {}, logger: Logger,
                onHeard: (@Sendable (_ samples: [Int16], _ sampleRate: Int, _ words: String) -> Void)? = nil,
                compileGrammar: @escaping @Sendable (PhraseModel) throws -> WordGraph = { try GrammarCompiler().graph(for: $0) }) {
        self.showFault = showFault
        self.onHeard = onHeard
        self.latency = latency
        self.isSpeaking = isSpeaking
        self.interruptSpeech = interruptSpeech
        self.capture = capture
        self.engine = engine
        self.wake = wake
        self.wakeGrammar = wake.grammar
        self.endpointSilence = endpointSilence
        self.completePhraseSilence = completePhraseSilence
        self.playbackName = playbackName
        self.logger = logger
        grammars = GrammarBuilds(compile: compileGrammar) { outcome in
            if case .failed(_, let error) = outcome {
                logger.error("grammar compilation failed; the previous grammar stays", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: Grammars

    /// The command stage's rejection threshold for a wake sensitivity: the
    /// recogniser's default (-1.0, per-frame log-likelihood ratio to the
    /// phone loop) at 0.5, stricter by 1.0 at 0, looser by 1.0 at 1.
    static func rejectionThreshold(sensitivity: Double) -> Double {
        -1.0 + (0.5 - min(1, max(0, sensitivity))) * 2
    }

    /// Called for the engine's `.listening` events. Returns once the grammar
    /// (or a newer one) is what the listen thread uses, or at once when the
    /// calling task is cancelled or stopping, or listening stops: the compile
    /// runs on ``GrammarBuilds``' queue, never in the asking task, so no
    /// service's stop waits for it; nor on the listen thread, which only
    /// swaps the compiled graph in (listening never waits for a build, SPEC 3).
    public func listen(_ mode: ListeningMode) async {
        // A stop cancels the open conversation (ConversationStopper), and the
        // engine then asks for the commands grammar again. Nothing will be
        // listened for any more, and compiling it takes 5-6 s on a slow CPU
        // (qemu-user, a Pi 3): not even asked for. The request runs in the
        // stopping service's task, so its graceful shutdown flag is what says
        // the daemon is stopping.
        guard !Task.isShuttingDownGracefully else {
            logger.debug("listening grammar not rebuilt: parleyd is stopping", metadata: ["mode": "\(mode)"])
            return
        }
        let commands = await engine.phraseModel()
        let (model, kind): (PhraseModel, Kind) = switch mode {
        case .commands: (wakeGrammar.commands(commands), .commands)
        case .window: (wakeGrammar.window(commands), .window)
        case .followUp(let answers): (answers, .followUp)
        case .dictation(let answers): (answers, .dictation)
        }
        guard let version = grammars.request(model, kind: kind) else { return }
        if await !grammars.wait(for: version) {
            logger.debug("stopped waiting for the listening grammar", metadata: ["mode": "\(mode)", "version": "\(version)"])
        }
    }

    // MARK: Ports

    public func recognitions() async -> Int { shared.withLock { $0.recognitions } }

    /// Utterances ended since start, those decided (handed
    /// to the engine or rejected), and samples lost because the listen
    /// thread fell more than the ring's length behind.
    public var listeningCounts: (segments: Int, decided: Int, lostSamples: Int64) {
        shared.withLock { ($0.segments, $0.recognitions + $0.rejections, $0.lostSamples) }
    }
    public func grammarSize() async -> Int { shared.withLock { $0.grammarSize } }

    public func audioStatus() async -> AudioStatus {
        AudioStatus(
            capture: capture.configuration.device.name, playback: playbackName,
            state: capture.status.state.description, overruns: capture.status.overruns, problem: capture.problem,
            speaking: isSpeaking())
    }

    // MARK: Service

    public func run() async throws {
        // Compiled on the listen thread with the decoders (Listener), not
        // here: this task answers a stop at once even on a slow CPU.
        let initial = wakeGrammar.commands(await engine.phraseModel())
        // The decoders load on the listen thread (PocketSphinx models take a
        // while, and blocking calls stay off the cooperative pool), so a
        // SIGTERM during start is answered at once. Capture starts once they
        // are ready: nothing said meanwhile is skipped.
        let thread = Thread { [self] in
            defer { loopDone.store(true, ordering: .releasing) }
            let listener: Listener
            do {
                listener = try Listener(pipeline: self, initial: initial)
            } catch {
                loadFailure.withLock { $0 = "\(error)" }
                return
            }
            // Building the decoders freed far more than they keep (the model
            // files' parsing, the grammar compiler's tables); give those pages
            // back to the system instead of keeping them in this thread's arena.
            parley_release_free_memory()
            guard !stopping.load(ordering: .acquiring) else { return }
            // Read from where capture starts, not from where the ring is
            // when the loop begins: a file read as fast as possible may have
            // written seconds by then.
            let start = capture.ring.writePosition
            // A missing or busy microphone must not stop the device (the
            // button and `parley say` still work): capture keeps trying in
            // the background and the run loop below shows the fault.
            if let problem = capture.startOrKeepTrying() {
                logger.error("""
                    microphone unavailable: \(problem); parleyd keeps running (`parley say` and the button work) \
                    and reopens it with back-off
                    """)
            }
            listener.run(from: start)
        }
        thread.name = "parley-listen"
        thread.start()
        let delivery = Task { [inbox, engine] in
            for await heard in inbox.events { await engine.start(heard) }
        }
        defer {
            inbox.finish()
            delivery.cancel()
            grammars.stop()
        }
        var watch = CaptureWatch()
        var dropped = 0
        var lost: Int64 = 0
        let nap = Nap()
        try await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                // Logged here, not on the listen thread (ARCHITECTURE.md pitfall 4).
                if inbox.dropped != dropped {
                    dropped = inbox.dropped
                    logger.error("the engine fell behind: \(dropped) heard events dropped")
                }
                if listeningCounts.lostSamples != lost {
                    lost = listeningCounts.lostSamples
                    logger.error("listening fell behind the capture ring: \(lost) samples lost since start")
                }
                if let failure = loadFailure.withLock({ $0 }) {
                    capture.stop()
                    throw ListeningError(description: "the recogniser could not start: \(failure)")
                }
                watchCapture(&watch)
                // Nothing here needs a quick look (a fault is shown every 2 s), so the
                // loop wakes rarely; a graceful shutdown or cancellation ends the wait at once.
                await withTaskCancellationHandler { await nap.sleep(for: Self.watchInterval) } onCancel: { nap.wake() }
            }
        } onGracefulShutdown: { [grammars] in
            nap.wake()
            // Whoever waits for a grammar (the shortcut folder's reload, an
            // app install) stops waiting: nothing more will be listened for.
            grammars.stop()
        }
        stopping.store(true, ordering: .sequentiallyConsistent)
        capture.stop()
        // The loop checks the stop flag at least every 100 ms; wait for it to
        // finish its current utterance so the recogniser is not torn down under
        // it. A thread still loading models ends by itself when done.
        while !loopDone.load(ordering: .acquiring) && listening.load(ordering: .acquiring) && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The run loop's wait between looks: a timer that `wake()` ends early
    /// (a graceful shutdown or cancellation), and for good once woken.
    final class Nap: Sendable {
        private let state = Mutex<(waiting: CheckedContinuation<Void, Never>?, woken: Bool)>((nil, false))

        func sleep(for duration: Duration) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.woken { return true }
                    s.waiting = continuation
                    return false
                }
                if resumeNow { continuation.resume(); return }
                DispatchQueue.global().asyncAfter(deadline: .now() + Wiring.seconds(duration)) { [self] in
                    state.withLock { s in s.waiting.take() }?.resume()
                }
            }
        }

        func wake() {
            state.withLock { s in
                s.woken = true
                return s.waiting.take()
            }?.resume()
        }
    }

    /// What the run loop remembers of the capture state between looks.
    struct CaptureWatch {
        var previous = CaptureState.stopped
        var lastFault: ContinuousClock.Instant?
    }

    /// Says when the microphone goes or comes back (the capture thread
    /// never logs) and keeps the LEDs showing the fault while it is away.
    private func watchCapture(_ watch: inout CaptureWatch) {
        let state = capture.status.state
        defer { watch.previous = state }
        switch state {
        case .reconnecting:
            if watch.previous == .running {
                logger.error("microphone lost: \(capture.problem ?? "unknown reason"); reopening with back-off")
            }
            let now = ContinuousClock.now
            if watch.lastFault.map({ now - $0 >= Self.faultInterval }) ?? true {
                watch.lastFault = now
                showFault()
            }
        case .running where watch.previous == .reconnecting:
            logger.notice("microphone back", metadata: ["device": "\(capture.configuration.device.name)"])
            watch.lastFault = nil
        default:
            break
        }
    }

    /// Why the decoders could not be created, if they could not.
    private let loadFailure = Mutex<String?>(nil)
    /// Set once the decoders are loaded and the loop runs.
    private let listening = Atomic<Bool>(false)

    struct ListeningError: Error, CustomStringConvertible {
        var description: String
    }

    private let loopDone = Atomic<Bool>(false)

    /// The utterance being decoded while it is spoken (the segmenter
    /// decides what is fed; this is what the daemon keeps beside it).
    private struct Utterance {
        /// Everything before this position has been fed to the wake detector.
        var wakeFed: Int64
        var kind: Kind
        /// The wake detector confirmed "hey <name>" in this utterance.
        var woke = false
        /// Where the confirmed wake phrase ended, in the captured stream.
        var wakeEnd: Int64?
    }

    /// The listen thread's state: the decoders and the grammar they hold.
    private final class Listener {
        let pipeline: ListeningPipeline
        let recognizer: StreamingCommandDecoder
        let detector: WakeDetector?
        /// Samples the wake detector has been given since it was made (its times count them).
        var wakeSamplesFed: Int64 = 0
        /// The grammar while the device speaks, compiled once.
        let bargeIn: (model: PhraseModel, graph: WordGraph)
        /// The version of the requested grammar the recogniser holds (nil:
        /// it holds the barge-in grammar).
        var applied: Int? = 0
        /// Loaded the first time an open-text answer is expected (its
        /// 130,000-word model is not needed before).
        private var dictationDecoder: DictationDecoder?

        init(pipeline: ListeningPipeline, initial: PhraseModel) throws {
            let wake = pipeline.wake
            self.pipeline = pipeline
            // Compiled once, here on the listen thread: the decoder starts with
            // it and it is the grammar of version 0 (listening without a request).
            let graph = try GrammarCompiler().graph(for: initial)
            pipeline.grammars.setInitial(initial, graph: graph)
            recognizer = try StreamingCommandDecoder(
                model: initial, graph: graph, threshold: ListeningPipeline.rejectionThreshold(sensitivity: wake.sensitivity))
            detector = wake.named
                ? try WakeDetector(mode: .named(wake.name, heyOptional: wake.heyOptional), sensitivity: wake.sensitivity)
                : nil
            let bargeInModel = pipeline.wakeGrammar.bargeIn
            bargeIn = (bargeInModel, try GrammarCompiler().graph(for: bargeInModel))
            pipeline.shared.withLock { $0.grammarSize = initial.rules.count }
        }

        /// Listens from ring position `start` until the pipeline stops.
        func run(from start: Int64) {
            pipeline.listening.store(true, ordering: .releasing)
            pipeline.listenLoop(self, from: start)
        }

        /// The dictation decoder, loaded on first use; nil when it cannot be.
        var dictation: DictationDecoder? {
            if dictationDecoder == nil {
                do {
                    dictationDecoder = try DictationDecoder()
                } catch {
                    pipeline.logger.error("dictation unavailable: \(error)")
                }
            }
            return dictationDecoder
        }

        /// Starts an utterance on the decoders its kind uses.
        func begin(_ kind: Kind) {
            recognizer.begin()
            if kind == .commands { try? detector?.reset() }
            if kind == .dictation { dictation?.begin() }
        }

        /// Feeds the decoders of an utterance of `kind`.
        func feed(_ samples: [Int16], kind: Kind) {
            recognizer.feed(samples)
            if kind == .dictation { dictationDecoder?.feed(samples) }
        }

        /// Drops an utterance on every decoder.
        func cancel() {
            recognizer.cancel()
            dictationDecoder?.cancel()
        }

        /// Loads the grammar for an utterance of `speaking` state; returns its kind.
        func prepare(speaking: Bool) -> Kind {
            if speaking {
                if applied != nil { load(bargeIn.model, graph: bargeIn.graph, version: nil) }
                return .bargeIn
            }
            let requested = pipeline.grammars.current
            if applied != requested.version { load(requested.model, graph: requested.graph, version: requested.version) }
            return requested.kind
        }

        /// Whether the engine asked for another grammar since `prepare`.
        var isStale: Bool {
            guard let applied else { return false }
            return pipeline.grammars.currentVersion != applied
        }

        private func load(_ model: PhraseModel, graph: WordGraph?, version: Int?) {
            do {
                if let graph { try recognizer.update(model: model, graph: graph) } else { try recognizer.update(model: model) }
                applied = version
                pipeline.shared.withLock { $0.grammarSize = model.rules.count }
            } catch {
                pipeline.logger.error("grammar update failed: \(error)")
            }
        }
    }

    /// Reads the ring, endpoints, and carries out the `UtteranceSegmenter`'s
    /// decisions (the same ones `parley understand` is measured on): the
    /// decoders are fed while the person speaks, so at an utterance's end
    /// only ps_end_utt and scoring remain.
    private func listenLoop(_ listener: Listener, from start: Int64) {
        let ring = capture.ring
        var listening = UtteranceListening()
        listening.completePhraseSilenceMilliseconds = LatencyProbe.milliseconds(completePhraseSilence)
        var segmenter = UtteranceSegmenter(
            endpointer: EndpointerConfiguration(trailingSilenceMilliseconds: LatencyProbe.milliseconds(endpointSilence)),
            listening: listening)
        let configuration = segmenter.endpointer
        let endpointer = Endpointer(configuration: configuration)
        let preRoll = Int64(configuration.preRollMilliseconds * configuration.sampleRate / 1000)
        var position = start
        var buffer = [Int16](repeating: 0, count: 1_600)
        var events: [EndpointEvent] = []
        var utterance: Utterance?

        func act(_ decisions: [UtteranceSegmenter.Decision]) {
            for decision in decisions {
                switch decision {
                case .begin(_, let speech):
                    let kind = listener.prepare(speaking: isSpeaking())
                    listener.begin(kind)
                    utterance = Utterance(wakeFed: speech, kind: kind)
                case .feed(let range):
                    listener.feed(ring.samples(from: range.lowerBound, count: Int(range.count)), kind: utterance?.kind ?? .commands)
                case .checkPhrase:
                    // A decoder that cannot say counts as a whole phrase that may
                    // go on: the utterance ends at the trailing silence, as before.
                    act(segmenter.phraseChecked((try? listener.recognizer.phraseProgress()) ?? .extendable))
                case .finish(let range):
                    // Ended at a pause (a complete phrase): what is said next
                    // starts a segment of its own.
                    endpointer.endSegment()
                    shared.withLock { $0.segments += 1 }
                    guard var current = utterance else { continue }
                    utterance = nil
                    // When the last sample of the utterance was captured (the ring
                    // is filled in real time), for the latency figures.
                    let age = Double(ring.writePosition - range.upperBound) / Double(ring.sampleRate)
                    let spokenEnd = ContinuousClock.now - .milliseconds(Int64(age * 1000))
                    finish(&current, listener: listener, ring: ring, position: position,
                           samples: { ring.samples(from: range.lowerBound, count: Int(range.count)) },
                           spokenEnd: spokenEnd, endSample: range.upperBound, decidedSample: ring.writePosition)
                case .cancel:
                    listener.cancel()
                }
            }
        }

        while !stopping.load(ordering: .acquiring) {
            guard ring.waitForSamples(after: position, minimum: Self.listenBatchSamples, timeoutNanoseconds: 100_000_000)
            else { continue }
            let read = buffer.withUnsafeMutableBufferPointer { ring.read(from: position, into: $0) }
            if read.lost > 0 { shared.withLock { $0.lostSamples += read.lost } }
            guard read.count > 0 else { continue }
            position = read.position + Int64(read.count)
            buffer.withUnsafeBufferPointer { all in
                endpointer.process(UnsafeBufferPointer(rebasing: all[0..<read.count])) { events.append($0) }
            }
            for event in events {
                // Held for the rest of a phrase, or ended early on a complete
                // one, only with a grammar of whole phrases that is still the
                // one asked for (open text has no phrases to complete).
                let current = !listener.isStale
                let holdAllowed = (utterance?.kind == .commands || utterance?.kind == .followUp) && current
                let earlyEndAllowed = utterance.map { $0.kind != .dictation } == true && current
                act(segmenter.handle(event, floor: ring.oldestPosition + 1_600, holdAllowed: holdAllowed,
                                     earlyEndAllowed: earlyEndAllowed))
            }
            events.removeAll(keepingCapacity: true)
            if let current = utterance, current.kind == .bargeIn, !isSpeaking() {
                // The device stopped talking mid-utterance: what follows is the
                // person's (an answer, a command), so start again with the
                // grammar of the moment from just before now.
                act(segmenter.restart(from: position - preRoll))
            }
            act(segmenter.advance(to: position))
            if var current = utterance {
                feedWakeDetector(&current, listener: listener, ring: ring, upTo: position)
                utterance = current
            }
        }
        act(segmenter.stop())
    }

    /// Streams a commands utterance through the wake detector (named mode).
    private func feedWakeDetector(_ utterance: inout Utterance, listener: Listener, ring: AudioRing, upTo position: Int64) {
        guard utterance.kind == .commands, let detector = listener.detector, position > utterance.wakeFed else { return }
        do {
            let fedBefore = listener.wakeSamplesFed
            let detections = try detector.process(ring.samples(from: utterance.wakeFed, count: Int(position - utterance.wakeFed)))
            listener.wakeSamplesFed += position - utterance.wakeFed
            if let time = detections.last {
                utterance.woke = true
                // Detector time (seconds of all it was fed) to a stream position.
                let end = utterance.wakeFed + Int64(time * Double(ring.sampleRate)) - fedBefore
                utterance.wakeEnd = min(position, max(utterance.wakeFed - Int64(ring.sampleRate), end))
            }
        } catch {
            logger.error("wake detector failed: \(error)")
        }
        utterance.wakeFed = position
    }

    /// Ends the utterance and acts on it. When the engine changed the
    /// grammar while the person spoke (a question was asked meanwhile), the
    /// streamed decode used the old one: the buffered utterance is decoded
    /// again with the new grammar.
    /// `endSample`: the utterance's end (with the endpointer's post-roll) as a
    /// position in the captured stream; latencies are measured from it.
    /// `decidedSample`: the newest captured position when the end was
    /// decided (how long the listener waited after the words is
    /// `decidedSample` minus where they ended; scripts/bench-daemon.sh).
    private func finish(_ utterance: inout Utterance, listener: Listener, ring: AudioRing, position: Int64,
                        samples: () -> [Int16], spokenEnd: ContinuousClock.Instant, endSample: Int64,
                        decidedSample: Int64) {
        let decodeStart = ContinuousClock.now
        let recognizer = listener.recognizer
        var kind = utterance.kind
        let result: CommandResult
        /// The open-text answer, when one is expected and nothing in the grammar matched.
        var dictated: () throws -> String = { "" }
        do {
            if kind != .bargeIn && listener.isStale {
                listener.cancel()
                kind = listener.prepare(speaking: false)
                let buffered = samples()
                result = try recognizer.recognize(buffered)
                if kind == .dictation, result.match == nil, let dictation = listener.dictation {
                    let text = try dictation.transcribe(buffered)
                    dictated = { text }
                }
            } else {
                result = try recognizer.finish()
                if kind == .dictation, let dictation = listener.dictation {
                    if result.match != nil { dictation.cancel() } else { dictated = { try dictation.finish() } }
                }
            }
        } catch {
            listener.cancel()
            logger.error("recognition failed: \(error)")
            return
        }
        if kind == .bargeIn {
            guard result.match != nil else { return }
            logger.info("interrupted", metadata: ["heard": "\(result.transcript)"])
            interruptSpeech()
            hand("cancel", spokenEnd: nil)
            return
        }
        if let match = result.match, match.target != WakeGrammar.aloneTarget {
            shared.withLock { $0.recognitions += 1 }
            let words = result.transcript.split(separator: " ").map(String.init)
            let text = (kind == .followUp || kind == .dictation ? words : wakeGrammar.strip(words)).joined(separator: " ")
            let now = ContinuousClock.now
            logger.info("heard", metadata: [
                "text": "\(text)", "confidence": "\(result.confidence)",
                "latency-ms": "\(LatencyProbe.milliseconds(now - spokenEnd))", "end-sample": "\(endSample)",
                "decided-sample": "\(decidedSample)", "decode-ms": "\(LatencyProbe.milliseconds(now - decodeStart))",
            ])
            hand(text, spokenEnd: spokenEnd)
            // After the hand-over: copying the audio must not delay the answer.
            onHeard?(samples(), ring.sampleRate, result.transcript)
            return
        }
        if kind == .dictation {
            do {
                let text = try dictated()
                if !text.isEmpty {
                    shared.withLock { $0.recognitions += 1 }
                    logger.info("heard", metadata: ["text": "\(text)", "dictation": "true"])
                    hand(text, spokenEnd: spokenEnd)
                    return
                }
            } catch {
                logger.error("dictation failed: \(error)")
            }
        }
        // No command: "hey <name>" alone opens a window once the wake
        // detector has confirmed it (the rest of the stream gives its tail).
        feedWakeDetector(&utterance, listener: listener, ring: ring, upTo: position)
        if let rejected = rejectedHandler.withLock({ $0 }),
           let start = Self.rejectedCommandStart(kind: kind, wakeEnd: utterance.wakeEnd, woke: utterance.woke,
                                                  utteranceStart: endSample - Int64(samples().count), end: endSample,
                                                  minimumSamples: Self.minimumRejectedSamples(endpointSilence, rate: ring.sampleRate)) {
            shared.withLock { $0.rejections += 1 }
            logger.info("rejected command handed on", metadata: [
                "heard": "\(result.transcript)", "start-sample": "\(start)", "end-sample": "\(endSample)",
            ])
            rejected(ring.samples(from: start, count: Int(endSample - start)), ring.sampleRate, result.transcript, spokenEnd)
            return
        }
        if kind == .commands && utterance.woke {
            logger.info("woken", metadata: ["name": "\(wake.name)"])
            inbox.send(.woken(window: Wiring.seconds(wake.window)))
            return
        }
        shared.withLock { $0.rejections += 1 }
        logger.debug("rejected", metadata: ["heard": "\(result.transcript)", "why": "\(result.rejection ?? "wake not confirmed")"])
    }

    /// Hands text to the engine without waiting for it: the listen thread
    /// goes on listening (a "cancel" must be heard while an app performs).
    private func hand(_ text: String, spokenEnd: ContinuousClock.Instant?) {
        if let spokenEnd { latency.commandEnded(at: spokenEnd) }
        inbox.send(.text(text))
    }
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

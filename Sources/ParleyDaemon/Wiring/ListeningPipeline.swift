import CParleyShims
import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ParleyDenoise
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
/// The grammar of an utterance (docs/spec.md §3):
/// - no conversation open: "hey <phrase>" (direct wake) and "hey <name>
///   <phrase>" (named wake), plus "hey <name>" alone, which the wake
///   detector (`WakeDetector`, the one `parley detect-wake` measures) must
///   confirm before it opens a window;
/// - a window (after the button or "hey <name>"): the commands, wake words optional;
/// - a question: only its answers (`ListeningMode.followUp`);
/// - while the device itself speaks: "cancel", "stop" and their kin, so a
///   person can interrupt it; with its echo cancelled (`speech.echo_cancel`)
///   also the wake words before a command, which cuts it short and is
///   handed on. What the canceller left of its own voice is refused
///   (`EchoGate`), so its own voice wakes nothing.
public final class ListeningPipeline: Service, RecogniserPort, AudioPort {
    let capture: CaptureService
    let engine: ConversationEngine
    /// The wake settings in force, changed while listening by `setWake`.
    let wakeState: Mutex<WakeState>
    /// The wake settings in force (`wake:` of parley.yaml, or the page's since).
    var wake: ParleyConfig.Wake { wakeState.withLock { $0.wake } }
    /// The wake words' grammar and stripping, from `wake`.
    var wakeGrammar: WakeGrammar { wakeState.withLock { $0.grammar } }
    let endpointSilence: Duration
    let completePhraseSilence: Duration
    let playbackName: String
    let logger: Logger
    let shared = Mutex(Shared())
    /// The grammars `listen` asks for, compiled off the asking task (``GrammarBuilds``).
    let grammars: GrammarBuilds
    let stopping = Atomic<Bool>(false)
    /// What the listen thread hands to the engine (rare events, bounded).
    let inbox = EngineInbox()

    /// Which grammar an utterance is decoded with.
    typealias Kind = ListeningKind

    /// The wake settings, their grammar, what is listened for while the
    /// device speaks (made from them), and how many times they changed:
    /// the listen thread makes its decoders again when that count moves.
    struct WakeState: Sendable {
        var wake: ParleyConfig.Wake
        var grammar: WakeGrammar
        /// Set by `setWake`, with the engine's commands; nil for the
        /// settings of the start (the listener made that grammar itself).
        var bargeIn: PhraseModel?
        var generation = 0
    }

    struct Shared {
        var recognitions = 0
        var rejections = 0
        /// Utterances ended (at the trailing silence or, complete, at a
        /// pause), and samples the listen thread
        /// found overwritten in the ring before it read them.
        var segments = 0
        var lostSamples: Int64 = 0
        var grammarSize = 0
        /// The front end as the listen thread made it (`frontEndStatus`).
        var frontEnd: String?
    }

    let latency: LatencyProbe
    /// The capture front end the listen thread runs between the ring and
    /// the driver (`speech.front_end`).
    let frontEnd: FrontEndSettings
    /// The echo canceller's settings and the playback tap it reads (nil:
    /// off, or no playback to cancel). While it runs, the device's own
    /// voice is taken out of what is heard, so while it speaks the wake
    /// word and a command are listened for too (`Listener.bargeIn`).
    let echo: (settings: EchoSettings, reference: EchoReference)?
    /// When an accepted command is asked back before it runs
    /// (`speech.ask_unsure`; nil: every accepted command is acted on).
    let askRule: AskRule?
    /// Once the decoders are loaded, before capture starts: the pages of
    /// files only start-up used are unmapped (`StartupPages`; the daemon,
    /// not the tests that run a pipeline in their own process).
    let releasesStartupPages: Bool
    /// Makes the listener's decoders (``ListeningDecoders``).
    let makeDecoders: ListeningDecoders.Factory
    let isSpeaking: @Sendable () -> Bool
    /// The device's last lines (`Speaker.saying`), for `OwnSpeech`.
    let saying: @Sendable () -> [String]
    let interruptSpeech: @Sendable () -> Void
    private let showFault: @Sendable () -> Void
    /// Given each recognised command's audio, rate and words when the
    /// device keeps confirmed audio (``RoomLearning``); nil otherwise.
    let onHeard: (@Sendable (_ samples: [Int16], _ sampleRate: Int, _ words: String) -> Void)?
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

    /// Audio the listen thread waits for before it wakes (30 ms: one capture
    /// period of `PCMFormat.microphone`). One wake-up per 10 ms period was a
    /// fifth of idle listening's CPU; the endpointer and the decoders see the
    /// audio at most 20 ms later than with 10 ms (BENCHMARKS.md, "Idle listening").
    /// It is also the grid the ring is read on (`AudioRingSource`): a
    /// listener running late reads the same blocks, and hears the same.
    static let listenBatchSamples = 480
    /// How long a decided utterance waits for a grammar on its way: the
    /// window's after a wake word decided alone (the engine asks for it at
    /// once), or one being compiled when nothing matched. A compile on a
    /// loaded Pi takes well under a second; this bounds a stuck one.
    public static let defaultGrammarWait: Duration = .seconds(3)
    /// This pipeline's bound (`defaultGrammarWait`; tests of the wait itself
    /// on a loaded machine give it longer).
    let grammarWait: Duration

    /// `isSpeaking`: true while the device's own voice plays (its words:
    /// `PlaybackService.isTalking`, not the wake tone); meanwhile only
    /// cancel phrases are listened for, and `interruptSpeech` silences the
    /// device when one is heard. `showFault` shows the error state on the
    /// LEDs; it is called every ``faultInterval`` while the microphone is
    /// missing. `compileGrammar` compiles what `listen` asks for (tests slow
    /// it down to stand in for a slow board). `decoders` makes the decoders
    /// on the listen thread (default: PocketSphinx's; tests script them).
    public init(capture: CaptureService, engine: ConversationEngine, wake: ParleyConfig.Wake,
                endpointSilence: Duration,
                completePhraseSilence: Duration = .milliseconds(UtteranceListening().completePhraseSilenceMilliseconds),
                playbackName: String, latency: LatencyProbe,
                isSpeaking: @escaping @Sendable () -> Bool = { false },
                saying: @escaping @Sendable () -> [String] = { [] },
                interruptSpeech: @escaping @Sendable () -> Void = {},
                showFault: @escaping @Sendable () -> Void = {}, logger: Logger,
                onHeard: (@Sendable (_ samples: [Int16], _ sampleRate: Int, _ words: String) -> Void)? = nil,
                compileGrammar: @escaping @Sendable (PhraseModel) throws -> WordGraph = { try GrammarCompiler().graph(for: $0) },
                grammarWait: Duration = ListeningPipeline.defaultGrammarWait,
                decoders: ListeningDecoders.Factory? = nil, frontEnd: FrontEndSettings = .none,
                echo: (settings: EchoSettings, reference: EchoReference)? = nil, askRule: AskRule? = nil,
                roomTransform: RoomTransform.Slot? = nil, releasesStartupPages: Bool = false) {
        self.releasesStartupPages = releasesStartupPages
        self.frontEnd = frontEnd
        self.askRule = askRule
        self.echo = echo?.settings.isActive == true ? echo : nil
        makeDecoders = decoders ?? ListeningDecoders.pocketSphinx(room: roomTransform)
        self.showFault = showFault
        self.onHeard = onHeard
        self.latency = latency
        self.isSpeaking = isSpeaking
        self.saying = saying
        self.interruptSpeech = interruptSpeech
        self.capture = capture
        self.engine = engine
        wakeState = Mutex(WakeState(wake: wake, grammar: wake.grammar))
        self.endpointSilence = endpointSilence
        self.completePhraseSilence = completePhraseSilence
        self.playbackName = playbackName
        self.logger = logger
        self.grammarWait = grammarWait
        grammars = GrammarBuilds(compile: compileGrammar) { outcome in
            if case .failed(_, let error) = outcome {
                logger.error("grammar compilation failed; the previous grammar stays", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The endpointer of the listen thread: the configured trailing silence.
    var endpointerConfiguration: EndpointerConfiguration {
        EndpointerConfiguration(trailingSilenceMilliseconds: LatencyProbe.milliseconds(endpointSilence))
    }

    /// The segmenter's listening: the configured complete-phrase silence.
    var utteranceListening: UtteranceListening {
        var listening = UtteranceListening()
        listening.completePhraseSilenceMilliseconds = LatencyProbe.milliseconds(completePhraseSilence)
        return listening
    }

    // MARK: Service

    public func run() async throws {
        // Compiled on the listen thread with the decoders (Listener), not
        // here: this task answers a stop at once even on a slow CPU.
        let commands = await engine.phraseModel()
        let initial = wakeGrammar.commands(commands)
        grammars.expectInitial(initial)
        // With the device's voice cancelled, a new command after the wake
        // words may cut it short too (the commands of the start: an app
        // installed later is not among them until parleyd restarts).
        let bargeIn = bargeInModel(wakeGrammar, commands: commands)
        // The decoders load on the listen thread (PocketSphinx models take a
        // while, and blocking calls stay off the cooperative pool), so a
        // SIGTERM during start is answered at once. Capture starts once they
        // are ready: nothing said meanwhile is skipped.
        let thread = Thread { [self] in
            defer { loopDone.store(true, ordering: .releasing) }
            let listener: Listener
            do {
                listener = try Listener(pipeline: self, initial: initial, bargeInModel: bargeIn)
            } catch {
                loadFailure.withLock { $0 = "\(error)" }
                return
            }
            // Building the decoders freed far more than they keep (the model
            // files' parsing, the grammar compiler's tables); give those pages
            // back to the system instead of keeping them in this thread's arena.
            parley_release_free_memory()
            if releasesStartupPages, let released = StartupPages.release() {
                logger.info("start-up pages released", metadata: [
                    "mappings": "\(released.mappings)", "failed": "\(released.failures)",
                    "clean-file-kib-before": "\(released.cleanFileKiBBefore)", "clean-file-kib-after": "\(released.cleanFileKiBAfter)",
                ])
            }
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
            var source = AudioRingSource(
                ring: capture.ring, from: start, blockSamples: Self.listenBatchSamples,
                isStopped: { [self] in stopping.load(ordering: .acquiring) },
                onLost: { [self] lost in shared.withLock { $0.lostSamples += lost } })
            // The stages' states are made here, before listening: nothing
            // is allocated per block. If speexdsp cannot make them the
            // device still listens, to the raw signal, and says why.
            let (stage, canceller) = makeStages()
            listener.canceller = canceller
            if stage != nil || canceller != nil {
                var cleaned = FrontEndSource(
                    source, frontEnd: stage,
                    echo: canceller.flatMap { c in echo.map { EchoStage(canceller: c, reference: $0.reference) } })
                listener.run(&cleaned)
            } else {
                listener.run(&source)
            }
        }
        thread.name = "parley-listen"
        thread.start()
        let delivery = Task { [inbox, engine] in
            var previous: InputTurn?
            for await heard in inbox.events { previous = await engine.start(heard, after: previous) }
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
                // Logged here, not on the listen thread (docs/architecture.md, real-time rule 4).
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

    /// The energy the echo canceller kept of the microphone over an
    /// utterance (`EchoGate`): its raw audio from the capture ring against
    /// `cleaned`, what the listener heard; 0 dB (keep it) when the ring no
    /// longer holds all of it.
    func keptDecibels(_ utterance: Range<Int64>, cleaned: [Int16]) -> Double {
        let raw = capture.ring.samples(from: utterance.lowerBound, count: utterance.count)
        guard raw.count == cleaned.count, !raw.isEmpty else { return 0 }
        return EchoGate.keptDecibels(microphone: raw[...], cleaned: cleaned[...])
    }

    /// The capture front end and the echo canceller, as configured; a stage
    /// speexdsp cannot make is left out (logged).
    private func makeStages() -> (FrontEnd?, EchoCanceller?) {
        var stage: FrontEnd?
        do {
            stage = try FrontEnd(frontEnd)
        } catch {
            logger.error("capture front end '\(frontEnd)' unavailable: \(error); listening without it")
        }
        var canceller: EchoCanceller?
        if let echo {
            do {
                canceller = try EchoCanceller(echo.settings)
            } catch {
                logger.error("echo canceller '\(echo.settings)' unavailable: \(error); listening without it")
            }
        }
        return (stage, canceller)
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
    let listening = Atomic<Bool>(false)

    struct ListeningError: Error, CustomStringConvertible {
        var description: String
    }

    private let loopDone = Atomic<Bool>(false)
}

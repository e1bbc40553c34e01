import CParleyShims
import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleyDenoise
import ParleySpeech
import ParleyWake

extension ListeningPipeline {
    /// The listen thread's state: the decoders and the grammar they hold,
    /// and the `UtteranceHandler` the `ListeningDriver` drives. Each
    /// utterance is decoded with the grammar of the moment; at its end the
    /// pure `ListeningOutcome.decide` says what it was, and `act` carries
    /// that out (counts, log, the engine).
    final class Listener: UtteranceHandler {
        let pipeline: ListeningPipeline
        private(set) var recognizer: any CommandDecoding
        /// The neural noise suppressor in front of the command decoders
        /// (`speech.front_end: neural`), kept when they are made again.
        private var denoiser: NeuralDenoiser?
        /// Named mode's wake detector, on each commands utterance.
        private(set) var wake: (any WakeDecoding)?
        private var makeDictation: () throws -> any UtteranceDecoder<String>
        /// The grammar while the device speaks, compiled once per wake setting.
        private(set) var bargeIn: (model: PhraseModel, graph: WordGraph)
        /// The `WakeState.generation` the decoders were made for.
        private var wakeGeneration: Int
        /// The version of the requested grammar the recogniser holds (nil:
        /// it holds the barge-in grammar).
        var applied: Int? = 0
        /// Loaded the first time an open-text answer is expected (its
        /// 130,000-word model is not needed before).
        private var dictationDecoder: (any UtteranceDecoder<String>)?
        /// The kind of the open utterance, where its speech started, how far
        /// the wake detector has been fed (it gets the speech from its start
        /// to the newest sample) and where its confirmed wake phrase ended in
        /// the captured stream (for Home Assistant: a rejected command is
        /// handed on from there).
        private var open: (kind: ListeningKind, speech: Int64, wakeFed: Int64, wakeEnd: Int64?)?
        /// A commands utterance in named mode alone (direct mode off): the
        /// command decoders wait for the wake detector's proposal
        /// (`WakeGate`); nil: they run from the start.
        private var gate: WakeGate?
        /// The echo canceller the source runs (nil: none), and whether it
        /// had adapted when the open utterance began (`EchoGate`).
        var canceller: EchoCanceller?
        private var echoAdapted = true
        /// Where this thread last decided "hey <name>" alone (a stream
        /// position). The engine then asks for the window's grammar, but on
        /// a busy CPU that grammar may come after the person has started
        /// the command, which would be decoded as a command without the
        /// wake word (and rejected): such an utterance waits for it.
        private var wokeAt: Int64?
        /// The last utterance, when it was rejected words after the wake
        /// word ("hey …" then nothing the grammar credits): a person who
        /// pauses after "hey" longer than the phrase hold has their command
        /// cut off from it, and the command alone lacks the wake word. A
        /// rejected command soon after is decoded again together with it.
        private var wakeBeforePause: Range<Int64>?

        /// `bargeInModel`: what is listened for while the device speaks
        /// (`WakeGrammar.bargeIn`, or with the echo cancelled `bargeIn(commands:)`).
        init(pipeline: ListeningPipeline, initial: PhraseModel, bargeInModel: PhraseModel) throws {
            self.pipeline = pipeline
            // Compiled once, here on the listen thread: the decoder starts with
            // it and it is the grammar of version 0 (listening without a request).
            let graph = try GrammarCompiler().graph(for: initial)
            pipeline.grammars.setInitial(initial, graph: graph)
            let wakeState = pipeline.wakeState.withLock { $0 }
            let decoders = try pipeline.makeDecoders(initial, graph, wakeState.wake)
            denoiser = pipeline.makeNeuralDenoiser()
            recognizer = Self.denoised(decoders.command, denoiser)
            wake = decoders.wake
            makeDictation = decoders.dictation
            bargeIn = (bargeInModel, try GrammarCompiler().graph(for: bargeInModel))
            wakeGeneration = wakeState.generation
            pipeline.shared.withLock { $0.grammarSize = initial.rules.count }
        }

        /// Listens to `source` until the pipeline stops.
        func run<Source: SampleSource>(_ source: inout Source) {
            pipeline.listening.store(true, ordering: .releasing)
            var driver = ListeningDriver(endpointer: pipeline.endpointerConfiguration, listening: pipeline.utteranceListening)
            do {
                try driver.run(&source, handler: self)
            } catch {
                // The handler catches the decoders' errors; nothing else throws.
                pipeline.logger.error("listening stopped: \(error)")
            }
        }

        /// The dictation decoder, loaded on first use; nil when it cannot be.
        var dictation: (any UtteranceDecoder<String>)? {
            if dictationDecoder == nil {
                do {
                    dictationDecoder = try makeDictation()
                } catch {
                    pipeline.logger.error("dictation unavailable: \(error)")
                }
            }
            return dictationDecoder
        }

        /// The command decoders behind the neural stage, when it runs: it
        /// then hears what they hear (after `WakeGate` in named mode).
        static func denoised(_ command: any CommandDecoding, _ denoiser: NeuralDenoiser?) -> any CommandDecoding {
            denoiser.map { DenoisedCommandDecoder(command, denoiser: $0) } ?? command
        }

        // MARK: UtteranceHandler

        func begin(start: Int64, speech: Int64) {
            followWakeSettings()
            let kind = prepare(speaking: pipeline.isSpeaking())
            // Where every command starts with the name, or with "hey" heard by
            // the hey gate (`HeyGatedWake`); without it direct mode's
            // "hey <phrase>" has no wake phrase to wait for.
            gate = kind == .commands && wake != nil && (!pipeline.wake.direct || wake?.gatesDirectCommands == true)
                ? WakeGate(decodesUnproposed: wake?.unproposedMayBeCommands ?? true) : nil
            if gate == nil { recognizer.begin() }
            if kind == .commands { wake?.begin() }
            if kind == .dictation { dictation?.begin() }
            // The wake detector starts on its lead-in before the speech.
            let wakeFrom = max(0, speech - Int64(kind == .commands ? wake?.leadInSamples ?? 0 : 0))
            open = (kind, speech, wakeFrom, nil)
            echoAdapted = canceller?.hasAdapted ?? true
        }

        func feed(_ samples: [Int16]) {
            let passed = gate?.pass(samples) ?? samples
            if !passed.isEmpty { recognizer.feed(passed) }
            if open?.kind == .dictation { dictationDecoder?.feed(samples) }
        }

        /// A decoder that cannot say counts as a whole phrase that may go
        /// on: the utterance ends at the trailing silence.
        func phraseProgress() -> PhraseProgress {
            if let waiting = gate?.progress { return waiting }
            return (try? recognizer.phraseProgress()) ?? .extendable
        }

        func cancel() {
            if !undecoded { recognizer.cancel() }
            gate = nil
            dictationDecoder?.cancel()
        }

        /// The open commands utterance's wake phrase has not been proposed
        /// (`WakeGate`): the command decoders were never started on it.
        private var undecoded: Bool { gate.map { $0.state != .open } ?? false }

        /// What an utterance whose wake phrase was never proposed gives when
        /// it is not decoded at its end either (`WakeGate.remainder`).
        static let noWakePhrase = CommandResult(transcript: "", confidence: -.infinity, match: nil,
                                                rejection: "no wake phrase at its start")

        var phraseRules: PhraseRules {
            open?.kind.phraseRules(grammarCurrent: !isStale) ?? .none
        }

        /// The device stopped talking mid-utterance: what follows is the
        /// person's (an answer, a command), so start again with the grammar
        /// of the moment from just before now.
        func restartRequested() -> Bool {
            guard open?.kind == .bargeIn, !pipeline.isSpeaking() else { return false }
            // What was said over the device's voice before now is not decoded:
            // a command cut this way shows here.
            pipeline.logger.debug("the device stopped speaking: the utterance starts again",
                                  metadata: ["from-sample": "\(open.map { $0.speech } ?? 0)"])
            return true
        }

        func advanced(to newest: Int64) {
            feedWake(upTo: newest)
        }

        func finish(_ utterance: Range<Int64>, newest: Int64, samples: () -> [Int16],
                    audio: (Range<Int64>) -> [Int16]?) -> Never? {
            pipeline.shared.withLock { $0.segments += 1 }
            guard let current = open else { return nil }
            let ring = pipeline.capture.ring
            // When the last sample of the utterance was captured (the ring
            // is filled in real time), for the latency figures.
            let age = Double(ring.writePosition - utterance.upperBound) / Double(ring.sampleRate)
            let spokenEnd = ContinuousClock.now - .milliseconds(Int64(age * 1000))
            let decided = Decided(spokenEnd: spokenEnd, startSample: utterance.lowerBound, endSample: utterance.upperBound,
                                  decidedSample: ring.writePosition, decodeStart: ContinuousClock.now)
            let window = Self.windowSamples(pipeline.wake.window, pipeline)
            let afterWake = wokeAt.map { utterance.lowerBound - $0 < window } ?? false
            wokeAt = nil
            let wakeBefore = wakeBeforePause.flatMap { utterance.lowerBound - $0.upperBound < window ? $0 : nil }
            wakeBeforePause = nil
            guard let (kind, streamed, dictated) = decode(current.kind, afterWake: afterWake, samples: samples) else {
                open = nil
                return nil
            }
            var command = streamed
            if kind == .commands, command.match == nil || command.rejection != nil, let wakeBefore,
               let joined = rejoined(wakeBefore, utterance, audio: audio) {
                command = joined
            }
            let words = command.transcript.split(separator: " ").map(String.init)
            let woke: Bool
            if ListeningOutcome.needsWake(kind: kind, command: command) {
                // "hey <name>" alone: the rest of the stream gives its tail.
                feedWake(upTo: newest)
                // Only an utterance streamed as commands went to the detector.
                let confirmed = current.kind == .commands ? (try? wake?.finish()) ?? false : false
                // A detector of the name alone, "hey" required: the command
                // decoders must have heard "hey <name>".
                let grammar = pipeline.wakeGrammar
                woke = confirmed && (wake?.hearsHey ?? true || grammar.heyOptional
                    || grammar.startsWithHeyAndName(words))
            } else {
                woke = false
            }
            var outcome = ListeningOutcome.decide(kind: kind, command: command, dictated: dictated, woke: woke,
                                                  wake: pipeline.wakeGrammar)
            outcome = ListeningOutcome.unaddressed(outcome, kind: kind, command: command, askRule: pipeline.askRule ?? AskRule()) {
                // The name in the words, and proposed by the wake detector
                // where one listens: its first stage, not its confirmation,
                // as `WakeGate` opens named mode's decoders on (the keyword
                // network proposed 399 of 400 held-out "computer"s in noise
                // at 10 dB), so a named command in noise is asked back as
                // before. The words alone where the detector did not hear
                // the utterance (streamed as a window's) or where, as
                // PocketSphinx's, it misses names the grammar still hears
                // (`unproposedMayBeCommands`: the gate decodes those too).
                guard pipeline.wakeGrammar.saysName(words) else { return false }
                guard let wake, current.kind == .commands, !wake.unproposedMayBeCommands else { return true }
                feedWake(upTo: newest)
                return wake.proposed
            }
            let wakeEnd = open?.wakeEnd
            open = nil
            if kind == .bargeIn, pipeline.echo != nil {
                let before = outcome
                outcome = ListeningOutcome.gated(outcome, adapted: echoAdapted, keptDecibels: {
                    pipeline.keptDecibels(utterance, cleaned: samples())
                }, ownSpeech: OwnSpeech(pipeline.saying()), wake: pipeline.wakeGrammar,
                   meetsBaseThreshold: command.confidence >= pipeline.rejectionThreshold)
                if outcome != before {
                    pipeline.logger.debug("ignored over the device's voice", metadata: [
                        "heard": "\(command.transcript)", "why": "\(echoAdapted ? "its own echo" : "the canceller has not adapted yet")",
                    ])
                }
            }
            if case .woken = outcome { wokeAt = utterance.upperBound }
            // Not a command dropped as unaddressed: it was "hey" and words the
            // grammar matched, not "hey" and then a pause.
            if case .reject(_, let why) = outcome, why != ListeningOutcome.unaddressedReason, kind == .commands, !words.isEmpty,
               pipeline.wakeGrammar.strip(words).count < words.count {
                wakeBeforePause = utterance
            }
            if pipeline.handOnRejected(outcome, kind: kind, heard: command.transcript, wakeEnd: wakeEnd, woke: woke,
                                       utterance: utterance, spokenEnd: spokenEnd) {
                return nil
            }
            // Only a command said with nothing open is asked back: an answer
            // to a question is already one turn of a conversation.
            let unsure = (kind == .commands || kind == .window) && pipeline.askRule?.asks(command) == true
            pipeline.act(outcome, command: command, decided: decided, unsure: unsure,
                         doubted: unsure ? pipeline.askRule?.doubted(command) ?? [] : [])
            if case .text(_, dictated: false) = outcome {
                // After the hand-over: copying the audio must not delay the answer.
                pipeline.onHeard?(samples(), ring.sampleRate, command.transcript)
            }
            return nil
        }

        /// The rejected utterance `before` (the wake word, then a pause) and
        /// `utterance` decoded as one, when the source still holds both and
        /// the two together are understood; nil otherwise (the result of
        /// `utterance` alone stands).
        private func rejoined(_ before: Range<Int64>, _ utterance: Range<Int64>,
                              audio: (Range<Int64>) -> [Int16]?) -> CommandResult? {
            guard let samples = audio(before.lowerBound..<utterance.upperBound) else { return nil }
            do {
                let joined = try recognizer.recognize(samples)
                guard joined.match != nil, joined.rejection == nil else { return nil }
                pipeline.logger.debug("joined with the wake word before a pause", metadata: [
                    "heard": "\(joined.transcript)", "start-sample": "\(before.lowerBound)",
                ])
                return joined
            } catch {
                pipeline.logger.error("recognition failed: \(error)")
                return nil
            }
        }

        /// The command decoder's result and, when the outcome needs it, the
        /// dictated text; nil when recognition failed (logged). When the
        /// engine changed the grammar while the person spoke (a question
        /// was asked meanwhile), the streamed decode used the old one: the
        /// buffered utterance is decoded again with the new grammar.
        private func decode(_ streamedKind: ListeningKind, afterWake: Bool, samples: () -> [Int16])
            -> (kind: ListeningKind, command: CommandResult, dictated: String?)? {
            var kind = streamedKind
            var command: CommandResult
            var dictated: String?
            // Never heard by the command decoders (`WakeGate`): decoded again
            // with a newer grammar (a rare path: the grammar changed while
            // it was spoken) unless that one still needs the wake phrase and
            // the gate would not decode it at its end either (too long to be
            // a command, or said in a quiet room), as `decodeHeld` decides:
            // asked only on that path, of the gate as it is now, before the
            // end's decode takes its pieces.
            let unheard = undecoded, heldGate = gate
            func again(_ buffered: [Int16]) throws -> CommandResult {
                let decodable = heldGate?.decodesAtEnd() ?? true
                return unheard && !decodable && kind == .commands ? Self.noWakePhrase : try recognizer.recognize(buffered)
            }
            do {
                if kind == .commands && afterWake {
                    awaitGrammar("the window's grammar after the wake word") { $0.current.kind == .window }
                }
                if kind != .bargeIn && isStale {
                    cancel()
                    kind = prepare(speaking: false)
                    let buffered = samples()
                    command = try again(buffered)
                    if ListeningOutcome.needsDictation(kind: kind, command: command), let dictation {
                        dictated = try? transcribe(buffered, with: dictation)
                    }
                } else {
                    command = unheard ? try decodeHeld() : try recognizer.finish()
                    gate = nil
                    if kind == .dictation, let dictation {
                        if ListeningOutcome.needsDictation(kind: kind, command: command) {
                            dictated = try? finishDictation(dictation)
                        } else {
                            dictation.cancel()
                        }
                    } else if kind != .bargeIn && (command.match == nil || command.rejection != nil) && pipeline.grammars.isCompiling {
                        // Nothing matched while a newer grammar compiles (a
                        // shortcut or app just added, a question just asked):
                        // the words may be in it, so they are decoded again with it.
                        awaitGrammar("the grammar being compiled") { !$0.isCompiling }
                        if isStale {
                            kind = prepare(speaking: false)
                            command = try again(samples())
                        }
                    }
                }
            } catch {
                cancel()
                pipeline.logger.error("recognition failed: \(error)")
                return nil
            }
            return (kind, command, dictated)
        }

        /// An utterance whose wake phrase was never proposed, at its end:
        /// decoded from the gate's held pieces when short enough to be a
        /// command and noisy (`WakeGate.remainder`), else rejected undecoded.
        private func decodeHeld() throws -> CommandResult {
            guard let pieces = gate?.remainder() else { return Self.noWakePhrase }
            startCommands(with: pieces)
            return try recognizer.finish()
        }

        /// Starts the command decoders on an utterance the gate held, fed
        /// in the pieces it came in (what they would have seen from its start).
        private func startCommands(with held: [[Int16]]) {
            recognizer.begin()
            for piece in held { recognizer.feed(piece) }
        }

        private func transcribe(_ samples: [Int16], with dictation: any UtteranceDecoder<String>) throws -> String {
            do { return try dictation.decode(samples) } catch {
                pipeline.logger.error("dictation failed: \(error)")
                throw error
            }
        }

        private func finishDictation(_ dictation: any UtteranceDecoder<String>) throws -> String {
            do { return try dictation.finish() } catch {
                pipeline.logger.error("dictation failed: \(error)")
                throw error
            }
        }

        /// Streams a commands utterance through the wake detector (named mode).
        /// It reads the capture ring itself, not the front end's output: fed
        /// the denoised signal the detector missed far more ("computer" clean
        /// 17.5% -> 50.0% held out, and no gain in babble, clatter or kitchen
        /// noise; BENCHMARKS.md, "The wake word in noise (issue 27 items 1-2)").
        private func feedWake(upTo newest: Int64) {
            guard let current = open, current.kind == .commands, let wake, newest > current.wakeFed else { return }
            let fedBefore = wake.samplesFed
            let confirmedBefore = wake.wakeEndSample
            wake.feed(pipeline.capture.ring.samples(from: current.wakeFed, count: Int(newest - current.wakeFed)))
            if let failure = wake.takeFailure() { pipeline.logger.error("wake detector failed: \(failure)") }
            if let held = gate?.heard(speechSamples: newest - current.speech, proposed: wake.opensGate) {
                // Proposed in time: the command decoders start on the
                // utterance from its beginning and catch up.
                startCommands(with: held)
            }
            if let end = wake.wakeEndSample, end != confirmedBefore {
                // Detector time (samples of all it was fed) to a stream position:
                // at most this block's end, at most a second before its start
                // (the verification stage confirms a little after the phrase).
                let position = current.wakeFed + end - fedBefore
                open?.wakeEnd = min(newest, max(current.wakeFed - Int64(pipeline.capture.ring.sampleRate), position))
            }
            open?.wakeFed = newest
        }

        /// The window the wake word opens, in samples.
        static func windowSamples(_ window: Duration, _ pipeline: ListeningPipeline) -> Int64 {
            Int64(Wiring.seconds(window) * Double(pipeline.capture.ring.sampleRate))
        }

        /// Blocks this thread (not the capture thread: the ring holds the
        /// audio meanwhile) until `ready` holds of the grammar builds, for at
        /// most the pipeline's `grammarWait`; `isStale` then says whether
        /// the utterance is decoded again.
        private func awaitGrammar(_ what: String, until ready: (GrammarBuilds) -> Bool) {
            let polls = Int(pipeline.grammarWait / .milliseconds(10))
            for _ in 0..<polls {
                if ready(pipeline.grammars) || pipeline.stopping.load(ordering: .acquiring) { return }
                usleep(10_000)
            }
            pipeline.logger.notice("\(what) did not come in time: the utterance is decided without it")
        }

        /// Makes the decoders again when the wake settings changed
        /// (`ListeningPipeline.setWake`): with the grammar asked for now,
        /// which holds the new wake words once its compile is done. Listening
        /// pauses while the models load (about a second here, a few on a
        /// Pi 3); the ring keeps the audio meanwhile. Should that fail, the
        /// decoders in use stay, with the settings they were made for.
        private func followWakeSettings() {
            let state = pipeline.wakeState.withLock { $0 }
            guard state.generation != wakeGeneration else { return }
            wakeGeneration = state.generation
            awaitGrammar("the grammar with the new wake words") { !$0.isCompiling }
            let requested = pipeline.grammars.current
            do {
                let graph = try requested.graph ?? GrammarCompiler().graph(for: requested.model)
                let decoders = try pipeline.makeDecoders(requested.model, graph, state.wake)
                let bargeInModel = state.bargeIn ?? bargeIn.model
                let bargeInGraph = try GrammarCompiler().graph(for: bargeInModel)
                recognizer.cancel()
                recognizer = Self.denoised(decoders.command, denoiser)
                wake = decoders.wake
                makeDictation = decoders.dictation
                bargeIn = (bargeInModel, bargeInGraph)
                applied = requested.version
                pipeline.shared.withLock { $0.grammarSize = requested.model.rules.count }
                parley_release_free_memory()
                pipeline.logger.info("listening with the new wake settings", metadata: [
                    "name": "\(state.wake.name)", "sensitivity": "\(state.wake.sensitivity)",
                ])
            } catch {
                pipeline.logger.error("the new wake settings are not in use (\(error)); listening goes on with the previous ones")
            }
        }

        // MARK: Grammars

        /// Loads the grammar for an utterance of `speaking` state; returns its kind.
        func prepare(speaking: Bool) -> ListeningKind {
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
                try recognizer.update(model: model, graph: graph ?? GrammarCompiler().graph(for: model))
                applied = version
                pipeline.shared.withLock { $0.grammarSize = model.rules.count }
            } catch {
                pipeline.logger.error("grammar update failed: \(error)")
            }
        }
    }

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
        return [
            "confidence": "\(command.confidence)", "snr-db": "\(String(format: "%.1f", evidence.snr))", "threshold": "\(String(format: "%.3f", evidence.threshold))",
            "weakest-word": "\(String(format: "%.3f", evidence.weakestWord))",
            "absorbed": "\(String(format: "%.2f", evidence.absorbedSpeech))",
        ]
    }

    /// Hands text to the engine without waiting for it: the listen thread
    /// goes on listening (a "cancel" must be heard while an app performs).
    private func hand(_ text: String, spokenEnd: ContinuousClock.Instant?, unsure: Bool = false, doubted: [String] = []) {
        if let spokenEnd { latency.commandEnded(at: spokenEnd) }
        inbox.send(unsure ? .unsure(text, doubted: doubted) : .text(text))
    }
}

/// The decoders the daemon's listener drives: PocketSphinx's in the product
/// (`pocketSphinx(room:)`), scripted ones in tests.
public struct ListeningDecoders {
    public var command: any CommandDecoding
    /// Named mode's wake detector (nil: direct mode, "hey <phrase>" only).
    public var wake: (any WakeDecoding)?
    /// Loads the dictation decoder, the first time an open-text answer is expected.
    public var dictation: () throws -> any UtteranceDecoder<String>

    public init(command: any CommandDecoding, wake: (any WakeDecoding)?,
                dictation: @escaping () throws -> any UtteranceDecoder<String>) {
        self.command = command
        self.wake = wake
        self.dictation = dictation
    }

    /// Made on the listen thread from the grammar in use, its graph and the
    /// wake settings in force (made again when those change, `setWake`).
    public typealias Factory = @Sendable (_ initial: PhraseModel, _ graph: WordGraph, _ wake: ParleyConfig.Wake) throws
        -> ListeningDecoders

    /// Named mode's detector: the name's speech_embedding head (`wake.detector`
    /// embedding, where model/wake has one), else its keyword network
    /// (`network`, or an embedding head that is missing or unusable), else
    /// PocketSphinx's two stages. A network file that cannot be read is logged, naming the
    /// file and what is wrong, and PocketSphinx listens instead: the device
    /// stays wakeable.
    static func namedWake(_ wake: ParleyConfig.Wake, logger: Logger = Logger(label: "parley.wake"),
                          modelPath: (String) -> String? = KeywordModel.wakeModelPath(name:),
                          headPath: (String) -> String? = KeywordModel.wakeHeadPath(name:)) throws -> any WakeDecoding {
        if wake.detector == .embedding {
            if let path = headPath(wake.name) {
                do {
                    // The name's keyword network, where it has one, wakes the embedding.
                    return try EmbeddingWakeUtterance.load(head: path, networkPath: modelPath(wake.name), sensitivity: wake.sensitivity)
                } catch {
                    logger.error("wake word head unusable; the keyword network listens for the name: \(error)")
                }
            } else {
                logger.warning("no speech_embedding head for the wake name; the keyword network listens for it",
                               metadata: ["name": "\(wake.name)"])
            }
        }
        if wake.detector != .pocketsphinx {
            if let path = modelPath(wake.name) {
                do {
                    return KeywordWakeUtterance(KeywordSpotter(model: try KeywordModel.load(path), sensitivity: wake.sensitivity))
                } catch {
                    logger.error("wake word network unusable; PocketSphinx listens for the name: \(error)")
                }
            } else {
                logger.warning("no keyword network for the wake name; PocketSphinx listens for it", metadata: ["name": "\(wake.name)"])
            }
        }
        return WakeUtterance(try WakeDetector(mode: .named(wake.name, heyOptional: wake.heyOptional), sensitivity: wake.sensitivity))
    }

    /// With `wake.hey_gate` in direct mode, the "hey" head in front of the
    /// command decoders (`HeyGatedWake`), wrapping named mode's detector;
    /// a missing or unreadable head is logged and commands decode ungated.
    static func heyGated(_ named: (any WakeDecoding)?, _ wake: ParleyConfig.Wake,
                         logger: Logger = Logger(label: "parley.wake"),
                         headPath: (String) -> String? = KeywordModel.wakeHeadPath(name:)) throws -> (any WakeDecoding)? {
        guard wake.direct, wake.heyGate else { return named }
        guard let path = headPath("hey") else {
            logger.warning("no speech_embedding head for \"hey\" (model/wake/hey.embedding.json); direct commands decode ungated")
            return named
        }
        do {
            let weights = try SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate())
            let hey = EmbeddingSpotter(model: try EmbeddingWakeModel.load(path), weights: weights)
            return HeyGatedWake(name: named, hey: hey)
        } catch {
            logger.error("the hey gate's head is unusable; direct commands decode ungated: \(error)")
            return named
        }
    }

    /// PocketSphinx: the streaming command decoder at the wake
    /// sensitivity's rejection threshold, the two-stage wake detector in
    /// named mode, the dictation decoder.
    /// The command and dictation decoders follow `room` (the household's
    /// transform, ``RoomLearning``); the wake detector never does.
    public static func pocketSphinx(room: RoomTransform.Slot? = nil) -> Factory {
        { initial, graph, wake in
            var settings = DecoderSettings()
            settings.room = room
            var dictationSettings = DictationDecoder.settings
            dictationSettings.room = room
            return ListeningDecoders(
                command: try StreamingCommandDecoder(
                    model: initial, graph: graph, settings: settings,
                    threshold: ListeningPipeline.rejectionThreshold(sensitivity: wake.sensitivity)),
                wake: try heyGated(wake.named ? try namedWake(wake) : nil, wake),
                dictation: { [dictationSettings] in try DictationDecoder(settings: dictationSettings) })
        }
    }
}

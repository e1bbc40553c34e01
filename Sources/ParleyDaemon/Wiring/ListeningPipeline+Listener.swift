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
        var gate: WakeGate?
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
        /// Where the capture stood when the open barge-in utterance's voice
        /// was first seen to have stopped (`splitPosition`).
        private var voiceStoppedAt: Int64?
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
            recognizer = Self.denoised(decoders.command, denoiser, corroborating: pipeline.askRule ?? AskRule())
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
        /// then hears what they hear (after `WakeGate` in named mode). What
        /// the ask rule would ask back is decoded again without the network,
        /// and not asked when both agree (`DenoisedCommandDecoder`). With
        /// asking off, by the shipped rule's lines: `unaddressed` reads them
        /// then too, and they were chosen with corroboration.
        static func denoised(_ command: any CommandDecoding, _ denoiser: NeuralDenoiser?,
                             corroborating askRule: AskRule?) -> any CommandDecoding {
            denoiser.map { DenoisedCommandDecoder(command, denoiser: $0, corroborating: askRule) } ?? command
        }

        // MARK: UtteranceHandler

        func begin(start: Int64, speech: Int64) {
            followWakeSettings()
            let kind = prepare(speaking: pipeline.isSpeaking())
            // Where every command starts with the name, or with "hey" heard by
            // the hey gate (`HeyGatedWake`); without it direct mode's
            // "hey <phrase>" has no wake phrase to wait for.
            gate = kind == .commands && wake != nil && (!pipeline.wake.direct || wake?.gatesDirectCommands == true)
                ? WakeGate(atEnd: wake?.unopenedAtEnd ?? .decodedWhenNoisy) : nil
            if gate == nil { recognizer.begin() }
            // The wake detector starts on its lead-in before the speech.
            let wakeFrom = max(0, speech - Int64(kind == .commands ? wake?.leadInSamples ?? 0 : 0))
            if kind == .commands { wake?.begin(at: wakeFrom) }
            if kind == .dictation { dictation?.begin() }
            open = (kind, speech, wakeFrom, nil)
            voiceStoppedAt = nil
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
        var undecoded: Bool { gate.map { $0.state != .open } ?? false }

        /// What an utterance whose wake phrase was never proposed gives when
        /// it is not decoded at its end either (`WakeGate.remainder`).
        static let noWakePhrase = CommandResult(transcript: "", confidence: -.infinity, match: nil,
                                                rejection: "no wake phrase at its start")

        var phraseRules: PhraseRules {
            open?.kind.phraseRules(grammarCurrent: !isStale) ?? .none
        }

        /// The device stopped talking mid-utterance: what was said over its
        /// voice is decided on its own, with the barge-in grammar (a "stop"
        /// said as a read-back ends is an interruption, not lost), and what
        /// follows is the person's (an answer, a command), heard with the
        /// grammar of the moment. The split is where the capture stood when
        /// the voice was first seen to have stopped: a listener behind the
        /// stream (a loaded machine) still has audio said over the voice to
        /// decode before it. (Before, the utterance started again from
        /// wherever the listener had read to, and a "stop" said just before
        /// the voice ended was thrown away: the order stayed open.)
        func splitPosition(newest: Int64) -> Int64? {
            guard open?.kind == .bargeIn else { return nil }
            guard !pipeline.isSpeaking() else {
                // Talking again (the next line) before the listener got there: a later stop counts.
                voiceStoppedAt = nil
                return nil
            }
            let stopped = voiceStoppedAt ?? pipeline.capture.ring.writePosition
            voiceStoppedAt = stopped
            guard newest >= stopped else { return nil }
            pipeline.logger.debug("the device stopped speaking: what was said over it is decided, what follows is heard anew",
                                  metadata: ["at-sample": "\(stopped)", "behind-samples": "\(newest - stopped)"])
            return stopped
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
            // The shipped rule's lines also when asking is off: noise and
            // other people's talk must not get acted on instead of asked.
            let unsureLines = pipeline.askRule ?? AskRule()
            outcome = ListeningOutcome.unaddressed(outcome, kind: kind, command: command, askRule: unsureLines) {
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
            outcome = ListeningOutcome.unsureVolumeInConversation(outcome, kind: kind, command: command, askRule: unsureLines)
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
                pipeline.logger.debug("the gate opened: the command decoders start", metadata: [
                    "speech-ms": "\((newest - current.speech) * 1000 / Int64(pipeline.capture.ring.sampleRate))",
                    "by": "\(wake.proposed ? "the name" : "hey")",
                ])
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
        func awaitGrammar(_ what: String, until ready: (GrammarBuilds) -> Bool) {
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
                recognizer = Self.denoised(decoders.command, denoiser, corroborating: pipeline.askRule ?? AskRule())
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
}

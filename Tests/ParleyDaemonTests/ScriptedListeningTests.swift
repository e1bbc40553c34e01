import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleySpeech
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyDaemon

/// The command decoder of a scripted pipeline: `ScriptedDecoder`'s script
/// plus what the listener asks of a command decoder (grammar swaps, a
/// buffered decode again when the grammar changed mid-utterance). Read by
/// the test only once the pipeline has stopped.
final class ScriptedCommands: ScriptedDecoder<CommandResult>, CommandDecoding, @unchecked Sendable {
    /// Every grammar loaded, in order.
    private(set) var grammars: [PhraseModel] = []
    /// What is heard instead of the script's line once the decoder holds a
    /// loaded grammar, given the grammars loaded (nil: the script's line).
    var heardWith: (([PhraseModel]) -> CommandResult?)?

    func update(model: PhraseModel, graph: WordGraph) throws { grammars.append(model) }

    override func finish() throws -> CommandResult {
        let scripted = try super.finish()
        return heardWith?(grammars) ?? scripted
    }

    func recognize(_ samples: [Int16]) throws -> CommandResult { try decode(samples) }
}

/// An intent of its own (ListeningPipelineTests counts `BakeBread`'s
/// performs, and suites run side by side).
struct MakeToast: AppIntent {
    static let title = "Make toast"
    static let category = IntentCategory.generic
    static let performed = Atomic<Int>(0)
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        Self.performed.add(1, ordering: .sequentiallyConsistent)
        return IntentResult(dialog: "Toast is on.")
    }
}

struct Toaster: ParleyApp {
    let identifier = "Toaster"
    let name = "Toaster"
    var intents: [any AppIntent.Type] { [MakeToast.self] }
    var shortcuts: [AppShortcut] {
        [AppShortcut(intent: MakeToast.self, phrases: ["make toast with {app}"], shortTitle: "Make toast")]
    }
}

/// The wake detector of a scripted pipeline. Its first stage proposes the
/// wake phrase once it has been fed `proposesAfter` samples of an
/// utterance's speech (nil: never).
final class ScriptedWake: ScriptedDecoder<Bool>, WakeDecoding, @unchecked Sendable {
    var proposesAfter: Int? = 1
    /// False: a detector of the name alone, as the keyword network.
    var hearsHey = true
    /// False: as the keyword network, whose gate decodes nothing it did not propose.
    var unproposedMayBeCommands = true
    /// True: as the hey gate (`HeyGatedWake`), it gates direct mode's commands too.
    var gatesDirectCommands = false
    /// Set: what the gate does at the end of an utterance it never opened
    /// on (the hey gate's `.decodedWhenShort`); nil: the protocol's default.
    var atEnd: WakeGate.AtEnd?
    var unopenedAtEnd: WakeGate.AtEnd { atEnd ?? (unproposedMayBeCommands ? .decodedWhenNoisy : .rejected) }
    var proposed: Bool {
        guard let after = proposesAfter, let open = utterances.last, open.finished == nil else { return false }
        return open.fed.count >= after
    }
}

/// The daemon's listening pipeline with scripted decoders: real capture
/// (ALSA's file plugin) of synthetic speech, the real driver, listener and
/// engine; what was "said" comes from the script, so no espeak-ng and no
/// PocketSphinx. Wake then command, rejection, and a cancel over the
/// device's own voice.
@Suite(.serialized) struct ScriptedListeningTests {
    static func heard(_ transcript: String, _ target: PhraseTarget) -> CommandResult {
        CommandResult(transcript: transcript, confidence: -0.1, match: PhraseMatch(ruleID: "scripted", target: target, slots: [:]))
    }
    static let order = heard("make toast with toaster", .intent(app: "Toaster", intent: "MakeToast", fixed: [:]))
    static let nothing = CommandResult(transcript: "", confidence: -5, match: nil, rejection: "scripted: no command")

    typealias Running = ListeningPipelineTests.Running

    static func start(words: [ClosedRange<Double>], seconds: Double, in dir: TemporaryDirectory, named: Bool,
                      direct: Bool = true, commands: ScriptedCommands, wake wakeDecoder: ScriptedWake? = nil,
                      speaking: @escaping @Sendable () -> Bool = { false },
                      interrupt: @escaping @Sendable () -> Void = {},
                      compile: @escaping @Sendable (PhraseModel) throws -> WordGraph = { try GrammarCompiler().graph(for: $0) },
                      grammarWait: Duration = ListeningPipeline.defaultGrammarWait, askRule: AskRule? = nil,
                      decoders: ListeningDecoders.Factory? = nil, noise: Double = 200)
        async throws -> Running {
        let wav = URL(fileURLWithPath: dir.file("in.wav"))
        try WAVFile.write(SyntheticSpeech.samples(seconds: seconds, words: words, noise: noise), sampleRate: 16_000, to: wav)
        let capture = try CaptureService(configuration: CaptureConfiguration.file(
            wav: wav, workDirectory: URL(fileURLWithPath: dir.path), pacing: .device, ringSeconds: 16))
        let harness = try EngineHarness(apps: [Toaster()], primaryApp: "Toaster")
        var wake = ParleyConfig.Wake()
        wake.named = named
        wake.direct = direct
        let pipeline = ListeningPipeline(
            capture: capture, engine: harness.engine, wake: wake, endpointSilence: .milliseconds(600),
            playbackName: "none", latency: LatencyProbe(), isSpeaking: speaking, interruptSpeech: interrupt,
            logger: Logger(label: "test"), compileGrammar: compile, grammarWait: grammarWait,
            decoders: decoders ?? { _, _, _ in
                ListeningDecoders(command: commands, wake: wakeDecoder) {
                    throw SpeechError.badSetting(name: "dictation", value: "scripted", expected: "no dictation in this test")
                }
            }, askRule: askRule)
        let task = Task { try await pipeline.run() }
        return Running(pipeline: pipeline, harness: harness, task: task)
    }

    /// Plays one recording of `words` to a pipeline in `dir` and reports
    /// whether the scripted order performed (once) before it was stopped.
    static func performs(words: [ClosedRange<Double>], seconds: Double, in dir: TemporaryDirectory, named: Bool,
                         direct: Bool, commands: ScriptedCommands, wake: ScriptedWake, noise: Double = 200) async throws -> Bool {
        let performedBefore = MakeToast.performed.load(ordering: .sequentiallyConsistent)
        let running = try await start(words: words, seconds: seconds, in: dir, named: named, direct: direct,
                                      commands: commands, wake: wake, noise: noise)
        let performed = try await Poll.holds("the command performed") {
            MakeToast.performed.load(ordering: .sequentiallyConsistent) == performedBefore + 1
        }
        await running.stop()
        return performed
    }

    /// Every utterance of the recording decided.
    static func decided(_ running: Running, _ count: Int) async throws -> Bool {
        try await Poll.holds("the recording ended and \(count) utterance(s) were decided") {
            running.pipeline.capture.status.state == .endOfInput && running.pipeline.listeningCounts.decided >= count
        }
    }

    /// The page's wake word and sensitivity, changed while listening: the
    /// grammar is asked for again with the new words, and the next
    /// utterance is decoded by decoders made again for the new settings.
    @Test func newWakeSettingsAreHeardFromTheNextUtterance() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let performedBefore = MakeToast.performed.load(ordering: .sequentiallyConsistent)
        let before = ScriptedCommands([], otherwise: .init(.incomplete, Self.nothing))
        let after = ScriptedCommands([.init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let made = Mutex<[ParleyConfig.Wake]>([])
        // The listener's first decoders are held until the settings have
        // changed: capture starts only after them, so the one utterance
        // comes after the change however loaded the machine is.
        let changed = DispatchSemaphore(value: 0)
        let running = try await Self.start(words: [3.0...4.2], seconds: 7, in: dir, named: false, commands: before,
                                           decoders: { _, _, wake in
            let count = made.withLock { $0.append(wake); return $0.count }
            if count == 1 { _ = changed.wait(timeout: .now() + 120) }
            return ListeningDecoders(command: count == 1 ? before : after, wake: nil) {
                throw SpeechError.badSetting(name: "dictation", value: "scripted", expected: "no dictation in this test")
            }
        })
        var jarvis = ParleyConfig.Wake()
        jarvis.named = true
        jarvis.name = "jarvis"
        jarvis.sensitivity = 0.2
        #expect(try await Poll.holds("the listener's first decoders being made") { made.withLock { $0.count } == 1 })
        let pipeline = running.pipeline, settings = jarvis
        let change = Task { await pipeline.setWake(settings) }
        #expect(try await Poll.holds("the new settings stored") { running.pipeline.wakeState.withLock { $0.generation } == 1 })
        changed.signal()
        await change.value
        #expect(running.pipeline.wakeGrammar.strip(["hey", "jarvis", "toast"]) == ["toast"])
        #expect(running.pipeline.rejectionThreshold == ListeningPipeline.rejectionThreshold(sensitivity: 0.2))
        let performed = try await Poll.holds("the command after the change performed") {
            MakeToast.performed.load(ordering: .sequentiallyConsistent) == performedBefore + 1
        }
        await running.stop()
        #expect(performed)
        #expect(made.withLock { $0.map(\.name) } == ["computer", "jarvis"])
        #expect(made.withLock { $0.last } == jarvis)
        #expect(before.utterances.isEmpty, "nothing was decoded with the old decoders")
        #expect(after.utterances.count == 1)
        // The same settings again change nothing.
        await running.pipeline.setWake(jarvis)
        #expect(running.pipeline.wakeState.withLock { $0.generation } == 1)
    }

    @Test func theWakePhraseAloneOpensAWindowAndTheCommandAfterItPerforms() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let performedBefore = MakeToast.performed.load(ordering: .sequentiallyConsistent)
        let commands = ScriptedCommands([.init(.extendable, Self.heard("hey computer", WakeGrammar.aloneTarget)),
                                         .init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let wake = ScriptedWake([.init(.extendable, true)], otherwise: .init(.extendable, false))
        let running = try await Self.start(words: [2.0...2.8, 4.5...5.7], seconds: 8, in: dir, named: true,
                                           commands: commands, wake: wake)
        let performed = try await Poll.holds("the command after the wake phrase performed") {
            MakeToast.performed.load(ordering: .sequentiallyConsistent) == performedBefore + 1
        }
        let events = await running.harness.sink.events
        await running.stop()
        #expect(performed, "the command after the wake phrase performed")
        #expect(events.contains { if case .listening(.window) = $0 { true } else { false } }, "woken: a window opened")
        #expect(commands.utterances.map(\.finished) == [true, true])
        #expect(wake.utterances.first?.fed.isEmpty == false, "the wake detector heard the first utterance")
        #expect(running.pipeline.listeningCounts.segments == 2)
    }

    /// A detector that hears the name alone (the keyword network), "hey"
    /// required (`hey_optional: false`, the default): its confirmation wakes
    /// the device when the command decoders heard "hey <name>", not when
    /// they heard the name alone.
    @Test func aNameAloneDetectorNeedsTheHeyWhereItIsRequired() async throws {
        for (transcript, wakes) in [("hey computer", true), ("computer", false)] {
            let dir = try TemporaryDirectory(); defer { dir.remove() }
            let heard = transcript == "hey computer" ? Self.heard(transcript, WakeGrammar.aloneTarget)
                : CommandResult(transcript: transcript, confidence: -3, match: nil, rejection: "scripted: no hey")
            let commands = ScriptedCommands([.init(.extendable, heard)], otherwise: .init(.incomplete, Self.nothing))
            let wake = ScriptedWake([.init(.extendable, true)], otherwise: .init(.extendable, false))
            wake.hearsHey = false
            let running = try await Self.start(words: [1.5...2.3], seconds: 4, in: dir, named: true,
                                               commands: commands, wake: wake)
            func windowOpened() async -> Bool {
                await running.harness.sink.events.contains { if case .listening(.window) = $0 { true } else { false } }
            }
            if wakes {
                // Woken is neither a recognition nor a rejection: wait for the window.
                #expect(try await Poll.holds("a window opened") { await windowOpened() }, "\(transcript): a window opens")
            } else {
                #expect(try await Self.decided(running, 1))
                #expect(await running.pipeline.recognitions() == 0, "rejected")
                #expect(await !windowOpened(), "\(transcript): no window")
            }
            await running.stop()
            #expect(wake.utterances.first?.finished == true, "the detector confirmed the name")
        }
    }

    /// Named mode alone: speech that runs on without the detector's first
    /// stage proposing the wake phrase (a television) is not decoded at
    /// all: the command grammar and its phone loop are never started. With
    /// direct mode on as well ("hey <phrase>" needs no name), every
    /// utterance is decoded.
    @Test func speechWithoutTheWakePhraseIsNotDecoded() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let commands = ScriptedCommands([], otherwise: .init(.complete, Self.order))
        let wake = ScriptedWake([], otherwise: .init(.extendable, false))
        wake.proposesAfter = nil
        // Speech that runs on longer than a command (9.5 s), so it is not
        // decoded at its end either.
        let running = try await Self.start(words: [1.5...11.0], seconds: 13, in: dir, named: true,
                                           direct: false, commands: commands, wake: wake)
        #expect(try await Self.decided(running, 1))
        await running.stop()
        #expect(commands.utterances.isEmpty, "the command decoders were never started")
        #expect(wake.utterances.count == 1, "the wake detector heard it")
        #expect(await running.pipeline.recognitions() == 0, "rejected")

        let both = try TemporaryDirectory(); defer { both.remove() }
        let direct = ScriptedCommands([], otherwise: .init(.complete, Self.nothing))
        let silentWake = ScriptedWake([], otherwise: .init(.extendable, false))
        silentWake.proposesAfter = nil
        let withDirect = try await Self.start(words: [1.5...2.3], seconds: 4, in: both, named: true, direct: true,
                                              commands: direct, wake: silentWake)
        #expect(try await Self.decided(withDirect, 1))
        await withDirect.stop()
        #expect(direct.utterances.count == 1, "with direct mode on, the command decoders heard it")
    }

    /// Named mode alone: a short utterance in noise whose wake phrase was
    /// never proposed (noise hid its start from the endpointer) is decoded
    /// at its end from the held input, all of it, and the command performs.
    /// The same utterance in a quiet room is not decoded.
    @Test func aShortUtteranceInNoiseWithoutAProposalIsDecodedAtItsEnd() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let commands = ScriptedCommands([.init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let wake = ScriptedWake([], otherwise: .init(.extendable, false))
        wake.proposesAfter = nil
        #expect(try await Self.performs(words: [2.0...5.0], seconds: 8, in: dir, named: true,
                                       direct: false, commands: commands, wake: wake, noise: 1_500))
        #expect(commands.utterances.count == 1)
        #expect(commands.utterances.first?.phraseChecks == 0, "begun only at the end")
        let fed = commands.utterances.first?.fed.count ?? 0
        #expect(fed > 48_000, "the whole utterance, \(fed) samples")

        let quietDir = try TemporaryDirectory(); defer { quietDir.remove() }
        let quietCommands = ScriptedCommands([.init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let quiet = try await Self.start(words: [2.0...5.0], seconds: 8, in: quietDir, named: true,
                                         direct: false, commands: quietCommands, wake: wake)
        #expect(try await Self.decided(quiet, 1))
        await quiet.stop()
        #expect(quietCommands.utterances.isEmpty, "in a quiet room it is left undecoded")
    }

    /// The hey gate in direct mode (`wake.hey_gate`): a short command whose
    /// "hey" its head missed, in a quiet room, is decoded at its end from
    /// the held input and performs (a late answer, not a lost command);
    /// talk that runs on past `WakeGate.heySeconds` is never decoded.
    @Test func theHeyGateDecodesAShortCommandItMissedAtItsEnd() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let commands = ScriptedCommands([.init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let hey = ScriptedWake([], otherwise: .init(.extendable, false))
        hey.proposesAfter = nil
        hey.unproposedMayBeCommands = false
        hey.gatesDirectCommands = true
        hey.atEnd = .decodedWhenShort
        #expect(try await Self.performs(words: [2.0...3.4], seconds: 6, in: dir, named: false,
                                       direct: true, commands: commands, wake: hey))
        #expect(commands.utterances.count == 1)
        #expect(commands.utterances.first?.phraseChecks == 0, "begun only at the end")
        #expect((commands.utterances.first?.fed.count ?? 0) > 22_400, "the whole utterance")

        let longDir = try TemporaryDirectory(); defer { longDir.remove() }
        let talk = ScriptedCommands([.init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let long = try await Self.start(words: [1.5...14.0], seconds: 16, in: longDir, named: false,
                                        direct: true, commands: talk, wake: hey)
        #expect(try await Self.decided(long, 1))
        await long.stop()
        #expect(talk.utterances.count == 0, "12.5 s of talk with no hey (past WakeGate.heySeconds): never decoded")
    }

    /// Named mode: the command decoders start when the wake phrase is
    /// proposed, half a second into the speech, and are given the whole
    /// utterance from its start (lead-in included) before the rest.
    @Test func theCommandDecodersStartAtTheProposalWithTheWholeUtterance() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let commands = ScriptedCommands([.init(.complete, Self.order)], otherwise: .init(.incomplete, Self.nothing))
        let wake = ScriptedWake([], otherwise: .init(.extendable, false))
        wake.proposesAfter = 8_000
        #expect(try await Self.performs(words: [2.0...3.4], seconds: 6, in: dir, named: true,
                                       direct: false, commands: commands, wake: wake))
        #expect(commands.utterances.count == 1)
        let fed = commands.utterances.first?.fed ?? []
        let speech = wake.utterances.first?.fed ?? []
        // The wake detector gets the speech from its start, the command
        // decoders the lead-in before it as well, and everything after.
        #expect(speech.count >= 8_000)
        #expect(fed.count > speech.count - 1_600, "the command decoders heard the utterance from its start")
        #expect(fed.prefix(1_600).allSatisfy { abs(Int($0)) < 1_000 }, "it starts with the quiet lead-in")
    }

    /// On a busy CPU the window's grammar, asked for when "hey computer"
    /// alone is decided, may be installed only after the person's command
    /// has ended: the command waits for it (bounded) and is decoded with
    /// it, instead of being taken as a command without the wake word.
    @Test func aCommandEndedBeforeTheWindowsGrammarCameWaitsForIt() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let performedBefore = MakeToast.performed.load(ordering: .sequentiallyConsistent)
        let commands = ScriptedCommands([.init(.extendable, Self.heard("hey computer", WakeGrammar.aloneTarget))],
                                        otherwise: .init(.incomplete, Self.nothing))
        // The order is heard only with a grammar loaded after the start (the window's).
        commands.heardWith = { $0.isEmpty ? nil : Self.order }
        let wake = ScriptedWake([.init(.extendable, true)], otherwise: .init(.extendable, false))
        // Every compile takes 300 ms more: the file is read as fast as it
        // goes, so the command is decided long before the window's grammar is
        // in. The wait is a minute here, not the daemon's 3 s: on a loaded
        // machine the engine's request alone may take longer than that.
        let running = try await Self.start(words: [2.0...2.8, 3.6...4.4], seconds: 7, in: dir, named: true,
                                           commands: commands, wake: wake,
                                           compile: { model in usleep(300_000); return try GrammarCompiler().graph(for: model) },
                                           grammarWait: .seconds(60))
        // As the daemon's engine bridge does: the window the engine asks for.
        let window = Task {
            _ = try await Poll.holds("the engine asked for the window") {
                await running.harness.sink.events.contains { if case .listening(.window) = $0 { true } else { false } }
            }
            await running.pipeline.listen(.window)
        }
        defer { window.cancel() }
        let performed = try await Poll.holds("the command after the wake phrase performed") {
            MakeToast.performed.load(ordering: .sequentiallyConsistent) == performedBefore + 1
        }
        await running.stop()
        #expect(performed, "the command waited for the window's grammar and performed")
        #expect(commands.grammars.count >= 1, "the window's grammar was loaded")
        #expect(running.pipeline.listeningCounts.segments == 2)
    }

    static func rejected(_ transcript: String) -> CommandResult {
        CommandResult(transcript: transcript, confidence: -3, match: nil, rejection: "scripted: below the threshold")
    }

    /// "Hey", a pause longer than the phrase hold, then the command: the
    /// two are cut apart, the first is rejected ("hey mute", words fitted
    /// to a pause) and the second lacks the wake word. The second is
    /// decoded again from the start of the first, and performs.
    @Test func aCommandAfterAPauseBehindTheWakeWordIsDecodedWithIt() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let performedBefore = MakeToast.performed.load(ordering: .sequentiallyConsistent)
        let commands = ScriptedCommands([.init(.complete, Self.rejected("hey mute")),
                                         .init(.incomplete, Self.rejected("make toast with toaster")),
                                         .init(.complete, Self.heard("hey make toast with toaster", Self.order.match!.target))],
                                        otherwise: .init(.incomplete, Self.nothing))
        let running = try await Self.start(words: [2.0...2.4, 4.0...5.2], seconds: 8, in: dir, named: false, commands: commands)
        let performed = try await Poll.holds("the command after the pause performed") {
            MakeToast.performed.load(ordering: .sequentiallyConsistent) == performedBefore + 1
        }
        await running.stop()
        #expect(performed)
        #expect(commands.utterances.count == 3, "two streamed utterances and one decoded again")
        // The third decode is the buffered audio from the first utterance's
        // start (its lead-in before 2.0 s) to the second's end (after 5.2 s).
        let joined = commands.utterances.count == 3 ? commands.utterances[2].fed.count : 0
        #expect(joined >= Int(3.2 * 16_000), "decoded \(joined) samples together")
    }

    /// Rejected words that do not start with the wake word are noise, not
    /// a person pausing after "hey": the next utterance is decoded alone.
    @Test func aRejectedNoiseIsNotDecodedWithTheCommandAfterIt() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let commands = ScriptedCommands([.init(.complete, Self.rejected("mute")),
                                         .init(.incomplete, Self.rejected("make toast with toaster"))],
                                        otherwise: .init(.incomplete, Self.heard("hey make toast with toaster", Self.order.match!.target)))
        let running = try await Self.start(words: [2.0...2.4, 4.0...5.2], seconds: 8, in: dir, named: false, commands: commands)
        let decided = try await Self.decided(running, 2)
        let recognitions = await running.pipeline.recognitions()
        await running.stop()
        #expect(decided)
        #expect(commands.utterances.count == 2, "nothing decoded again")
        #expect(recognitions == 0)
    }

    /// The ask rule on the listener's side: a command accepted below the
    /// rule's confidence reaches the engine as unsure and is asked back, a
    /// confident one runs; in noise, an unsure one said without the name
    /// is dropped (`ListeningOutcome.unaddressed`) unless the wake detector
    /// heard the name.
    @Test func aCommandAcceptedWithLowConfidenceIsAskedBackNotRun() async throws {
        enum Expected: Equatable { case performed, asked, dropped }
        struct Case {
            var confidence: Double
            var snr: Double
            var transcript = "hey make toast with toaster"
            /// Whether the wake detector proposed the name (nil: direct mode alone, no detector).
            var wakeHeard: Bool? = nil
            /// The detector misses names the grammar hears (PocketSphinx's), not the keyword network.
            var detectorMisses = false
            /// `speech.ask_unsure`: off acts on unsure commands, but noise still gets nothing.
            var asking = true
            var expected: Expected
        }
        let cases = [
            Case(confidence: 0.4, snr: 12, expected: .performed),
            Case(confidence: -0.6, snr: 25, expected: .asked),
            Case(confidence: -0.6, snr: 12, expected: .dropped),
            Case(confidence: -0.6, snr: 12, transcript: "hey computer make toast with toaster", wakeHeard: true, expected: .asked),
            Case(confidence: -0.6, snr: 12, transcript: "hey computer make toast with toaster", wakeHeard: false, expected: .dropped),
            // A detector that misses names: the words' name is enough.
            Case(confidence: -0.6, snr: 12, transcript: "hey computer make toast with toaster", wakeHeard: false,
                 detectorMisses: true, expected: .asked),
            Case(confidence: -0.6, snr: 25, asking: false, expected: .performed),
            Case(confidence: -0.6, snr: 12, asking: false, expected: .dropped),
        ]
        // One listening run each: two commands in one recording reach a
        // loaded engine back to back, and the second then comes while the
        // first still performs (and is not heard, as on the device).
        for test in cases {
            let dir = try TemporaryDirectory(); defer { dir.remove() }
            var result = Self.heard(test.transcript, .intent(app: "Toaster", intent: "MakeToast", fixed: [:]))
            result.confidence = test.confidence
            result.evidence = RejectionEvidence(ratio: test.confidence, absorbedSpeech: 0, snr: test.snr, threshold: -2.8,
                                                weakestWord: test.confidence - 1)
            let performedBefore = MakeToast.performed.load(ordering: .sequentiallyConsistent)
            let commands = ScriptedCommands([.init(.complete, result)], otherwise: .init(.incomplete, Self.nothing))
            // The detector's first stage proposes the name, or never does.
            let wake = test.wakeHeard.map { heard in
                let detector = ScriptedWake([.init(.extendable, false)], otherwise: .init(.extendable, false))
                detector.proposesAfter = heard ? 1 : nil
                detector.unproposedMayBeCommands = test.detectorMisses
                return detector
            }
            let running = try await Self.start(words: [2.0...3.2], seconds: 5, in: dir, named: wake != nil,
                                               commands: commands, wake: wake, askRule: test.asking ? AskRule() : nil)
            let done = try await Poll.holds("\(test.expected)") {
                switch test.expected {
                case .asked: await running.harness.sink.spoken.contains("Did you say: make toast with toaster?")
                case .performed: MakeToast.performed.load(ordering: .sequentiallyConsistent) == performedBefore + 1
                case .dropped: running.pipeline.capture.status.state == .endOfInput && running.pipeline.listeningCounts.decided >= 1
                }
            }
            _ = try await Self.decided(running, 1)
            let recognitions = await running.pipeline.recognitions()
            await running.stop()
            let said = await running.harness.sink.spoken
            let label = "\(test.transcript) at \(test.confidence), \(test.snr) dB, asking \(test.asking)"
            #expect(done, "\(label): said \(said)")
            let performed = MakeToast.performed.load(ordering: .sequentiallyConsistent) - performedBefore
            #expect(performed == (test.expected == .performed ? 1 : 0), "\(label): performed \(performed)")
            #expect(recognitions == (test.expected == .dropped ? 0 : 1), "\(label): \(recognitions) recognitions")
            if test.expected == .dropped { #expect(said.isEmpty, "\(label): said \(said)") }
        }
    }

    @Test func aRejectedUtteranceReachesNothing() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let commands = ScriptedCommands(otherwise: .init(.incomplete, Self.nothing))
        let running = try await Self.start(words: [2.0...3.0], seconds: 5, in: dir, named: false, commands: commands)
        let decided = try await Self.decided(running, 1)
        let recognitions = await running.pipeline.recognitions()
        let spoken = await running.harness.sink.spoken
        await running.stop()
        #expect(decided)
        #expect(recognitions == 0)
        #expect(spoken.isEmpty, "said: \(spoken)")
        #expect(commands.utterances.count == 1 && commands.utterances[0].phraseChecks >= 1, "held, checked, then rejected")
    }

    @Test func aCancelPhraseOverTheDevicesVoiceInterruptsIt() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let interruptions = Atomic<Int>(0)
        let commands = ScriptedCommands([.init(.complete, Self.heard("stop", .builtin(.cancel)))],
                                        otherwise: .init(.incomplete, Self.nothing))
        let running = try await Self.start(words: [2.0...2.6], seconds: 5, in: dir, named: false, commands: commands,
                                           speaking: { true }, interrupt: { interruptions.add(1, ordering: .sequentiallyConsistent) })
        let interrupted = try await Poll.holds("the cancel phrase interrupted the device's voice") { interruptions.load(ordering: .sequentiallyConsistent) == 1 }
        await running.stop()
        #expect(interrupted)
        // While the device spoke the decoder held the cancel phrases only.
        #expect(commands.grammars.map(\.rules.count) == [running.pipeline.wakeGrammar.bargeIn.rules.count])
        #expect(await running.pipeline.recognitions() == 0, "an interruption is not a command")
    }
}

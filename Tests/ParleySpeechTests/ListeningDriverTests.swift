import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// The one listening driver on synthetic speech-like audio (the real
/// `Endpointer` and `UtteranceSegmenter`) with a `ScriptedDecoder`: no
/// espeak-ng, no PocketSphinx. Positions and counts only, never times.
@Suite struct ListeningDriverTests {
    static func audio(seconds: Double, speech: [ClosedRange<Double>]) -> [Int16] {
        SyntheticSpeech.samples(seconds: seconds, words: speech)
    }

    typealias Scripted = ScriptedDecoder<String>

    /// Runs `samples` through the driver to `decoder`; the utterances finished.
    func listen(_ samples: [Int16], _ decoder: Scripted, rules: PhraseRules = .all,
                listening: UtteranceListening = UtteranceListening(), blockSamples: Int = 1_600,
                stop: @escaping (DecodedUtterance<String>) -> Bool = { _ in false }) throws
        -> (found: [DecodedUtterance<String>], ending: ListeningDriver.Ending) {
        var driver = ListeningDriver(listening: listening)
        var source = SampleArraySource(samples, blockSamples: blockSamples)
        var found: [DecodedUtterance<String>] = []
        let ending = try driver.run(&source, handler: DecoderUtterances(decoder, rules: rules)) { utterance in
            found.append(utterance)
            return stop(utterance)
        }
        return (found, ending)
    }

    @Test func twoCommandsAreTwoUtterancesFedWithLeadIn() throws {
        let samples = Self.audio(seconds: 8, speech: [2.0...3.2, 5.0...6.2])
        let decoder = Scripted([.init(.extendable, "first"), .init(.extendable, "second")], otherwise: .init(.incomplete, "extra"))
        let (found, ending) = try listen(samples, decoder)
        #expect(found.map(\.result) == ["first", "second"])
        #expect(ending == ListeningDriver.Ending(stopped: false, utterances: 2))
        for (utterance, fed) in zip(found, decoder.utterances) {
            // Lead-in: the decoder input starts 400 ms before the speech (6400 samples).
            #expect(utterance.speech - utterance.range.lowerBound == 6_400)
            // What was fed is exactly the utterance, from the source's own samples.
            #expect(fed.fed == Array(samples[Int(utterance.range.lowerBound)..<Int(utterance.range.upperBound)]))
            #expect(fed.finished == true)
        }
        #expect(found[0].speech < 2 * 16_000 && found[0].range.upperBound > Int64(3.2 * 16_000))
        #expect(found[1].speech > Int64(3.2 * 16_000))
    }

    @Test func aCompletePhraseEndsAtThePauseAnExtendableOneAtTheTrailingSilence() throws {
        let samples = Self.audio(seconds: 6, speech: [2.0...3.2])
        let (early, _) = try listen(samples, Scripted(otherwise: .init(.complete, "yes")))
        let (late, _) = try listen(samples, Scripted(otherwise: .init(.extendable, "a large latte")))
        #expect(early.count == 1 && late.count == 1)
        // Both end after the last word; the complete phrase at the 150 ms
        // pause, the other with the endpointer's trailing silence and post-roll.
        let lastWord = Int64(3.2 * 16_000)
        #expect(early[0].range.upperBound >= lastWord - 1_600)
        #expect(early[0].range.upperBound < late[0].range.upperBound)
        // Open text (dictation's rules): no early end even on a complete phrase.
        let (dictated, _) = try listen(samples, Scripted(otherwise: .init(.complete, "note")), rules: .none)
        #expect(dictated.map(\.range) == late.map(\.range))
    }

    /// A listener behind the capture reads long blocks: the utterances and
    /// the decoder's answers must be those of short blocks. A phrase whole
    /// once its first word is fed ends at the pause after that word, however
    /// long the block that holds the pause.
    @Test(arguments: [160, 1_600, 16_000, 48_000])
    func theBlockLengthChangesNothing(blockSamples: Int) throws {
        let samples = Self.audio(seconds: 8, speech: [2.0...3.5, 4.2...5.0])
        // Fed counts from the utterance's start, 400 ms before the speech:
        // whole once fed to 3.3 s, 200 ms before the first word ends.
        let firstWordFed = Int((3.3 - 1.6) * 16_000)
        func decoder() -> Scripted {
            Scripted(otherwise: .init(progress: { fed in fed < firstWordFed ? .incomplete : .complete }, result: "said"))
        }
        let (reference, _) = try listen(samples, decoder(), blockSamples: 160)
        let (found, _) = try listen(samples, decoder(), blockSamples: blockSamples)
        #expect(reference.count == 2, "the pause after the first word ends it")
        #expect(found.map(\.range) == reference.map(\.range))
    }

    /// The daemon's ring source ends every block on the same grid however
    /// much audio waits: a listener that fell behind reads what a prompt one
    /// would have (a block to the next line, then whole blocks), so the real
    /// decoders, whose results do move with block length, hear it the same.
    @Test func theRingIsReadOnAFixedGridHoweverFarBehind() {
        let ring = AudioRing(seconds: 1)
        let written = (0..<1_130).map { Int16(truncatingIfNeeded: $0) }
        written.withUnsafeBufferPointer { ring.write($0) }
        // Started between two lines (as the daemon starts at the ring's write position).
        var source = AudioRingSource(ring: ring, from: 100, blockSamples: 480, isStopped: { false })
        var buffer = [Int16](repeating: 0, count: 1_600)
        func next() -> SampleBlock { buffer.withUnsafeMutableBufferPointer { source.next(into: $0) } }
        #expect(next() == .samples(position: 100, count: 380), "to the first line")
        #expect(Array(buffer[0..<380]) == Array(written[100..<480]))
        #expect(next() == .samples(position: 480, count: 480))
        #expect(Array(buffer[0..<480]) == Array(written[480..<960]))
        // 170 samples past the last line: not a whole block, so nothing yet.
        #expect(next() == .waiting)
        let more = [Int16](repeating: 5, count: 400)
        more.withUnsafeBufferPointer { ring.write($0) }
        #expect(next() == .samples(position: 960, count: 480))
        #expect(source.position == 1_440)
        var stopped = AudioRingSource(ring: ring, from: 0, blockSamples: 480, isStopped: { true })
        #expect(buffer.withUnsafeMutableBufferPointer { stopped.next(into: $0) } == .ended)
    }

    @Test func aPhraseNotYetWholeIsHeldAcrossAPause() throws {
        // "a large … latte": 700 ms between the words, longer than the
        // endpointer's trailing silence (600 ms), within the phrase hold.
        let samples = Self.audio(seconds: 8, speech: [2.0...2.9, 3.6...4.5])
        let held = Scripted(otherwise: .init(progress: { fed in fed < 2 * 16_000 ? .incomplete : .complete }, result: "whole"))
        let (one, _) = try listen(samples, held)
        #expect(one.map(\.result) == ["whole"], "held for the rest of the phrase")
        #expect(one[0].range.upperBound > Int64(4.5 * 16_000))
        #expect(held.utterances.count == 1 && held.utterances[0].phraseChecks >= 2)
        // Without the hold, or with open text's rules, the pause splits the words in two.
        var unheld = UtteranceListening()
        unheld.phraseHoldMilliseconds = 0
        let (split, _) = try listen(samples, Scripted(otherwise: .init(.incomplete, "part")), listening: unheld)
        let (dictation, _) = try listen(samples, Scripted(otherwise: .init(.incomplete, "part")), rules: .none)
        #expect(split.count == 2 && dictation.count == 2)
        #expect(split.first.map { $0.range.upperBound < Int64(3.6 * 16_000) } == true)
    }

    @Test func stoppingAtAHeardUtteranceLeavesTheRestUndecoded() throws {
        let samples = Self.audio(seconds: 8, speech: [2.0...3.2, 5.0...6.2])
        let decoder = Scripted(otherwise: .init(.extendable, "order"))
        let (found, ending) = try listen(samples, decoder) { _ in true }
        #expect(found.count == 1)
        #expect(ending == ListeningDriver.Ending(stopped: true, utterances: 1))
        #expect(decoder.utterances.count == 1, "the second command was never begun")
    }

    @Test func speechOpenAtTheEndOfARecordingIsFinishedAndAtTheEndOfALiveStreamDropped() throws {
        let samples = Self.audio(seconds: 4, speech: [2.0...4.0])
        let recorded = Scripted(otherwise: .init(.incomplete, "cut"))
        let (found, _) = try listen(samples, recorded)
        #expect(found.count == 1 && found[0].range.upperBound == Int64(samples.count))

        /// A live source: the same samples, then listening stops.
        struct Live: SampleSource {
            var file: SampleArraySource
            mutating func next(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock { file.next(into: buffer) }
            func samples(_ range: Range<Int64>) -> [Int16] { file.samples(range) }
            var floor: Int64 { 0 }
            var endFinishesSpeech: Bool { false }
        }
        var live = Live(file: SampleArraySource(samples))
        let dropped = Scripted(otherwise: .init(.incomplete, "cut"))
        var driver = ListeningDriver()
        let ending = try driver.run(&live, handler: DecoderUtterances(dropped))
        #expect(ending.utterances == 0)
        #expect(dropped.utterances.map(\.finished) == [false], "begun, then cancelled")
    }

    @Test func aRecordingWithoutSpeechBeginsNothing() throws {
        let decoder = Scripted(otherwise: .init(.complete, "never"))
        let (found, ending) = try listen(Self.audio(seconds: 3, speech: []), decoder)
        #expect(found.isEmpty && ending.utterances == 0 && decoder.utterances.isEmpty)
    }

    /// A handler that asks for a split once the stream passes a position
    /// (as the daemon's when the device stops talking mid-utterance).
    final class Splitting: UtteranceHandler {
        let decoder = Scripted(otherwise: .init(.extendable, "answer"))
        let at: Int64
        /// Where the split is asked for: the newest sample when nil, or an
        /// earlier position (a listener that was behind the stream).
        let from: Int64?
        var newest: Int64 = 0
        var split = false
        var begins: [(start: Int64, speech: Int64)] = []
        init(at: Int64, from: Int64? = nil) {
            self.at = at
            self.from = from
        }
        func begin(start: Int64, speech: Int64) { begins.append((start, speech)); decoder.begin() }
        func feed(_ samples: [Int16]) { decoder.feed(samples) }
        func phraseProgress() throws -> PhraseProgress { try decoder.phraseProgress() }
        func finish(_ utterance: Range<Int64>, newest: Int64, samples: () -> [Int16],
                    audio: (Range<Int64>) -> [Int16]?) throws -> Range<Int64>? {
            _ = try decoder.finish()
            return utterance
        }
        func cancel() { decoder.cancel() }
        func splitPosition(newest: Int64) -> Int64? {
            guard !split, newest >= at else { return nil }
            split = true
            return from ?? newest
        }
        func advanced(to newest: Int64) { self.newest = newest }
    }

    /// What was said before the split is decided, not dropped; the speech
    /// that goes on is the next utterance, from just before the split.
    @Test func aSplitDecidesThePartBeforeAndBeginsTheNextJustBeforeTheNewestSample() throws {
        let samples = Self.audio(seconds: 6, speech: [2.0...3.6])
        let handler = Splitting(at: Int64(2.8 * 16_000))
        var driver = ListeningDriver()
        var source = SampleArraySource(samples)
        var finished: [Range<Int64>] = []
        try driver.run(&source, handler: handler) { finished.append($0); return false }
        #expect(handler.decoder.utterances.map(\.finished) == [true, true], "both parts decided")
        #expect(handler.begins.count == 2)
        // Split where it was asked (within a block of the position); the next begins 200 ms (the pre-roll) before.
        let next = handler.begins[1].start
        #expect(next > handler.begins[0].start && next >= handler.at - 3_200 && next < handler.at + 1_600)
        #expect(finished.count == 2)
        #expect(finished.first?.lowerBound == handler.begins[0].start && finished.first?.upperBound == next + 3_200)
        #expect(finished.last?.lowerBound == next)
    }

    /// The daemon's listener, behind the stream on a loaded machine, asks
    /// for the split where the device stopped talking, not where it has
    /// read to: what was said over the voice before that point is decided
    /// as said over it.
    @Test func aSplitAtAnEarlierPositionCutsThere() throws {
        let samples = Self.audio(seconds: 6, speech: [2.0...3.6])
        let stopped = Int64(2.5 * 16_000)
        let handler = Splitting(at: Int64(3.2 * 16_000), from: stopped)
        var driver = ListeningDriver()
        var source = SampleArraySource(samples)
        var finished: [Range<Int64>] = []
        try driver.run(&source, handler: handler) { finished.append($0); return false }
        #expect(handler.begins.count == 2)
        // Cut at the position asked for, though asked 0.7 s later; the next from 200 ms (the pre-roll) before it.
        #expect(finished.first?.upperBound == stopped)
        #expect(handler.begins.last?.start == stopped - 3_200)
        #expect(finished.count == 2 && finished.last?.lowerBound == stopped - 3_200)
    }
}

/// What the daemon does with a finished utterance (`ListeningOutcome.decide`):
/// a pure function of the decoders' answers.
@Suite struct ListeningOutcomeTests {
    let wake = WakeGrammar(name: "coffee")

    func command(_ transcript: String, target: PhraseTarget? = .intent(app: "Coffee Maker", intent: "orderDrink", fixed: [:]),
                 rejection: String? = nil) -> CommandResult {
        CommandResult(transcript: transcript, confidence: -0.2,
                      match: target.map { PhraseMatch(ruleID: "r", target: $0, slots: [:]) }, rejection: rejection)
    }
    var nothing: CommandResult { command("", target: nil, rejection: "no words") }
    var alone: CommandResult { command("hey coffee", target: WakeGrammar.aloneTarget) }

    @Test func aCommandIsHandedOnWithoutItsWakeWords() {
        #expect(ListeningOutcome.decide(kind: .commands, command: command("hey coffee a large latte"), dictated: nil, woke: false,
                                        wake: wake) == .text("a large latte", dictated: false))
        #expect(ListeningOutcome.decide(kind: .window, command: command("hey coffee a large latte"), dictated: nil, woke: true,
                                        wake: wake) == .text("a large latte", dictated: false))
        // The name alone is a wake word only where "hey" is optional.
        #expect(ListeningOutcome.decide(kind: .window, command: command("coffee a large latte"), dictated: nil, woke: false,
                                        wake: wake) == .text("coffee a large latte", dictated: false))
        #expect(ListeningOutcome.decide(kind: .window, command: command("coffee a large latte"), dictated: nil, woke: false,
                                        wake: WakeGrammar(name: "coffee", heyOptional: true)) == .text("a large latte", dictated: false))
        // Answers keep every word (an answer may be the wake name's words).
        #expect(ListeningOutcome.decide(kind: .followUp, command: command("hey two", target: .answer), dictated: nil, woke: false,
                                        wake: wake) == .text("hey two", dictated: false))
    }

    /// Direct mode in noise (`ListeningOutcome.unaddressed`): a command the
    /// ask rule is unsure of, heard in noise without the name, is dropped;
    /// the same words confident, in a quiet room, with the name, in a
    /// window or as an answer are not.
    @Test func anUnsureCommandInNoiseWithoutTheNameIsDropped() {
        func heard(_ transcript: String, confidence: Double, snr: Double, target: PhraseTarget = .builtin(.volumeSet)) -> CommandResult {
            var result = command(transcript, target: target)
            result.confidence = confidence
            result.evidence = RejectionEvidence(ratio: confidence, absorbedSpeech: 0, snr: snr, threshold: -2.8,
                                                weakestWord: confidence - 0.5)
            return result
        }
        let rule = AskRule()
        // `saidName` is asked only of a command that would be dropped.
        func outcome(_ result: CommandResult, kind: ListeningKind = .commands, saidName: Bool = false,
                     nameAsked: Int = 0) -> ListeningOutcome {
            var asked = 0
            let decided = ListeningOutcome.decide(kind: kind, command: result, dictated: nil, woke: false, wake: wake)
            let final = ListeningOutcome.unaddressed(decided, kind: kind, command: result, askRule: rule) {
                asked += 1
                return saidName
            }
            #expect(asked == nameAsked, "\(result.transcript): the name asked \(asked) times")
            return final
        }
        let noisy = heard("hey volume one", confidence: -0.87, snr: 12.1)
        #expect(rule.asks(noisy))
        #expect(outcome(noisy, nameAsked: 1) == .reject(heard: "hey volume one", why: ListeningOutcome.unaddressedReason))
        // Sure of it: acted on, in noise too.
        #expect(outcome(heard("hey volume one", confidence: 0.2, snr: 12.1)) == .text("volume one", dictated: false))
        // A quiet room: unsure is asked back as before (noise makes no
        // commands there), so it reaches the engine.
        let quiet = heard("hey volume one", confidence: -0.2, snr: rule.splitSNR + 5)
        #expect(rule.asks(quiet))
        #expect(outcome(quiet) == .text("volume one", dictated: false))
        // With the name, in the window the name opened, as an answer: as
        // `decide` said.
        #expect(outcome(heard("hey coffee volume one", confidence: -0.87, snr: 12.1), saidName: true, nameAsked: 1)
            == .text("volume one", dictated: false))
        #expect(outcome(noisy, kind: .window) == .text("volume one", dictated: false))
        #expect(outcome(heard("yes", confidence: -0.87, snr: 12.1, target: .answer), kind: .followUp) == .text("yes", dictated: false))
        // What is not a command stays what it was.
        #expect(outcome(nothing) == .reject(heard: "", why: "no words"))
    }

    /// A volume phrase heard as an answer (`unsureVolumeInConversation`):
    /// dropped when the ask rule is unsure of it, since the open question
    /// cannot be asked back over; sure of it, any other answer, and the
    /// same words in idle listening or a window are as `decide` said.
    @Test func anUnsureVolumePhraseWhileAQuestionIsOpenIsDropped() {
        func heard(_ transcript: String, confidence: Double, target: PhraseTarget = .builtin(.volumeUp)) -> CommandResult {
            var result = command(transcript, target: target)
            result.confidence = confidence
            // A quiet room, as the daemon's log of "jarvis" heard as
            // "turn it up" (60 dB estimated): the rule asks below 0 there.
            result.evidence = RejectionEvidence(ratio: confidence, absorbedSpeech: 0, snr: 60, threshold: -1,
                                                weakestWord: confidence - 3)
            return result
        }
        let rule = AskRule()
        func outcome(_ result: CommandResult, kind: ListeningKind) -> ListeningOutcome {
            let decided = ListeningOutcome.decide(kind: kind, command: result, dictated: nil, woke: false, wake: wake)
            return ListeningOutcome.unsureVolumeInConversation(decided, kind: kind, command: result, askRule: rule)
        }
        let unsure = heard("turn it up", confidence: -0.66)
        #expect(rule.asks(unsure))
        let dropped = ListeningOutcome.reject(heard: "turn it up", why: ListeningOutcome.unsureVolumeReason)
        #expect(outcome(unsure, kind: .followUp) == dropped)
        #expect(outcome(unsure, kind: .dictation) == dropped)
        #expect(outcome(heard("mute", confidence: -0.5, target: .builtin(.mute)), kind: .followUp)
            == .reject(heard: "mute", why: ListeningOutcome.unsureVolumeReason))
        // Sure of it: the volume goes up, and the question stays open (the engine's part).
        #expect(outcome(heard("turn it up", confidence: 0.3), kind: .followUp) == .text("turn it up", dictated: false))
        // The answers themselves, and the other built-ins ("stop"), are never dropped here.
        #expect(outcome(heard("yes", confidence: -0.66, target: .answer), kind: .followUp) == .text("yes", dictated: false))
        #expect(outcome(heard("stop", confidence: -0.66, target: .builtin(.cancel)), kind: .followUp)
            == .text("stop", dictated: false))
        // Outside a conversation the ask rule asks it back instead.
        #expect(outcome(heard("hey turn it up", confidence: -0.66), kind: .commands) == .text("turn it up", dictated: false))
        #expect(outcome(unsure, kind: .window) == .text("turn it up", dictated: false))
    }

    @Test func theWakePhraseAloneOpensAWindowOnlyWhenTheDetectorConfirmedIt() {
        #expect(ListeningOutcome.needsWake(kind: .commands, command: alone))
        #expect(!ListeningOutcome.needsWake(kind: .commands, command: command("hey coffee a latte")))
        #expect(!ListeningOutcome.needsWake(kind: .window, command: alone))
        #expect(ListeningOutcome.decide(kind: .commands, command: alone, dictated: nil, woke: true, wake: wake) == .woken)
        #expect(ListeningOutcome.decide(kind: .commands, command: alone, dictated: nil, woke: false, wake: wake)
                == .reject(heard: "hey coffee", why: "wake not confirmed"))
        // Only the commands grammar listens for the wake word.
        #expect(ListeningOutcome.decide(kind: .window, command: nothing, dictated: nil, woke: true, wake: wake)
                == .reject(heard: "", why: "no words"))
        #expect(ListeningOutcome.decide(kind: .commands, command: nothing, dictated: nil, woke: true, wake: wake) == .woken)
    }

    @Test func overTheDevicesVoiceOnlyACancelPhraseInterrupts() {
        let cancel = command("stop", target: .builtin(.cancel))
        #expect(ListeningOutcome.decide(kind: .bargeIn, command: cancel, dictated: nil, woke: true, wake: wake)
                == .interrupt(heard: "stop"))
        #expect(ListeningOutcome.decide(kind: .bargeIn, command: nothing, dictated: "stop", woke: true, wake: wake) == .ignored)
    }

    @Test func overTheCancelledEchoTheWakeWordAndACommandInterruptWithTheCommand() {
        let order = command("hey coffee a latte", target: .answer)
        #expect(ListeningOutcome.decide(kind: .bargeIn, command: order, dictated: nil, woke: false, wake: wake)
                == .interruptWith("a latte"), "the wake words stripped, as for any command")
        // A cancel phrase after the wake words is still an interruption, not a command.
        #expect(ListeningOutcome.decide(kind: .bargeIn, command: command("hey coffee stop", target: .builtin(.cancel)),
                                        dictated: nil, woke: false, wake: wake) == .interrupt(heard: "hey coffee stop"))
    }

    @Test func overTheCancelledEchoTheGateDecides() {
        let stop = ListeningOutcome.interrupt(heard: "stop")
        let order = ListeningOutcome.interruptWith("a latte")
        // Adapted: the energy the canceller kept decides (a person -10 dB, the device's residual -35 dB).
        #expect(ListeningOutcome.gated(stop, adapted: true, keptDecibels: { -10 }) == stop)
        #expect(ListeningOutcome.gated(order, adapted: true, keptDecibels: { -12 }) == order)
        #expect(ListeningOutcome.gated(stop, adapted: true, keptDecibels: { -35 }) == .ignored)
        #expect(ListeningOutcome.gated(order, adapted: true, keptDecibels: { -35 }) == .ignored)
        // Not yet adapted: a cancel phrase as before echo cancellation, no command.
        #expect(ListeningOutcome.gated(stop, adapted: false, keptDecibels: { -35 }) == stop)
        #expect(ListeningOutcome.gated(order, adapted: false, keptDecibels: { 0 }) == .ignored)
        // Nothing else is touched, and the energy is not even measured.
        let text = ListeningOutcome.text("a latte", dictated: false)
        #expect(ListeningOutcome.gated(text, adapted: true, keptDecibels: { Issue.record("measured"); return -99 }) == text)
    }

    /// Before the canceller has adapted, the device's own "cancel that"
    /// (in the line it is saying) is not a stop; a person's "stop" over a
    /// line without it still is, with or without the wake words.
    @Test func beforeAdaptingACancelPhraseTheDeviceIsSayingIsItsOwn() {
        let wake = WakeGrammar(name: "computer", direct: false, named: true)
        let own = OwnSpeech(["A large latte, four dollars.", "To change it, say \"Cancel that\"."])
        func gated(_ heard: String) -> ListeningOutcome {
            ListeningOutcome.gated(.interrupt(heard: heard), adapted: false, keptDecibels: { Issue.record("measured"); return 0 },
                                   ownSpeech: own, wake: wake)
        }
        #expect(gated("cancel that") == .ignored)
        #expect(gated("hey computer cancel that") == .ignored, "the wake words are not what the device said")
        #expect(gated("stop") == .interrupt(heard: "stop"))
        #expect(gated("cancel") == .ignored, "one word of the line")
        #expect(gated("that cancel") == .interrupt(heard: "that cancel"), "words in another order")
        // Adapted: the energy decides, whatever the device said.
        #expect(ListeningOutcome.gated(.interrupt(heard: "cancel that"), adapted: true, keptDecibels: { -10 },
                                       ownSpeech: own, wake: wake) == .interrupt(heard: "cancel that"))
        // Below the threshold before its allowance for noise: the device's voice, before adapting only.
        #expect(ListeningOutcome.gated(.interrupt(heard: "stop"), adapted: false, keptDecibels: { 0 },
                                       meetsBaseThreshold: false) == .ignored)
        #expect(ListeningOutcome.gated(.interrupt(heard: "stop"), adapted: true, keptDecibels: { -10 },
                                       meetsBaseThreshold: false) == .interrupt(heard: "stop"))
        #expect(OwnSpeech([]).says(["stop"]) == false)
        #expect(OwnSpeech(["Stop."]).says(["stop"]))
    }

    @Test func theEchoCancelledBargeInGrammarNeedsTheWakeWordBeforeACommand() throws {
        let grammar = WakeGrammar(name: "computer", direct: false, named: true)
        var commands = PhraseModel()
        commands.rules = [PhraseRule(id: "latte", target: .answer, body: .words(["a", "latte"]))]
        let model = grammar.bargeIn(commands: commands)
        let resolver = Resolver(model: model)
        func matches(_ text: String) -> Bool { resolver.resolveExactly(words: text.split(separator: " ").map(String.init)) != nil }
        #expect(matches("hey computer a latte"))
        #expect(!matches("a latte"), "the device's own \"a latte\" is no command")
        #expect(matches("stop") && matches("hey computer cancel"))
    }

    @Test func openTextIsTakenFromDictationWhenTheAnswersDoNotMatch() {
        #expect(ListeningOutcome.needsDictation(kind: .dictation, command: nothing))
        #expect(!ListeningOutcome.needsDictation(kind: .dictation, command: command("cancel", target: .builtin(.cancel))))
        #expect(!ListeningOutcome.needsDictation(kind: .followUp, command: nothing))
        #expect(ListeningOutcome.decide(kind: .dictation, command: nothing, dictated: "buy more milk", woke: false, wake: wake)
                == .text("buy more milk", dictated: true))
        #expect(ListeningOutcome.decide(kind: .dictation, command: command("cancel", target: .builtin(.cancel)),
                                        dictated: "ignored", woke: false, wake: wake) == .text("cancel", dictated: false))
        // Nothing dictated (or dictation failed): rejected.
        for dictated in ["", nil] as [String?] {
            #expect(ListeningOutcome.decide(kind: .dictation, command: nothing, dictated: dictated, woke: false, wake: wake)
                    == .reject(heard: "", why: "no words"))
        }
    }

    @Test func phraseRulesFollowTheGrammarAndWhetherItIsStillCurrent() {
        #expect(ListeningKind.commands.phraseRules(grammarCurrent: true) == .all)
        #expect(ListeningKind.followUp.phraseRules(grammarCurrent: true) == .all)
        #expect(ListeningKind.window.phraseRules(grammarCurrent: true) == PhraseRules(hold: false, earlyEnd: true))
        #expect(ListeningKind.bargeIn.phraseRules(grammarCurrent: true) == PhraseRules(hold: false, earlyEnd: true))
        #expect(ListeningKind.dictation.phraseRules(grammarCurrent: true) == .none)
        for kind in [ListeningKind.commands, .window, .followUp, .dictation, .bargeIn] {
            #expect(kind.phraseRules(grammarCurrent: false) == .none, "\(kind): a stale grammar decides nothing")
        }
    }
}

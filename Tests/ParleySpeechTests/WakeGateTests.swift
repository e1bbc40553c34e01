import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// Named mode's gate on the command decoders (`WakeGate`), and the
/// detector's first stage it waits for.
struct WakeGateTests {
    @Test func theInputIsHeldUntilTheProposalThenHandedOverWhole() {
        var gate = WakeGate(windowSamples: 100)
        #expect(gate.pass([1, 2, 3]).isEmpty)
        #expect(gate.heard(speechSamples: 40, proposed: false) == nil)
        #expect(gate.progress == .incomplete, "the wake phrase may be under way: a speech end is held for it")
        #expect(gate.pass([4, 5]).isEmpty)
        #expect(gate.heard(speechSamples: 80, proposed: true) == [[1, 2, 3], [4, 5]], "in the pieces it came in")
        #expect(gate.state == .open)
        #expect(gate.progress == nil, "open: the command decoders answer")
        #expect(gate.pass([6]) == [6], "once open, the input goes straight on")
        #expect(gate.heard(speechSamples: 500, proposed: true) == nil, "handed over once")
    }

    @Test func noProposalWithinTheWindowShutsItForTheUtterance() {
        var gate = WakeGate(windowSamples: 100)
        _ = gate.pass([1, 2, 3])
        #expect(gate.heard(speechSamples: 99, proposed: false) == nil)
        #expect(gate.state == .waiting)
        #expect(gate.heard(speechSamples: 100, proposed: false) == nil)
        #expect(gate.state == .shut)
        #expect(gate.progress == .extendable, "no phrase can come: the utterance ends at its trailing silence")
        #expect(gate.pass([4]).isEmpty)
        #expect(gate.heard(speechSamples: 120, proposed: true) == nil, "a proposal after the window opens nothing")
        #expect(gate.state == .shut)
    }

    @Test func aProposalInTheBlockThatCrossesTheWindowStillOpensIt() {
        var gate = WakeGate(windowSamples: 100)
        _ = gate.pass([7])
        #expect(gate.heard(speechSamples: 130, proposed: true) == [[7]])
        #expect(gate.state == .open)
    }

    /// The window allows the longest "hey <name>" stage 2 can verify.
    @Test func theWindowCoversTheVerifiersPhrase() {
        #expect(WakeGate.windowSeconds > WakeVerifier.windowSeconds)
        #expect(WakeGate().windowSamples == Int64(WakeGate.windowSeconds * 16_000))
    }

    /// The real detector: stage 1 proposes "computer" in recordings of it,
    /// nothing in silence, and each utterance starts without a proposal.
    @Test func theDetectorsFirstStageProposesTheWakeWord() throws {
        let utterance = WakeUtterance(try WakeDetector(mode: .named("computer", heyOptional: true)))
        for audio in try WakeTests.positives(3) {
            utterance.begin()
            #expect(!utterance.proposed)
            utterance.feed(audio.samples)
            #expect(utterance.proposed, "stage 1 proposed the wake word")
            _ = utterance.finish()
        }
        utterance.begin()
        utterance.feed([Int16](repeating: 0, count: 32_000))
        #expect(!utterance.proposed, "nothing proposed in silence")
    }
}

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

    /// 0.2 s pieces: `loud` seconds of a tone at 6,000 between noise at
    /// `floor` (the SNR estimate compares the loud frames with the floor).
    static func pieces(loud: Double, floor: Double) -> [[Int16]] {
        let samples = SyntheticSpeech.samples(seconds: 2, words: [0.5...(0.5 + loud)], noise: floor)
        return stride(from: 0, to: samples.count, by: 3_200).map { Array(samples[$0..<min(samples.count, $0 + 3_200)]) }
    }

    @Test func noProposalWithinTheWindowShutsItAndAShortUtteranceInNoiseIsDecodedAtItsEnd() {
        var gate = WakeGate(windowSamples: 16_000, heldLimit: 48_000)
        let noisy = Self.pieces(loud: 1, floor: 2_000)
        for piece in noisy.prefix(5) { #expect(gate.pass(piece).isEmpty) }
        #expect(gate.heard(speechSamples: 15_999, proposed: false) == nil)
        #expect(gate.state == .waiting)
        #expect(gate.heard(speechSamples: 16_000, proposed: false) == nil)
        #expect(gate.state == .shut)
        #expect(gate.progress == .extendable, "no proposal: the utterance ends at its trailing silence")
        for piece in noisy.dropFirst(5) { #expect(gate.pass(piece).isEmpty) }
        #expect(gate.heard(speechSamples: 20_000, proposed: true) == nil, "a proposal after the window opens nothing")
        #expect(gate.state == .shut)
        #expect(RejectionPolicy.estimatedSNR(noisy.flatMap { $0 }) < RejectionPolicy().cleanSNR)
        #expect(gate.decodesAtEnd())
        #expect(gate.remainder() == noisy, "short enough to be a command, and noisy: decoded at its end, as it came")
    }

    /// The keyword network's gate: a short noisy utterance with no proposal
    /// is not decoded at its end (the network proposes near misses itself).
    @Test func withoutUnproposedDecodesANoisyUtteranceWithoutAProposalIsNotDecoded() {
        var gate = WakeGate(windowSamples: 16_000, heldLimit: 48_000, atEnd: .rejected)
        let noisy = Self.pieces(loud: 1, floor: 2_000)
        for piece in noisy { #expect(gate.pass(piece).isEmpty) }
        _ = gate.heard(speechSamples: 32_000, proposed: false)
        #expect(gate.state == .shut)
        #expect(!gate.decodesAtEnd())
        #expect(gate.remainder() == nil)
    }

    @Test func aShortUtteranceInAQuietRoomIsNotDecoded() {
        var gate = WakeGate(windowSamples: 16_000, heldLimit: 48_000)
        let quiet = Self.pieces(loud: 1, floor: 20)
        for piece in quiet { _ = gate.pass(piece) }
        _ = gate.heard(speechSamples: 32_000, proposed: false)
        #expect(RejectionPolicy.estimatedSNR(quiet.flatMap { $0 }) >= RejectionPolicy().cleanSNR)
        #expect(!gate.decodesAtEnd())
        #expect(gate.remainder() == nil, "stage 1 misses no wake phrase in quiet: talk is left undecoded")
    }

    /// The hey gate's rule: every short utterance it never opened on is
    /// decoded at its end, quiet or noisy (its head may miss a "hey"); one
    /// that ran past the limit is not, nor one that opened (its decoders ran).
    @Test func decodedWhenShortDecodesEveryShortUnopenedUtterance() {
        for floor in [20.0, 2_000] {
            var gate = WakeGate(windowSamples: 16_000, heldLimit: 48_000, atEnd: .decodedWhenShort)
            let pieces = Self.pieces(loud: 1, floor: floor)
            for piece in pieces { #expect(gate.pass(piece).isEmpty) }
            _ = gate.heard(speechSamples: 32_000, proposed: false)
            #expect(gate.state == .shut && gate.decodesAtEnd())
            #expect(gate.remainder() == pieces, "floor \(floor): decoded at its end, as it came")
        }
        var long = WakeGate(windowSamples: 16_000, heldLimit: 48_000, atEnd: .decodedWhenShort)
        for piece in Self.pieces(loud: 1, floor: 20) + Self.pieces(loud: 1, floor: 20) { _ = long.pass(piece) }
        #expect(long.overflowed && !long.decodesAtEnd() && long.remainder() == nil, "4 s past a 3 s limit: talk that runs on")
        var opened = WakeGate(windowSamples: 16_000, heldLimit: 48_000, atEnd: .decodedWhenShort)
        _ = opened.pass([1, 2])
        #expect(opened.heard(speechSamples: 100, proposed: true) == [[1, 2]])
        #expect(!opened.decodesAtEnd(), "opened: its decoders heard it as it came")
    }

    @Test func speechThatRunsPastTheLimitIsNeverDecoded() {
        var gate = WakeGate(windowSamples: 100, heldLimit: 10)
        _ = gate.pass([Int16](repeating: 1, count: 8))
        #expect(gate.heard(speechSamples: 100, proposed: false) == nil)
        _ = gate.pass([Int16](repeating: 2, count: 8))
        #expect(gate.overflowed)
        #expect(!gate.decodesAtEnd())
        #expect(gate.remainder() == nil, "too long to be a command: rejected undecoded")
        var late = WakeGate(windowSamples: 100, heldLimit: 10)
        _ = late.pass([Int16](repeating: 1, count: 12))
        #expect(late.heard(speechSamples: 50, proposed: true) == nil, "its start is gone: it cannot open")
        #expect(late.remainder() == nil)
    }

    /// The hey gate holds longer than named mode's: what it leaves
    /// undecoded was decoded without it.
    @Test func theHeyGateHoldsUpToTwelveSeconds() {
        #expect(WakeGate(atEnd: .decodedWhenShort).heldLimit == 12 * 16_000)
        #expect(WakeGate().heldLimit == 8 * 16_000 && WakeGate(atEnd: .rejected).heldLimit == 8 * 16_000)
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

    /// The keyword network proposes at `proposalMargin` below its threshold:
    /// a recording of "computer" at sensitivity 0 (threshold 5 higher) is
    /// proposed without always being confirmed; kitchen noise proposes nothing.
    @Test func theKeywordNetworkProposesNearItsThreshold() throws {
        let path = Fixtures.packageRoot.appendingPathComponent("model/wake/computer.json").path
        let model = try KeywordModel.load(path)
        let utterance = KeywordWakeUtterance(KeywordSpotter(model: model, sensitivity: 0))
        for audio in try WakeTests.positives(3) {
            utterance.begin()
            #expect(!utterance.proposed)
            utterance.feed(audio.samples)
            #expect(utterance.proposed && utterance.peak >= utterance.spotter.threshold - KeywordWakeUtterance.proposalMargin)
            #expect(utterance.finish() == (utterance.peak >= utterance.spotter.threshold))
        }
        utterance.begin()
        utterance.feed(try PCMAudio.read(Fixtures.require(Fixtures.kitchenNoise)).samples)
        #expect(!utterance.proposed && !utterance.finish(), "peak \(utterance.peak)")
        #expect(!utterance.unproposedMayBeCommands)
    }
}

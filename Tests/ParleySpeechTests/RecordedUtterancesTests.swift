import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// `parley understand`'s path: endpointed segments of a recording, decoded
/// as the daemon's listening loop decodes them.
@Suite(.serialized) struct RecordedUtterancesTests {
    static var coffee: PhraseModel { get throws { try CoffeeFixture.grammar() } }

    static func silence(_ seconds: Double) -> [Int16] { [Int16](repeating: 0, count: Int(seconds * 16_000)) }

    @Test func aRejectedSegmentDoesNotHideTheCommandAfterIt() throws {
        // Speech that is not an order, a pause, then a recorded order.
        let synth = try SpeechSynthesizer()
        let chatter = try synth.render16k("the weather is nice and sunny today").samples
        let order = try PCMAudio.read(Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav")).samples
        let audio = Self.silence(0.5) + chatter + Self.silence(1.5) + order + Self.silence(1)
        let decoder = try StreamingCommandDecoder(model: Self.coffee)
        let segments = try RecordedUtterances().segments(of: audio, decoder: decoder)
        #expect(segments.count >= 2)
        #expect(segments.first?.result.match == nil)
        let last = try #require(segments.last)
        #expect(last.result.match?.slots["size"] == "twelve ounce")
        #expect(last.result.match?.slots["roast"] == "light roast")
        #expect(last.range.lowerBound > 16_000 / 2 + chatter.count)  // it is the order's segment
        // Asked for every segment, it decodes them all and stops at the end.
        let all = try RecordedUtterances().segments(of: audio, decoder: decoder) { _ in false }
        #expect(all.count == segments.count)
    }

    @Test func aPauseInsideACommandIsHeldOpenUntilThePhraseIsWhole() throws {
        // "i want a large" … a pause longer than the endpointer's trailing silence … "latte".
        let synth = try SpeechSynthesizer()
        let first = try synth.render16k("i want a large").samples
        let second = try synth.render16k("latte").samples
        let audio = Self.silence(0.5) + first + Self.silence(0.9) + second + Self.silence(1.5)
        let secondStart = 8_000 + first.count + Int(0.9 * 16_000)

        var held = UtteranceListening()
        held.phraseHoldMilliseconds = 1_000
        let decoder = try StreamingCommandDecoder(model: Self.coffee)
        let whole = try RecordedUtterances(listening: held).segments(of: audio, decoder: decoder)
        #expect(whole.count == 1)
        #expect(whole.first?.result.match?.slots == ["size": "large", "coffeeDrink": "latte"])
        #expect((whole.first?.range.upperBound ?? 0) > secondStart)

        // Without the hold the endpointer's end stands: the first segment stops before "latte".
        var unheld = UtteranceListening()
        unheld.phraseHoldMilliseconds = 0
        let split = try RecordedUtterances(listening: unheld).segments(of: audio, decoder: decoder) { _ in false }
        #expect(split.count == 2)
        #expect((split.first?.range.upperBound ?? .max) < secondStart)
    }

    /// A recording's speech alone (SpeechExtent: its frames within 35 dB of the loudest).
    static func speech(_ name: String) throws -> [Int16] {
        let samples = try PCMAudio.read(Fixtures.coffeeRecording(name)).samples
        let extent = try #require(SpeechExtent.of(samples))
        return Array(samples[extent])
    }

    @Test func aCompletePhraseEndsAtAShortPauseAndOneThatCanGoOnDoesNot() throws {
        // "i want a medium mocha with whole milk and sweetener" (nothing can
        // follow), 400 ms of silence (less than the 600 ms trailing silence),
        // then another order.
        let complete = try Self.speech("0636c68b-ef43-4340-bf91-ce8c6397c045.wav")
        let next = try Self.speech("27d6b06e-fdf2-499a-9142-ab8e531a0fea.wav")
        let two = Self.silence(0.5) + complete + Self.silence(0.4) + next + Self.silence(1.5)
        let nextStart = 8_000 + complete.count + Int(0.4 * 16_000)
        let decoder = try StreamingCommandDecoder(model: Self.coffee)
        let early = try RecordedUtterances().segments(of: two, decoder: decoder) { _ in false }
        #expect(early.count == 2, "the first order ends at the pause after its last word")
        #expect(early.first?.result.match?.slots["sugarAmount"] == "sweetener")
        let firstEnd = try #require(early.first?.range.upperBound)
        #expect(firstEnd < nextStart && firstEnd > 8_000 + complete.count, "ended in the pause, after the last word")
        #expect(early.last?.result.match != nil, "the second order is a command of its own")
        // Turned off, the 400 ms pause does not end the first order.
        var off = UtteranceListening()
        off.completePhraseSilenceMilliseconds = 0
        let late = try RecordedUtterances(listening: off).segments(of: two, decoder: decoder) { _ in false }
        #expect((late.first?.range.upperBound ?? 0) > nextStart)

        // An order the grammar can extend ("… with …" may follow), then the
        // same pause: it waits for the trailing silence.
        let extendable = Self.silence(0.5) + next + Self.silence(0.4) + complete + Self.silence(1.5)
        let waited = try RecordedUtterances().segments(of: extendable, decoder: decoder) { _ in false }
        #expect((waited.first?.range.upperBound ?? 0) > 8_000 + next.count + Int(0.4 * 16_000))
    }

    @Test func speechNeverFoundMeansTheWholeRecordingIsDecoded() throws {
        let decoder = try StreamingCommandDecoder(model: Self.coffee)
        let segments = try RecordedUtterances().segments(of: Self.silence(2), decoder: decoder)
        #expect(segments.count == 1)
        #expect(segments.first?.range == 0..<32_000)
        #expect(segments.first?.result.match == nil)
    }
}

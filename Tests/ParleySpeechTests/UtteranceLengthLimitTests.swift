import Foundation
import ParleyAudio
import ParleyCore
import Testing
@testable import ParleySpeech
import ParleyTestKit

/// The length bound of an utterance (BENCHMARKS.md, "Limits": dictation
/// length): speech that never stops — a person dictating on and on, a TV, a
/// stuck noise source that sounds voiced — is cut at the endpointer's
/// `maximumSegmentMilliseconds`, so no decoder is ever fed an unbounded
/// utterance. Real `Endpointer` on synthetic speech-like audio, the real
/// `UtteranceSegmenter`, driven by the daemon's `ListeningDriver` over a
/// scripted decoder.
@Suite struct UtteranceLengthLimitTests {
    /// `seconds` of "speech" that does not stop: 250 ms bursts of a voiced
    /// 200 Hz tone with 100 ms gaps (shorter than any pause the segmenter
    /// acts on, so only the length bound can end it) over light noise. The
    /// gaps keep the endpointer's noise floor (minimum statistics over 2 s)
    /// at the noise, as syllables do; a steady tone would become the floor.
    func endlessSpeech(seconds: Double) -> [Int16] {
        var rng = SplitMix64(seed: 16)
        return (0..<Int(seconds * 16_000)).map { i in
            let t = Double(i) / 16_000
            var v = (Double(rng.next() % 2_001) - 1_000) / 1_000 * 200
            if t >= 1, (t - 1).truncatingRemainder(dividingBy: 0.35) < 0.25 { v += 6_000 * sin(2 * Double.pi * 200 * t) }
            return Int16(max(-32_768, min(32_767, v)))
        }
    }

    /// The utterances the listening driver finishes on `samples`: each
    /// one's speech (from its speech start to its end, lead-in not counted)
    /// and how much was fed to the decoder for it. `progress`: the
    /// decoder's answer to every phrase check (`.incomplete` is what a
    /// decoder says in the middle of endless speech); `dictation`: the
    /// daemon's phrase rules for an open-text answer.
    func utterances(_ samples: [Int16], maximumMilliseconds: Int, progress: PhraseProgress,
                    dictation: Bool) throws -> [(speech: Range<Int64>, fed: Int64)] {
        var configuration = EndpointerConfiguration()
        configuration.maximumSegmentMilliseconds = maximumMilliseconds
        var driver = ListeningDriver(endpointer: configuration)
        var source = SampleArraySource(samples)
        let decoder = ScriptedDecoder<Void>(otherwise: .init(progress, ()))
        let handler = DecoderUtterances(decoder, rules: dictation ? .none : .all)
        var found: [(speech: Range<Int64>, fed: Int64)] = []
        try driver.run(&source, handler: handler) { utterance in
            let fed = Int64(decoder.utterances.last?.fed.count ?? 0)
            found.append((utterance.speech..<utterance.range.upperBound, fed))
            return false
        }
        return found
    }

    @Test func theEndpointerEndsSpeechThatNeverStopsAtItsMaximumLength() {
        for maximum in [5_000, 15_000] {
            var configuration = EndpointerConfiguration()
            configuration.maximumSegmentMilliseconds = maximum
            let endpointer = Endpointer(configuration: configuration)
            var ends: [(start: Int64, reportedAt: Int64)] = []
            endpointer.process(endlessSpeech(seconds: 40)) { event in
                if case .speechEnded(let start, _, let reportedAt) = event { ends.append((start, reportedAt)) }
            }
            let samples = Int64(maximum * 16)
            #expect(ends.count >= 2, "at most \(maximum) ms each: \(ends)")
            for end in ends.dropLast() {
                // Cut on the frame that reaches the bound, not by a pause.
                #expect(end.reportedAt - end.start >= samples && end.reportedAt - end.start < samples + 160,
                        "\(maximum) ms: a segment of \(end.reportedAt - end.start) samples")
            }
        }
    }

    @Test func aDictationIsCutAtTheMaximumSegmentLength() throws {
        // The default bound, 15 s; 50 s of dictation give three cut utterances.
        let found = try utterances(endlessSpeech(seconds: 50), maximumMilliseconds: EndpointerConfiguration().maximumSegmentMilliseconds,
                               progress: .incomplete, dictation: true)
        #expect(found.count >= 3)
        for utterance in found {
            #expect(utterance.speech.count <= 15 * 16_000, "an utterance of \(utterance.speech.count) samples")
            // Lead-in (400 ms) + at most 15 s fed to the decoders.
            #expect(utterance.fed <= 15 * 16_000 + 6_400, "fed \(utterance.fed) samples")
        }
        // The cut is at the bound, not earlier: all but the last are full length.
        for utterance in found.dropLast() { #expect(utterance.speech.count >= 15 * 16_000 - 160) }
    }

    @Test func aCommandWhoseWordsAreNeverWholeIsCutAtTheSameLength() throws {
        // Commands hold an utterance whose words are not yet a whole phrase
        // for the rest of it; speech that resumes continues it. Endless
        // speech must not make that an endless utterance: the bound holds
        // over the whole utterance, not each endpointer segment.
        for maximum in [5_000, 15_000] {
            let found = try utterances(endlessSpeech(seconds: 50), maximumMilliseconds: maximum, progress: .incomplete,
                                   dictation: false)
            let limit = Int64(maximum * 16)
            #expect(found.count >= 50_000 / maximum - 1, "\(maximum) ms: \(found.map(\.speech))")
            for utterance in found {
                #expect(utterance.speech.count <= limit, "\(maximum) ms: an utterance of \(utterance.speech.count) samples")
                #expect(utterance.fed <= limit + 6_400, "\(maximum) ms: fed \(utterance.fed) samples")
            }
        }
    }
}

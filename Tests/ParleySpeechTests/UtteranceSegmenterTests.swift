import ParleyAudio
import Testing
@testable import ParleySpeech

/// The one listening path's decisions on synthetic endpointer events (no
/// audio, no decoder): lead-in, hold-back, phrase hold, restart, end of stream.
@Suite struct UtteranceSegmenterTests {
    typealias Decision = UtteranceSegmenter.Decision
    /// 16 kHz defaults: 400 ms lead-in = 6400 samples; hold-back = (600 − 300) ms
    /// + one 160-sample frame = 4960; phrase hold 600 ms = 9600.
    let leadIn: Int64 = 6_400, holdBack: Int64 = 4_960, hold: Int64 = 9_600

    func started(_ at: Int64) -> EndpointEvent { .speechStarted(start: at, reportedAt: at + 1_000) }
    func ended(_ start: Int64, _ end: Int64) -> EndpointEvent { .speechEnded(start: start, end: end, reportedAt: end + 4_800) }

    @Test func anUtteranceIsFedWithLeadInAndHoldBackThenFinished() {
        var segmenter = UtteranceSegmenter()
        #expect(segmenter.holdBack == holdBack)
        #expect(segmenter.handle(started(20_000)) == [.begin(start: 20_000 - leadIn, speech: 20_000)])
        // Fed up to the newest sample minus the hold-back, contiguously.
        #expect(segmenter.advance(to: 30_000) == [.feed(13_600..<(30_000 - holdBack))])
        #expect(segmenter.advance(to: 40_000) == [.feed((30_000 - holdBack)..<(40_000 - holdBack))])
        #expect(segmenter.advance(to: 40_000) == [], "nothing new, nothing fed")
        // Speech ends: the rest up to the segment end, then the phrase check.
        #expect(segmenter.handle(ended(14_000, 35_000)) == [.checkPhrase], "already fed past the end")
        #expect(segmenter.phraseChecked(whole: true) == [.finish(utterance: 13_600..<35_000)])
        #expect(!segmenter.isOpen)
        #expect(segmenter.advance(to: 50_000) == [], "nothing is fed between utterances")
    }

    @Test func theLeadInNeverReachesBeforeTheFloor() {
        var segmenter = UtteranceSegmenter()
        #expect(segmenter.handle(started(3_000), floor: 1_600) == [.begin(start: 1_600, speech: 3_000)])
    }

    @Test func aHalfPhraseIsHeldAndSpeechResumingContinuesIt() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.advance(to: 20_000)
        // "a large …": the end is fed, the words are not a whole phrase: held.
        #expect(segmenter.handle(ended(10_000, 24_000)) == [.feed((20_000 - holdBack)..<24_000), .checkPhrase])
        #expect(segmenter.phraseChecked(whole: false) == [])
        #expect(segmenter.isOpen)
        // The pause is fed on (the decoder needs it if the speech resumes).
        #expect(segmenter.advance(to: 30_000) == [.feed(24_000..<(30_000 - holdBack))])
        // Speech resumes within the hold: the same utterance, no new begin.
        #expect(segmenter.handle(started(31_000)) == [])
        _ = segmenter.advance(to: 45_000)
        #expect(segmenter.handle(ended(31_000, 40_000)) == [.checkPhrase])
        #expect(segmenter.phraseChecked(whole: true) == [.finish(utterance: 3_600..<40_000)])
    }

    @Test func aHoldThatRunsOutEndsAtTheSpeechEnd() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.handle(ended(10_000, 24_000))
        _ = segmenter.phraseChecked(whole: false)
        let before = segmenter.advance(to: 24_000 + hold - 1)
        #expect(!before.contains { if case .finish = $0 { true } else { false } })
        #expect(segmenter.advance(to: 24_000 + hold) == [.finish(utterance: 3_600..<24_000)])
        #expect(!segmenter.isOpen)
    }

    @Test func withoutHoldOrWhenNotAllowedTheEndFinishesAtOnce() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        #expect(segmenter.handle(ended(10_000, 24_000), holdAllowed: false)
            == [.feed(3_600..<24_000), .finish(utterance: 3_600..<24_000)])
        var listening = UtteranceListening()
        listening.phraseHoldMilliseconds = 0
        var unheld = UtteranceSegmenter(listening: listening)
        _ = unheld.handle(started(10_000))
        #expect(unheld.handle(ended(10_000, 24_000)) == [.feed(3_600..<24_000), .finish(utterance: 3_600..<24_000)])
    }

    @Test func restartCancelsAndBeginsAgainNotBeforeTheStart() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.advance(to: 30_000)
        #expect(segmenter.restart(from: 26_800) == [.cancel, .begin(start: 26_800, speech: 26_800)])
        #expect(segmenter.restart(from: 0) == [.cancel, .begin(start: 26_800, speech: 26_800)])
        #expect(segmenter.advance(to: 40_000) == [.feed(26_800..<(40_000 - holdBack))])
        var idle = UtteranceSegmenter()
        #expect(idle.restart(from: 100) == [], "nothing open, nothing to restart")
    }

    @Test func theStreamsEndFinishesOpenSpeechAndStopCancelsIt() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.advance(to: 20_000)
        #expect(segmenter.endOfStream() == [.feed((20_000 - holdBack)..<20_000), .finish(utterance: 3_600..<20_000)])
        var held = UtteranceSegmenter()
        _ = held.handle(started(10_000))
        _ = held.handle(ended(10_000, 15_000))
        _ = held.phraseChecked(whole: false)
        _ = held.advance(to: 18_000)
        #expect(held.endOfStream() == [.finish(utterance: 3_600..<15_000)], "a held one ends at its speech end")
        var stopped = UtteranceSegmenter()
        _ = stopped.handle(started(10_000))
        #expect(stopped.stop() == [.cancel])
        #expect(stopped.stop() == [])
    }

    @Test func anEndWithoutAStartAndAnAnswerNobodyAskedForAreIgnored() {
        var segmenter = UtteranceSegmenter()
        #expect(segmenter.handle(ended(0, 5_000)) == [])
        #expect(segmenter.phraseChecked(whole: true) == [])
        #expect(segmenter.endOfStream() == [])
    }
}

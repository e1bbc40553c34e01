import ParleyAudio
import ParleyCore
import Testing
@testable import ParleySpeech

/// The one listening path's decisions on synthetic endpointer events (no
/// audio, no decoder): lead-in, hold-back, phrase hold, phrase-complete
/// ends at a pause, restart, end of stream.
@Suite struct UtteranceSegmenterTests {
    typealias Decision = UtteranceSegmenter.Decision
    /// 16 kHz defaults: 400 ms lead-in = 6400 samples; hold-back = (600 − 300) ms
    /// + one 160-sample frame = 4960; phrase hold 600 ms = 9600.
    let leadIn: Int64 = 6_400, holdBack: Int64 = 4_960, hold: Int64 = 9_600

    func started(_ at: Int64) -> EndpointEvent { .speechStarted(start: at, reportedAt: at + 1_000) }
    func ended(_ start: Int64, _ end: Int64) -> EndpointEvent { .speechEnded(start: start, end: end, reportedAt: end + 4_800) }
    /// `silence` ms after the last voiced frame at `voicedEnd`.
    func paused(_ start: Int64, _ voicedEnd: Int64, silence: Int = 150) -> EndpointEvent {
        let at = voicedEnd + Int64(silence * 16)
        return .speechPaused(start: start, end: at, reportedAt: at, silence: silence)
    }

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
        #expect(segmenter.phraseChecked(.extendable) == [.finish(utterance: 13_600..<35_000)])
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
        #expect(segmenter.phraseChecked(.incomplete) == [])
        #expect(segmenter.isOpen)
        // The pause is fed on (the decoder needs it if the speech resumes).
        #expect(segmenter.advance(to: 30_000) == [.feed(24_000..<(30_000 - holdBack))])
        // Speech resumes within the hold: the same utterance, no new begin.
        #expect(segmenter.handle(started(31_000)) == [])
        _ = segmenter.advance(to: 45_000)
        #expect(segmenter.handle(ended(31_000, 40_000)) == [.checkPhrase])
        #expect(segmenter.phraseChecked(.extendable) == [.finish(utterance: 3_600..<40_000)])
    }

    @Test func aHoldThatRunsOutEndsAtTheSpeechEnd() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.handle(ended(10_000, 24_000))
        _ = segmenter.phraseChecked(.incomplete)
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

    @Test func splitFinishesThePartAndBeginsTheNextNotBeforeTheStart() {
        var segmenter = UtteranceSegmenter()
        let start = 10_000 - leadIn
        _ = segmenter.handle(started(10_000))
        let fed = 30_000 - holdBack
        #expect(segmenter.advance(to: 30_000) == [.feed(start..<fed)])
        // Fed up to the cut (past what the hold-back had fed), the part ends there.
        #expect(segmenter.split(at: 26_800, next: 23_600)
            == [.feed(fed..<26_800), .finishPart(utterance: start..<26_800), .begin(start: 23_600, speech: 23_600)])
        #expect(segmenter.advance(to: 40_000) == [.feed(23_600..<(40_000 - holdBack))])
        // Cut inside what was fed already; the next never begins before the open one's start.
        #expect(segmenter.split(at: 30_000, next: 0) == [.finishPart(utterance: 23_600..<30_000), .begin(start: 23_600, speech: 23_600)])
        var idle = UtteranceSegmenter()
        #expect(idle.split(at: 100, next: 0) == [], "nothing open, nothing to split")
    }

    @Test func theStreamsEndFinishesOpenSpeechAndStopCancelsIt() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.advance(to: 20_000)
        #expect(segmenter.endOfStream() == [.feed((20_000 - holdBack)..<20_000), .finish(utterance: 3_600..<20_000)])
        var held = UtteranceSegmenter()
        _ = held.handle(started(10_000))
        _ = held.handle(ended(10_000, 15_000))
        _ = held.phraseChecked(.incomplete)
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
        #expect(segmenter.phraseChecked(.extendable) == [])
        #expect(segmenter.endOfStream() == [])
    }

    // MARK: Phrase-complete endpointing

    @Test func theEndpointerIsToldTheChosenPauses() {
        var listening = UtteranceListening()
        listening.completePhraseSilenceMilliseconds = 120
        listening.extendablePhraseSilenceMilliseconds = 350
        #expect(UtteranceSegmenter(listening: listening).endpointer.pauseMilliseconds == [120, 350])
        listening.completePhraseSilenceMilliseconds = 0
        #expect(UtteranceSegmenter(listening: listening).endpointer.pauseMilliseconds == [350])
    }

    @Test func aPhraseThatCanGoOnEndsAtItsOwnLongerPause() {
        var listening = UtteranceListening()
        listening.extendablePhraseSilenceMilliseconds = 350
        var segmenter = UtteranceSegmenter(listening: listening)
        _ = segmenter.handle(started(10_000))
        _ = segmenter.advance(to: 30_000)
        _ = segmenter.handle(paused(10_000, 25_000))
        #expect(segmenter.phraseChecked(.extendable) == [], "150 ms is not enough for a phrase that can go on")
        _ = segmenter.advance(to: 31_000)
        #expect(segmenter.handle(paused(10_000, 25_000, silence: 350)) == [.feed(27_400..<30_600), .checkPhrase])
        #expect(segmenter.phraseChecked(.extendable) == [.finish(utterance: 3_600..<30_600)])
        // A phrase not yet whole is never ended by a pause.
        var half = UtteranceSegmenter(listening: listening)
        _ = half.handle(started(10_000))
        _ = half.handle(paused(10_000, 25_000, silence: 350))
        #expect(half.phraseChecked(.incomplete) == [])
        #expect(half.isOpen)
    }

    @Test func aCompletePhraseEndsAtThePause() {
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.advance(to: 30_000)
        // Everything up to the pause is fed at once (past the hold-back), then checked.
        #expect(segmenter.handle(paused(10_000, 27_000)) == [.feed((30_000 - holdBack)..<29_400), .checkPhrase])
        #expect(segmenter.phraseChecked(.complete) == [.finish(utterance: 3_600..<29_400)])
        #expect(!segmenter.isOpen)
        // The endpointer's later speech end for the same speech changes nothing.
        #expect(segmenter.handle(ended(10_000, 32_800)) == [])
    }

    @Test func aPhraseThatCanGoOnOrIsNotWholeWaitsForTheTrailingSilence() {
        for progress in [PhraseProgress.extendable, .incomplete] {
            var segmenter = UtteranceSegmenter()
            _ = segmenter.handle(started(10_000))
            _ = segmenter.advance(to: 30_000)
            _ = segmenter.handle(paused(10_000, 27_000))
            #expect(segmenter.phraseChecked(progress) == [], "\(progress)")
            #expect(segmenter.isOpen)
            // Feeding goes on from the pause, contiguously, without feeding anything twice.
            #expect(segmenter.advance(to: 34_000) == [], "the hold-back is still behind what the pause fed")
            #expect(segmenter.advance(to: 40_000) == [.feed(29_400..<(40_000 - holdBack))])
            // The speech end decides as before.
            #expect(segmenter.handle(ended(10_000, 32_800)) == [.checkPhrase])
            #expect(segmenter.phraseChecked(.extendable) == [.finish(utterance: 3_600..<32_800)])
        }
    }

    @Test func aPauseDoesNothingWhenNotAllowedOffHeldOrWithNothingOpen() {
        var segmenter = UtteranceSegmenter()
        #expect(segmenter.handle(paused(0, 5_000)) == [], "nothing open")
        _ = segmenter.handle(started(10_000))
        #expect(segmenter.handle(paused(10_000, 28_000), earlyEndAllowed: false) == [])
        var listening = UtteranceListening()
        listening.completePhraseSilenceMilliseconds = 0
        var off = UtteranceSegmenter(listening: listening)
        _ = off.handle(started(10_000))
        _ = off.handle(paused(10_000, 28_000))
        #expect(off.phraseChecked(.complete) == [], "turned off: a complete phrase waits for the trailing silence")
        #expect(off.isOpen)
        // Held at a speech end: its end is decided by the hold, not by a pause.
        var held = UtteranceSegmenter()
        _ = held.handle(started(10_000))
        _ = held.handle(ended(10_000, 24_000))
        _ = held.phraseChecked(.incomplete)
        #expect(held.handle(paused(10_000, 26_000)) == [])
    }

    @Test func aPhraseCompletedAfterAHoldEndsAtTheNextPause() {
        // "a large … latte with milk and sugar": held at the first speech end,
        // resumed, then complete at the pause after the last word.
        var segmenter = UtteranceSegmenter()
        _ = segmenter.handle(started(10_000))
        _ = segmenter.handle(ended(10_000, 24_000))
        _ = segmenter.phraseChecked(.incomplete)
        #expect(segmenter.handle(started(31_000)) == [])
        _ = segmenter.advance(to: 50_000)
        #expect(segmenter.handle(paused(10_000, 47_000)) == [.feed((50_000 - holdBack)..<49_400), .checkPhrase])
        #expect(segmenter.phraseChecked(.complete) == [.finish(utterance: 3_600..<49_400)])
    }
}

import Foundation
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// The command stage's rejection scoring (`CommandScoring`), on hand-made
/// segmentations and on real recordings.
@Suite(.serialized) struct RejectionTests {
    typealias Segment = SphinxDecoder.Segment

    /// A phone-loop segmentation of frames 0..<count: one phone every 5
    /// frames at `perFrame` each, each followed by the search's one-frame
    /// `(NULL)` transition, as ps_seg_iter reports it.
    func loop(_ count: Int, perFrame: Double, withNulls: Bool = true, silence: ClosedRange<Int>? = nil) -> [Segment] {
        var out: [Segment] = []
        var f = 0
        while f < count {
            let end = min(count - 1, f + 4)
            if let silence, silence.contains(f) {
                out.append(Segment(word: "<sil>", startFrame: f, endFrame: end, acoustic: perFrame * Double(end - f + 1)))
            } else {
                out.append(Segment(word: "garbage_ah", startFrame: f, endFrame: end, acoustic: perFrame * Double(end - f + 1)))
            }
            if withNulls { out.append(Segment(word: "(NULL)", startFrame: end, endFrame: end, acoustic: 0)) }
            f = end + 1
        }
        return out
    }

    @Test func emptyTransitionsDoNotChangeTheScore() {
        let words = [Segment(word: "latte", startFrame: 0, endFrame: 49, acoustic: -150)]
        let with = CommandScoring.evidence(words, loop: loop(50, perFrame: -2), threshold: -1, snr: 60)
        let without = CommandScoring.evidence(words, loop: loop(50, perFrame: -2, withNulls: false), threshold: -1, snr: 60)
        #expect(abs(with.ratio - without.ratio) < 1e-9)
        #expect(abs(with.ratio - -1) < 1e-9, "-3 per frame against -2 per frame: \(with.ratio)")
        // The wake verifier's older score lets each (NULL) hide a loop frame.
        #expect(CommandRecognizer.acousticRatio(words, garbage: loop(50, perFrame: -2)) < with.ratio)
    }

    @Test func theWeakestWordIsTheLowestWordRatioFillersLeftOut() {
        // "large" as good as the loop, "latte" 4 per frame worse; the
        // utterance's ratio is their mean, the weakest word is "latte".
        let words = [
            Segment(word: "large", startFrame: 0, endFrame: 24, acoustic: -50),
            Segment(word: "<sil>", startFrame: 25, endFrame: 29, acoustic: -10),
            Segment(word: "latte", startFrame: 30, endFrame: 54, acoustic: -150),
        ]
        let evidence = CommandScoring.evidence(words, loop: loop(55, perFrame: -2), threshold: -1, snr: 60)
        #expect(abs(evidence.weakestWord - -4) < 1e-9, "\(evidence.weakestWord)")
        #expect(abs(evidence.ratio - -2) < 1e-9, "(0·25 − 4·25) / 50: \(evidence.ratio)")
        #expect(CommandScoring.evidence([], loop: loop(10, perFrame: -2), threshold: -1, snr: 60).weakestWord == 0)
    }

    @Test func theAskRuleChecksOnlyAcceptedCommandsBelowItsBandsLines() {
        let rule = AskRule(noisy: .init(confidence: -0.3, weakestWord: -2.5), quiet: .init(confidence: 0, weakestWord: -8),
                           splitSNR: 20)
        let match = PhraseMatch(ruleID: "r", target: .builtin(.cancel), slots: [:])
        func result(_ confidence: Double, weakest: Double = 0, snr: Double = 30, match: PhraseMatch? = match,
                    rejection: String? = nil, measured: Bool = true) -> CommandResult {
            CommandResult(transcript: "cancel", confidence: confidence, match: match, rejection: rejection,
                          evidence: measured ? RejectionEvidence(ratio: confidence, absorbedSpeech: 0, snr: snr, threshold: -2,
                                                                 weakestWord: weakest) : nil)
        }
        // Quiet band (20 dB and up): the lines are 0 and -8.
        #expect(rule.asks(result(-0.1)))
        #expect(!rule.asks(result(0)), "at the line: acted on")
        #expect(rule.asks(result(0.5, weakest: -9)), "one word far below")
        #expect(!rule.asks(result(0.5, weakest: -3)))
        // Noisy band: -0.3 and -2.5.
        #expect(!rule.asks(result(-0.1, snr: 19.9)))
        #expect(rule.asks(result(-0.4, snr: 12)))
        #expect(rule.asks(result(0.5, weakest: -3, snr: 12)))
        #expect(!rule.asks(result(-0.5, match: nil, rejection: "confidence below")), "rejected: not asked, not acted on")
        #expect(!rule.asks(result(-0.5, measured: false)), "rejection off: nothing measured")
    }

    @Test func eachWordKeepsItsOwnRatioAndItsLatticePosteriorInOrder() {
        let words = [
            Segment(word: "large", startFrame: 0, endFrame: 24, acoustic: -50),
            Segment(word: "<sil>", startFrame: 25, endFrame: 29, acoustic: -10),
            Segment(word: "latte(2)", startFrame: 30, endFrame: 54, acoustic: -150),
        ]
        // Posteriors in the segments' order, the filler's nil.
        let evidence = CommandScoring.evidence(words, loop: loop(55, perFrame: -2), threshold: -1, snr: 60,
                                               posteriors: [0.4, nil, 0.97])
        #expect(evidence.words.map(\.word) == ["large", "latte"], "fillers left out, the alternate pronunciation's mark dropped")
        #expect(evidence.words.map(\.ratio) == [0, -4])
        #expect(evidence.words.map(\.posterior) == [0.4, 0.97])
        #expect(CommandScoring.evidence(words, loop: loop(55, perFrame: -2), threshold: -1, snr: 60).words.map(\.posterior) == [nil, nil])
    }

    @Test func theAskRuleSplitsOnTheRoomsSNRReadsPosteriorsAndDoubtsTheUnlikelyWords() {
        let rule = AskRule(noisy: .init(confidence: -0.3, weakestWord: -2.5, posterior: 0.6),
                           quiet: .init(confidence: 0, weakestWord: -8), splitSNR: 20, doubtPosterior: 0.8, denoised: nil)
        let match = PhraseMatch(ruleID: "r", target: .builtin(.cancel), slots: [:])
        func result(_ confidence: Double, snr: Double, inputSNR: Double? = nil, posteriors: [Double?] = [0.99, 0.99]) -> CommandResult {
            var evidence = RejectionEvidence(ratio: confidence, absorbedSpeech: 0, snr: snr, threshold: -2, weakestWord: 0)
            evidence.inputSNR = inputSNR
            evidence.words = zip(["large", "latte"], posteriors).map { .init(word: $0, ratio: 0, posterior: $1) }
            return CommandResult(transcript: "large latte", confidence: confidence, match: match, evidence: evidence)
        }
        // Denoised audio reads 35 dB; the room was at 8 dB: the noisy band's lines.
        #expect(rule.asks(result(-0.1, snr: 35, inputSNR: 8)) == false)
        #expect(rule.asks(result(-0.4, snr: 35, inputSNR: 8)))
        #expect(rule.asks(result(-0.1, snr: 35)), "without the neural stage the audio's own SNR: the quiet band's line, 0")
        #expect(rule.isNoisy(result(0, snr: 35, inputSNR: 8).evidence!))
        // The lowest posterior: below the noisy band's line asks, the quiet band reads none.
        #expect(rule.asks(result(0.2, snr: 35, inputSNR: 8, posteriors: [0.5, 0.99])))
        #expect(rule.asks(result(0.2, snr: 35, inputSNR: 8, posteriors: [0.7, 0.99])) == false)
        #expect(rule.asks(result(0.2, snr: 35, inputSNR: 30, posteriors: [0.01, 0.99])) == false)
        // The doubted words: below 0.8, in order; none without posteriors.
        #expect(rule.doubted(result(-0.4, snr: 35, inputSNR: 8, posteriors: [0.5, 0.99])) == ["large"])
        #expect(rule.doubted(result(-0.4, snr: 35, inputSNR: 8, posteriors: [0.5, 0.3])) == ["large", "latte"])
        #expect(rule.doubted(result(-0.4, snr: 35, inputSNR: 8, posteriors: [nil, nil])).isEmpty)

        // With a rule of its own for denoised audio, that one applies
        // wherever the network ran, and only there.
        var split = rule
        split.denoised = .init(noisy: .init(confidence: -1, weakestWord: -5), quiet: .init(confidence: -2, weakestWord: -9),
                               splitSNR: 40, splitsOnRoom: false, doubtPosterior: 0.3)
        #expect(split.asks(result(-0.4, snr: 35, inputSNR: 8)) == false, "-0.4 is above the denoised noisy band's -1")
        #expect(split.asks(result(-1.5, snr: 35, inputSNR: 50)), "split on the denoised audio's 35 dB: the noisy band")
        #expect(split.asks(result(-0.4, snr: 35)), "no network: the plain rule's quiet band")
        #expect(split.doubted(result(-2, snr: 35, inputSNR: 8, posteriors: [0.5, 0.2])) == ["latte"])
        // The shipped rule for denoised audio asks nothing by one slot alone.
        #expect(AskRule().doubted(result(-3.5, snr: 35, inputSNR: 8, posteriors: [0.01, 0.01])).isEmpty)
        #expect(AskRule().asks(result(-0.2, snr: 50, inputSNR: 10)), "a noisy room: under -0.1 asks")
        #expect(AskRule().asks(result(-0.05, snr: 50, inputSNR: 10)) == false)
        #expect(AskRule().asks(result(-2.5, snr: 50, inputSNR: 30)) == false, "a quiet room: down to -3 never asked")
        #expect(AskRule().asks(result(0.5, snr: 50, inputSNR: 10, posteriors: [0.01, 0.01])) == false, "posteriors not read")
        // What the plain decode corroborated is never asked, in any band.
        var corroborated = result(-2.5, snr: 50, inputSNR: 10)
        corroborated.evidence?.corroborated = true
        #expect(AskRule().asks(corroborated) == false)
        #expect(rule.asks(corroborated) == false)
    }

    @Test func silenceThatHidesSpeechCountsAgainstTheCommand() {
        // 50 frames of words as good as the loop, then 100 frames the command
        // path calls silence while the loop decodes phones.
        let words = [
            Segment(word: "latte", startFrame: 0, endFrame: 49, acoustic: -100),
            Segment(word: "<sil>", startFrame: 50, endFrame: 149, acoustic: -500),
        ]
        let hidden = CommandScoring.evidence(words, loop: loop(150, perFrame: -2), threshold: -1, snr: 60)
        #expect(abs(hidden.absorbedSpeech - 2) < 1e-9)
        #expect(abs(hidden.ratio - -2) < 1e-9, "(0·50 − 3·100) / 150: \(hidden.ratio)")
        // Real silence: the loop fits it no better, so it is left out.
        let quiet = [words[0], Segment(word: "<sil>", startFrame: 50, endFrame: 149, acoustic: -200)]
        let silent = CommandScoring.evidence(quiet, loop: loop(150, perFrame: -2, silence: 50...149), threshold: -1, snr: 60)
        #expect(silent.absorbedSpeech == 0)
        #expect(silent.ratio == 0)
    }

    @Test func leftoverSpeechRejectsOnlyInQuiet() {
        let policy = RejectionPolicy()
        #expect(policy.quietWeight(snr: 20) == 0)
        #expect(policy.quietWeight(snr: 40) == 0.5)
        #expect(policy.quietWeight(snr: 60) == 1)
        let evidence = { (absorbed: Double, snr: Double) in
            RejectionEvidence(ratio: 0, absorbedSpeech: absorbed, snr: snr, threshold: -1)
        }
        #expect(evidence(1.5, 60).rejection(policy: policy)?.contains("speech outside") == true)
        #expect(evidence(0.5, 60).rejection(policy: policy) == nil)
        #expect(evidence(1.5, 38).rejection(policy: policy) == nil, "weighted 0.6")
        #expect(evidence(5, 25).rejection(policy: policy) == nil, "noise: the loop hears the noise as phones")
        #expect(RejectionEvidence(ratio: -1.2, absorbedSpeech: 0, snr: 60, threshold: -1).rejection(policy: policy)?
            .contains("below") == true)
    }

    @Test func longerSpeechForcedOntoAShortCommandIsRejected() throws {
        // A coffee order whose start fits "i want an minestrone" nearly as
        // well as the phone loop does; the rest of the order is left as
        // "silence" (decoded first on a fresh recogniser: PocketSphinx's
        // noise estimate carries over from one utterance to the next).
        let soup = try EvaluationGrammars.soup()  // the false-acceptance benchmark's
        let file = try Fixtures.coffeeRecording("48771c69-7371-4114-870c-4ffaa840702c.wav")
        let audio = try PCMAudio.read(file).samples
        let recognizer = try CommandRecognizer(model: soup)
        let result = try recognizer.recognize(audio)
        #expect(result.transcript == "i want an minestrone")
        #expect(result.match == nil)
        #expect(result.rejection?.contains("speech outside") == true, "\(result.rejection ?? "accepted")")
        #expect((result.evidence?.absorbedSpeech ?? 0) > 1)
        recognizer.policy.maximumAbsorbedSpeech = .infinity
        #expect(try recognizer.recognize(audio).match != nil, "the ratio alone lets it through")
    }

    @Test func realOrdersLeaveLittleSpeechOver() throws {
        let coffee = try CoffeeFixture.grammar()
        let recognizer = try CommandRecognizer(model: coffee)
        let items = try CoffeeFixture.labelled(6)
        for item in items {
            let result = try recognizer.recognize(PCMAudio.read(item.file).samples)
            let evidence = try #require(result.evidence)
            #expect(evidence.absorbedSpeech < 0.5, "\(item.file.lastPathComponent): \(evidence)")
            #expect(evidence.snr > 30)
        }
    }

    @Test func eachRecognisedWordGetsItsLatticePosterior() throws {
        let recognizer = try CommandRecognizer(model: try CoffeeFixture.grammar())
        recognizer.measuresWordPosteriors = true
        var all: [Double] = []
        for item in try CoffeeFixture.labelled(6) {
            let result = try recognizer.recognize(PCMAudio.read(item.file).samples)
            let words = try #require(result.evidence?.words)
            #expect(words.map(\.word) == result.transcript.split(separator: " ").map(String.init))
            let posteriors = words.compactMap(\.posterior)
            #expect(posteriors.count == words.count, "every word has one: \(words)")
            #expect(posteriors.allSatisfy { (0...1).contains($0) })
            all += posteriors
        }
        // Clean orders: most words sure, but not every one (a lattice whose
        // posteriors were never computed reads 1 or 0 everywhere).
        #expect(all.reduce(0, +) / Double(all.count) > 0.8)
        #expect(all.contains { $0 > 0.01 && $0 < 0.99 }, "\(all)")
    }
}

import Foundation
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// Small, fast checks on real recordings; the full evaluation is
/// training/bin/eval-coffee.sh and training/bin/eval-wake.sh.
@Suite(.serialized) struct RecognitionTests {
    static var coffee: PhraseModel { get throws { try CoffeeFixture.grammar() } }
    static let soup = try! RhinoContext.parse("""
    context:
      expressions:
        orderSoup:
          - "[order, get me, I want, I'd like] [a, an] (bowl of) $soup:soup"
      slots:
        soup: ["clam chowder", "tomato soup", "minestrone", "lentil soup"]
    """, app: "Soup Chef")

    func labelled(_ count: Int) throws -> [LabelledSet.Item] {
        try CoffeeFixture.labelled(count)
    }

    @Test func coffeeOrdersAreUnderstood() throws {
        let recognizer = try CommandRecognizer(model: Self.coffee)
        let items = try labelled(8)
        var understood = 0
        for item in items {
            let result = try recognizer.recognize(PCMAudio.read(item.file).samples)
            if isUnderstood(intent: item.intent, slots: item.slots, result: result.match) { understood += 1 }
        }
        #expect(understood >= 7, "understood \(understood) of \(items.count)")
    }

    @Test func coffeeOrdersDoNotTriggerSoup() throws {
        let recognizer = try CommandRecognizer(model: Self.soup)
        var accepted = 0
        let items = try labelled(10)
        for item in items where try recognizer.recognize(PCMAudio.read(item.file).samples).match != nil { accepted += 1 }
        #expect(accepted <= 2, "accepted \(accepted) of \(items.count)")
    }

    @Test func grammarUpdateSwitchesWhatIsHeard() throws {
        let recognizer = try CommandRecognizer(model: Self.soup, rejection: nil)
        let item = try labelled(1)[0]
        let audio = try PCMAudio.read(item.file).samples
        #expect(!isUnderstood(intent: item.intent, slots: item.slots, result: try recognizer.recognize(audio).match))
        try recognizer.update(model: Self.coffee)
        #expect(isUnderstood(intent: item.intent, slots: item.slots, result: try recognizer.recognize(audio).match))
    }

    @Test func wakeWordIsSpottedAndNotInCoffeeOrders() throws {
        let detector = try WakeDetector(mode: .named("computer", heyOptional: true), sensitivity: 0.5)
        let files = Array(try Fixtures.wavFiles(in: Fixtures.wakeComputer).prefix(10))
        var hits = 0
        for file in files {
            let audio = try PCMAudio.read(file)
            let padded = PCMAudio(samples: [Int16](repeating: 0, count: 8000) + audio.samples + [Int16](repeating: 0, count: 8000))
            let found = try detector.detections(in: padded)
            if let first = found.first, first > 0.5, first <= padded.seconds { hits += 1 }
        }
        #expect(hits >= 8, "spotted \(hits) of \(files.count)")
        var alarms = 0
        for item in try labelled(6) { alarms += try detector.detections(in: PCMAudio.read(item.file)).count }
        #expect(alarms == 0)
        #expect(throws: SpeechError.self) { try WakeDetector(mode: .direct, sensitivity: 2) }
    }

    @Test func wakeVerifierGrammarAllowsSpeechAroundThePhrase() {
        let graph = WakeVerifier.phraseGraph([["hey", "computer"], ["computer"]], loop: RejectionModel())
        #expect(graph.accepts(["computer"]))
        #expect(graph.accepts(["hey", "computer"]))
        #expect(graph.accepts(["garbage_k", "garbage_aa", "computer", "garbage_s"]))
        #expect(!graph.accepts(["hey"]))
        #expect(!graph.accepts(["garbage_k"]))
    }

    @Test func sensitivityMovesOnlyTheStageTwoThreshold() {
        #expect(WakeDetector.verificationThreshold(sensitivity: 0) == WakeDetector.verificationRange.upperBound)
        #expect(WakeDetector.verificationThreshold(sensitivity: 1) == WakeDetector.verificationRange.lowerBound)
        #expect(WakeDetector.verificationThreshold(sensitivity: 0.3) > WakeDetector.verificationThreshold(sensitivity: 0.6))
    }

    @Test func rejectionPolicyRelaxesTheThresholdInNoise() throws {
        let policy = RejectionPolicy(cleanSNR: 30, relaxPerDecibel: 0.1, maximumRelaxation: 2)
        #expect(policy.threshold(base: -1, snr: 40) == -1)
        #expect(abs(policy.threshold(base: -1, snr: 20) - -2) < 1e-9)
        #expect(policy.threshold(base: -1, snr: 0) == -3)
        #expect(RejectionPolicy(relaxPerDecibel: 0).threshold(base: -1, snr: 0) == -1, "0 makes the threshold fixed")
        let clean = try PCMAudio.read(labelled(1)[0].file)
        let noise = try PCMAudio.read(Fixtures.kitchenNoise)
        let cleanSNR = RejectionPolicy.estimatedSNR(clean.samples)
        let noisySNR = RejectionPolicy.estimatedSNR(clean.mixed(with: noise, snr: 6, seed: 1).samples)
        #expect(noisySNR < cleanSNR - 5, "clean \(cleanSNR) dB, 6 dB mix \(noisySNR) dB")
    }

    @Test func synthesizedSpeechDecodesBackToTheSentence() throws {
        let synth = try SpeechSynthesizer()
        let sentence = "your twelve ounce latte will be ready in 10 min"
        let audio = try synth.render16k(sentence).asCaptured()
        #expect(audio.seconds > 1.5)
        let words = SpokenText.normalise(sentence).split(separator: " ").map(String.init)
        #expect(words.contains("minutes"))
        let distractor = ["your", "tea", "is", "cold"]
        let model = PhraseModel(rules: [
            PhraseRule(id: "said", target: .answer, body: .words(words)),
            PhraseRule(id: "other", target: .answer, body: .words(distractor)),
        ])
        let recognizer = try CommandRecognizer(model: model, rejection: nil)
        let result = try recognizer.recognize(audio.samples)
        #expect(result.match?.ruleID == "said", """
            heard '\(result.transcript)' (score \(result.confidence)) in \(audio.seconds) s of audio, \
            peak \(audio.samples.map { abs(Int($0)) }.max() ?? 0), sum \(audio.samples.reduce(0) { $0 &+ Int($1) })
            """)
        #expect(throws: SpeechError.self) { try SpeechSynthesizer(settings: VoiceSettings(rate: 10)) }
    }
}

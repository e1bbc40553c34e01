import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// The daemon's decoder: fed in blocks while the person speaks.
@Suite(.serialized) struct StreamingDecoderTests {
    static var coffee: PhraseModel { get throws { try CoffeeFixture.grammar() } }

    func recordings(_ count: Int) throws -> [LabelledSet.Item] {
        try CoffeeFixture.labelled(count)
    }

    /// Feeds `samples` in 100 ms blocks, as the daemon reads its ring.
    func stream(_ samples: [Int16], into decoder: StreamingCommandDecoder) throws -> CommandResult {
        decoder.begin()
        var offset = 0
        while offset < samples.count {
            let end = min(offset + 1_600, samples.count)
            decoder.feed(Array(samples[offset..<end]))
            offset = end
        }
        return try decoder.finish()
    }

    @Test func recordedOrdersFedInBlocksAreUnderstood() throws {
        let decoder = try StreamingCommandDecoder(model: Self.coffee)
        var understood = 0
        let items = try recordings(6)
        for item in items {
            let audio = try PCMAudio.read(item.file)
            let result = try stream(audio.samples, into: decoder)
            if isUnderstood(intent: item.intent, slots: item.slots, result: result.match) { understood += 1 }
        }
        #expect(understood >= 5, "understood \(understood) of \(items.count)")
    }

    /// `decodeAside` (the plain second opinion behind the neural front end)
    /// puts the live cepstral mean, carried from one utterance to the next,
    /// back where it was, which an ordinary decode of the same noisy audio
    /// does not. (The library's noise estimate and frame-to-frame Gaussian
    /// selection still start the next utterance from the aside's last
    /// frames, here with nothing decoded to resettle them: its first words'
    /// scores move a little, as after any other utterance.)
    @Test func aDecodeAsideLeavesTheNormalisationAsItWas() throws {
        let items = try recordings(2)
        let first = try PCMAudio.read(items[0].file).samples
        let next = try PCMAudio.read(items[1].file).samples
        let noise = try WAVFile.read(Fixtures.require(Fixtures.kitchenNoise)).samples
        let aside = NoiseMixer.mix(speech: first, noise: noise, snrDB: 0, seed: 3)
        let pieces = stride(from: 0, to: aside.count, by: 1_600).map { Array(aside[$0..<min(aside.count, $0 + 1_600)]) }

        let untouched = try StreamingCommandDecoder(model: Self.coffee)
        _ = try stream(first, into: untouched)
        let before = try untouched.liveNormalisations()
        #expect(before.allSatisfy { $0 != nil })
        let expected = try stream(next, into: untouched)

        let asideDecoder = try StreamingCommandDecoder(model: Self.coffee)
        _ = try stream(first, into: asideDecoder)
        #expect(try asideDecoder.liveNormalisations() == before)
        _ = try asideDecoder.decodeAside(pieces, resettling: [])
        #expect(try asideDecoder.liveNormalisations() == before)
        let afterAside = try stream(next, into: asideDecoder)
        #expect(afterAside.transcript == expected.transcript)

        let moved = try StreamingCommandDecoder(model: Self.coffee)
        _ = try stream(first, into: moved)
        _ = try stream(aside, into: moved)
        #expect(try moved.liveNormalisations() != before, "an ordinary decode carries the noisy audio's mean on")
        let afterMoved = try stream(next, into: moved)
        // 1.437 untouched, 1.408 after the aside, 1.596 after a decode.
        #expect(abs(afterAside.confidence - expected.confidence) < abs(afterMoved.confidence - expected.confidence) / 2,
                "untouched \(expected.confidence), after the aside \(afterAside.confidence), after a decode \(afterMoved.confidence)")
    }

    @Test func everyUtteranceOfAStreamGetsItsOwnWordPosteriors() throws {
        // The segments count frames from the decoder's first utterance and
        // the lattice from each one's own start: the second utterance on
        // (what the daemon decodes all day) read 0 for every word before
        // the two were aligned.
        let decoder = try StreamingCommandDecoder(model: Self.coffee)
        let items = try recordings(3)
        // Off by default (the daemon's case: the lattice costs latency): words, no posteriors.
        let plain = try stream(PCMAudio.read(items[0].file).samples, into: decoder)
        #expect(plain.evidence?.words.isEmpty == false)
        #expect(plain.evidence?.words.allSatisfy { $0.posterior == nil } == true)
        decoder.measuresWordPosteriors = true
        for item in items {
            let result = try stream(PCMAudio.read(item.file).samples, into: decoder)
            let posteriors = try #require(result.evidence?.words).compactMap(\.posterior)
            #expect(!posteriors.isEmpty)
            #expect(posteriors.reduce(0, +) / Double(posteriors.count) > 0.8, "\(item.file.lastPathComponent): \(posteriors)")
        }
    }

    /// Rejection while spoken (`EarlyRejection`, `parley understand
    /// --reject-early`): measuring looks at the words so far and changes
    /// nothing; a margin gives up speech forced into the grammar before its
    /// end, feeds nothing more, and the next utterance is decoded whole.
    @Test func speechGivenUpWhileSpokenIsRejectedAndTheNextUtteranceIsWhole() throws {
        let synth = try SpeechSynthesizer()
        let chatter = try synth.render16k("the weather is nice and sunny today and tomorrow it will rain again over the hills").samples
        let item = try #require(try recordings(1).first)
        let order = try PCMAudio.read(item.file).samples
        let plain = try StreamingCommandDecoder(model: Self.coffee)
        let before = [try stream(chatter, into: plain), try stream(order, into: plain)]

        let measuring = try StreamingCommandDecoder(model: Self.coffee)
        measuring.earlyRejection = .measuring
        let measured = [try stream(chatter, into: measuring), try stream(order, into: measuring)]
        #expect(measured.map(\.transcript) == before.map(\.transcript))
        #expect(measured.map(\.confidence) == before.map(\.confidence))
        // Looks from 750 ms of audio on, at least 250 ms apart (none is
        // recorded while the best path has no finished word).
        let looks = measured[0].looks
        #expect(!looks.isEmpty)
        #expect(looks.first.map { $0.fedSamples >= 12_000 } == true)
        #expect(zip(looks, looks.dropFirst()).allSatisfy { $1.fedSamples - $0.fedSamples >= 4_000 })
        // The chatter is forced into the grammar: below the line somewhere.
        let lowest = try #require(looks.map(\.margin).min())
        #expect(lowest < 0, "looks: \(looks)")

        // Given up at the lowest look before the last: the last may fall at
        // the chatter's very end (espeak-ng's length varies by a few samples
        // between runs), and this checks giving up before the end.
        let lowestBeforeLast = try #require(looks.dropLast().map(\.margin).min())
        #expect(lowestBeforeLast < 0, "looks: \(looks)")
        let giving = try StreamingCommandDecoder(model: Self.coffee)
        giving.earlyRejection = try EarlyRejection.parse("\(max(0, -lowestBeforeLast - 0.01)):750:250")
        #expect(giving.earlyRejection?.margin != nil)
        let given = try stream(chatter, into: giving)
        #expect(given.match == nil)
        #expect(given.rejection?.hasPrefix("given up while spoken") == true, "\(given.rejection ?? "")")
        #expect(try #require(given.looks.last).fedSamples < chatter.count, "given up before the end")
        // The order after it: decoded whole, as by a decoder that never gave up.
        let next = try stream(order, into: giving)
        #expect(next.transcript == before[1].transcript)
        #expect(next.match == before[1].match)

        #expect(try EarlyRejection.parse("off") == nil)
        #expect(try EarlyRejection.parse("2.5") == EarlyRejection(firstLookSamples: 24_000, intervalSamples: 4_000, margin: 2.5))
        for bad in ["on", "-1", "1:0", "1:2:3:4", "x"] {
            #expect(throws: SpeechError.self, "\(bad)") { try EarlyRejection.parse(bad) }
        }
    }

    @Test func aCancelledUtteranceLeavesTheNextOneIntactAndGrammarsSwap() throws {
        let synth = try SpeechSynthesizer()
        let said = SpokenText.normalise("turn the radio off").split(separator: " ").map(String.init)
        let other = ["your", "tea", "is", "cold"]
        let model = PhraseModel(rules: [
            PhraseRule(id: "said", target: .answer, body: .words(said)),
            PhraseRule(id: "other", target: .answer, body: .words(other)),
        ])
        let decoder = try StreamingCommandDecoder(model: model, rejection: nil)
        let audio = try synth.render16k("turn the radio off").asCaptured()
        decoder.begin()
        decoder.feed(Array(audio.samples.prefix(4_000)))
        decoder.cancel()
        #expect(try stream(audio.samples, into: decoder).match?.ruleID == "said")

        // A grammar without the phrase: the same audio no longer matches "said".
        try decoder.update(model: PhraseModel(rules: [PhraseRule(id: "other", target: .answer, body: .words(other))]))
        #expect(try stream(audio.samples, into: decoder).match?.ruleID != "said")
    }

    @Test func rejectionComparesWithThePhoneLoopLikeTheBufferedRecogniser() throws {
        // Coffee orders against a soup grammar: forced into it, they score far below the phone loop.
        let soup = try EvaluationGrammars.soup()
        let decoder = try StreamingCommandDecoder(model: soup)
        let buffered = try CommandRecognizer(model: soup)
        var accepted = 0, agreed = 0
        for item in try recordings(6) {
            let samples = try PCMAudio.read(item.file).samples
            let result = try stream(samples, into: decoder)
            if result.match != nil { accepted += 1 }
            // Rejected by the phone-loop comparison (its evidence measured),
            // not merely because the words fit no rule or nothing was heard.
            if result.match == nil {
                #expect(result.evidence != nil && !result.transcript.isEmpty && result.rejection != "no rule matches",
                        "\(item.file.lastPathComponent): \(result.rejection ?? "") heard \(result.transcript)")
            }
            if (try buffered.recognize(samples).match == nil) == (result.match == nil) { agreed += 1 }
        }
        #expect(accepted <= 1, "accepted \(accepted) coffee orders as soup")
        #expect(agreed >= 5, "the buffered recogniser decided \(6 - agreed) of 6 differently")
    }
}

import Foundation
import ParleyAudio
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// The wake detector's stage 2 on real recordings; the full evaluation is
/// training/bin/eval-wake.sh.
@Suite(.serialized) struct WakeTests {
    static func positives(_ count: Int) throws -> [PCMAudio] {
        try Fixtures.wavFiles(in: Fixtures.wakeComputer).prefix(count).map { try PCMAudio.read($0) }
    }

    static func coffee(_ count: Int) throws -> [PCMAudio] {
        try CoffeeFixture.labelled(count).map { try PCMAudio.read($0.file) }
    }

    /// A verifier registered on a decoder of its own.
    static func verifier() throws -> (WakeVerifier, SphinxDecoder) {
        let verifier = WakeVerifier(phrases: [["hey", "computer"], ["computer"]])
        let decoder = try SphinxDecoder(words: verifier.words)
        try verifier.register(on: decoder)
        return (verifier, decoder)
    }

    @Test func bothDecodesOfAWindowSeeTheSameFrames() throws {
        let (_, decoder) = try Self.verifier()
        let audio = try Self.positives(1)[0]
        let frontEnd = try FeatureFrontEnd(for: decoder)
        let cepstra = try frontEnd.cepstra(audio.samples)
        #expect(cepstra.count > 50, "a 3 s recording gives frames")
        #expect(cepstra.allSatisfy { $0.count == frontEnd.width })
        var lastFrames: [Int] = []
        for search in [WakeVerifier.phraseSearch, WakeVerifier.loopSearch] {
            try decoder.use(search)
            decoder.cepstralMeanMode = .batch
            #expect(try decoder.decode(cepstra: cepstra) != nil)
            let segments = decoder.segments()
            lastFrames.append((segments.map(\.endFrame).max() ?? 0) - (segments.map(\.startFrame).filter { $0 >= 0 }.min() ?? 0))
        }
        #expect(lastFrames[0] == lastFrames[1], "phrase and loop decodes span \(lastFrames) frames")
        #expect(lastFrames[0] == cepstra.count - 1)
    }

    @Test func wakeWordsScoreAboveZeroAndCoffeeOrdersBelow() throws {
        let (verifier, decoder) = try Self.verifier()
        // Each recording whole: about 1 s of silence, "computer", 1 s of silence.
        let positives = try Self.positives(10).map { try verifier.score($0.samples, on: decoder) }
        #expect(positives.filter { $0 > 0 }.count >= 8, "positive scores \(positives)")
        // Windows ending inside coffee orders, where "coffee" resembles "computer".
        var negatives: [Double] = []
        for audio in try Self.coffee(6) {
            // Stage-2 windows (1.9 s) every half second.
            let length = Int((WakeVerifier.windowSeconds + WakeVerifier.tailSeconds) * 16_000)
            var end = length
            while end <= audio.samples.count {
                negatives.append(try verifier.score(Array(audio.samples[(end - length)..<end]), on: decoder))
                end += 8_000
            }
        }
        #expect(negatives.count > 20)
        // Where the phrase cannot be fitted at all (pruned away) the score is
        // -infinity; enough windows must get a real score for this to test.
        #expect(negatives.filter(\.isFinite).count >= 5, "\(negatives.filter(\.isFinite).count) of \(negatives.count) scored")
        #expect(negatives.filter { $0 > 0 }.isEmpty, "negative scores \(negatives.sorted().suffix(3))")
    }

    @Test func phraseGraphCostsWhatTheFreeLoopCostsPerPhone() {
        let loop = RejectionModel()
        let share = log(1 / Double(loop.phones.count))
        let graph = WakeVerifier.phraseGraph([["computer"]], loop: loop)
        let fillers = graph.arcs.filter { $0.word.map(RejectionModel.isFiller) ?? false }
        #expect(fillers.count == 2 * loop.phones.count, "one garbage loop before and one after the phrase")
        #expect(fillers.allSatisfy { abs($0.logProbability - share) < 1e-12 })
        #expect(graph.arcs.filter { $0.word == nil }.allSatisfy { $0.logProbability == 0 })
        #expect(GrammarCompiler.phoneLoop(loop).arcs.filter { $0.word != nil }.allSatisfy { abs($0.logProbability - share) < 1e-12 })
    }

    @Test func libraryKeepsLiveNormalisationAfterStreamingUntilToldOtherwise() throws {
        let (_, decoder) = try Self.verifier()
        try decoder.use(WakeVerifier.loopSearch)
        try decoder.startUtterance()
        try decoder.process(try Self.positives(1)[0].samples)
        try decoder.endUtterance()
        #expect(decoder.cepstralMeanMode == .live)
        #expect(decoder.cepstralMean.count == 13)
        decoder.cepstralMeanMode = .batch
        #expect(decoder.cepstralMeanMode == .batch)
    }

    /// The front end before the detector (issue 27): with noise
    /// suppression the wake word in kitchen noise at 10 dB still scores as
    /// the wake word, and the denoised input is what the detector is given
    /// (its candidates differ from those of the raw mix).
    @Test func theDetectorHearsTheWakeWordThroughTheDenoiser() throws {
        let detector = try WakeDetector(mode: .named("computer", heyOptional: true))
        let noise = try PCMAudio.read(Fixtures.kitchenNoise).samples
        let pad = [Int16](repeating: 0, count: 8_000)
        var woken = 0, differs = 0
        let positives = try Self.positives(4)
        for (i, audio) in positives.enumerated() {
            let mixed = NoiseMixer.mix(speech: pad + audio.samples + pad, noise: noise, snrDB: 10, seed: UInt64(i))
            let denoised = try FrontEndSource.processed(mixed, settings: FrontEndSettings(mode: .denoise))
            let heard = try detector.candidates(in: PCMAudio(samples: denoised))
            let raw = try detector.candidates(in: PCMAudio(samples: mixed))
            if heard.map(\.score) != raw.map(\.score) { differs += 1 }
            if heard.contains(where: { $0.score >= WakeDetector.verificationThreshold(sensitivity: 0.5) }) { woken += 1 }
        }
        #expect(differs == positives.count, "the detector was given the denoised audio")
        #expect(woken >= 3, "\(woken) of \(positives.count) woke through the denoiser")
    }

    @Test func sensitivityHalfIsTheCrossValidatedThreshold() {
        // training/bin/eval-wake-cv.sh: 18.7 nats on all five folds, rounded up.
        #expect(WakeDetector.verificationThreshold(sensitivity: 0.5) == 19)
        #expect(WakeDetector.verificationThreshold(sensitivity: 0.8) < 0)
        #expect(WakeDetector.verificationThreshold(sensitivity: 0.2) > 19)
    }

    @Test func durationPriorChargesOnlyPhrasesShorterThanPeopleSayThem() throws {
        #expect(WakeVerifier.durationPenalty(frames: 40, minimum: 56) == 16 * WakeVerifier.shortPhrasePenalty)
        #expect(WakeVerifier.durationPenalty(frames: 56, minimum: 56) == 0)
        #expect(WakeVerifier.durationPenalty(frames: 90, minimum: 56) == 0)
        let (verifier, decoder) = try Self.verifier()
        // "computer" is K AH M P Y UW T ER; "hey computer" is longer, so the
        // shortest phrase sets the minimum.
        #expect(verifier.minimumFrames == WakeVerifier.minimumFramesPerPhone * 8)
        // On real audio the score is the likelihood ratio less the prior.
        var charged = 0
        for audio in try Self.positives(10) {
            let v = try verifier.verify(audio.samples, on: decoder)
            #expect(v.phraseFrames > 20, "the phrase covers frames")
            let expected = v.likelihoodRatio - WakeVerifier.durationPenalty(frames: v.phraseFrames, minimum: verifier.minimumFrames)
            #expect(abs(v.score - expected) < 1e-9)
            if v.score < v.likelihoodRatio { charged += 1 }
        }
        #expect(charged < 10, "most takes of the phrase are long enough to pay nothing")
    }

    @Test func evidenceComparesThePhraseWithThePhonesTheFreeLoopHears() throws {
        let (verifier, decoder) = try Self.verifier()
        #expect(verifier.namePhones == ["K", "AH", "M", "P", "Y", "UW", "T", "ER"])
        let quiet = [Int16](repeating: 0, count: 8_000)
        var noisy = [Int16]()
        var near = 0
        for audio in try Self.positives(6) {
            let clean = try verifier.verify(quiet + audio.samples + quiet, on: decoder).evidence
            #expect(clean.nameFrames > 20 && clean.nameFrames <= 200, "the name covers its frames: \(clean.nameFrames)")
            #expect(clean.loopPhones >= 3, "the free loop hears phones where the name is: \(clean.loopPhones)")
            #expect((0...2).contains(clean.phoneDistance))
            if clean.phoneDistance <= 0.75 { near += 1 }
            #expect(clean.nameRatio.isFinite)
            #expect(clean.heyRatio == nil, "these takes are \"computer\" alone, without \"hey\"")
            // The same take in white noise: the window's SNR falls.
            var rng = SplitMix64(seed: 7)
            noisy = (quiet + audio.samples + quiet).map { s in
                let n = Int(rng.next() % 4001) - 2000
                return Int16(clamping: Int(s) + n)
            }
            let loud = try verifier.verify(noisy, on: decoder).evidence
            #expect(loud.snr < clean.snr - 10, "noise lowers the window's SNR: \(clean.snr) -> \(loud.snr)")
        }
        #expect(near >= 4, "the loop mostly hears the name's own phones (\(near) of 6 within 6 of 8 edits)")
    }

    @Test func phoneDistanceAndWindowSNRAreTheTextbookOnes() {
        #expect(WakeVerifier.editDistance([], ["K", "AH"]) == 2)
        #expect(WakeVerifier.editDistance(["K", "AH", "M"], ["K", "AH", "M"]) == 0)
        #expect(WakeVerifier.editDistance(["K", "AA", "M", "P"], ["K", "AH", "M"]) == 2, "one substitution, one insertion")
        #expect(WakeVerifier.editDistance(["G", "AH"], ["K", "AH", "M"]) == 2)
        #expect(WakeVerifier.signalToNoise([Int16](repeating: 0, count: 16_000)) == 0, "digital silence has no speech over its floor")
        // A fifth of the window at 1000, the rest at 10: 40 dB between them.
        let burst = [Int16](repeating: 10, count: 14_400) + [Int16](repeating: 1000, count: 6_400) + [Int16](repeating: 10, count: 14_400)
        #expect(abs(WakeVerifier.signalToNoise(burst) - 40) < 0.1)
    }
}

import CParleyMallocCounter
import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
@testable import ParleySpeech
import ParleyWake
import Testing

/// The shipped speech_embedding head for "computer" (model/wake/
/// computer.embedding.json) in Swift against the Python trainer's scores,
/// and as the daemon's wake decoder (`wake.detector: embedding`).
@Suite struct EmbeddingSpotterTests {
    static var modelPath: String {
        Fixtures.packageRoot.appendingPathComponent(KeywordModel.sourceWakeFolder + "/computer.embedding.json").path
    }

    static func weights() throws -> SpeechEmbeddingWeights {
        try SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate())
    }

    struct Reference: Decodable {
        var model_sha256: String
        var computer: [Double]
        var kitchen: [Double]
    }

    /// The Python head over the TFLite reference embeddings
    /// (`python -m parley_training.fixtures Tests/Fixtures HEAD`): the same
    /// windows score the same, so the folds' figures carry over to Swift.
    @Test func scoresMatchThePythonTrainer() throws {
        let ref = try JSONDecoder().decode(Reference.self, from: Data(contentsOf: try Fixtures.require(
            Fixtures.root.appendingPathComponent("wake-computer/head-scores.json"))))
        #expect(try KeywordSpotterTests.sha256(Self.modelPath) == ref.model_sha256,
                "model/wake/computer.embedding.json changed since its reference scores: run python -m parley_training.fixtures")
        let model = try EmbeddingWakeModel.load(Self.modelPath)
        let weights = try Self.weights()
        let word = try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples
        let kitchen = Array(try PCMAudio.read(Fixtures.kitchenNoise).samples.prefix(6 * 16_000))
        for (samples, expected) in [(word, ref.computer), (kitchen, ref.kitchen)] {
            let got = EmbeddingSpotter.scores(of: samples, model: model, weights: weights)
            #expect(got.count == expected.count)
            for (g, e) in zip(got, expected) { #expect(abs(g - e) < 0.05, "score \(g), Python \(e)") }
        }
    }

    @Test func detectsTheWordInRecordingsAndNotInKitchenNoise() throws {
        let spotter = EmbeddingSpotter(model: try EmbeddingWakeModel.load(Self.modelPath), weights: try Self.weights())
        var found = 0
        for file in try Fixtures.wavFiles(in: Fixtures.wakeComputer, atLeast: 10).prefix(10) {
            spotter.reset()
            var hits = 0
            EmbeddingSpotter.padded(try PCMAudio.read(file).samples).withUnsafeBufferPointer { spotter.feed($0) { _, _ in hits += 1 } }
            if hits > 0 { found += 1 }
            #expect(hits <= 1, "one word, one wake: \(file.lastPathComponent)")
        }
        #expect(found >= 9, "heard \(found) of 10")
        spotter.reset()
        var noise = 0
        try PCMAudio.read(Fixtures.kitchenNoise).samples.withUnsafeBufferPointer { spotter.feed($0) { _, _ in noise += 1 } }
        #expect(noise == 0)
    }

    @Test func theUtteranceDecoderSaysWhereTheWordEnded() throws {
        let wake = EmbeddingWakeUtterance(EmbeddingSpotter(model: try EmbeddingWakeModel.load(Self.modelPath), weights: try Self.weights()))
        let word = try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples
        let quiet = Array(EmbeddingSpotter.padded([]).prefix(16_000))
        wake.begin()
        wake.feed(quiet + quiet + quiet)
        #expect(!wake.finish() && !wake.proposed)
        // The lead-in (2 s of the room), then the word in capture-sized pieces, then a second of room.
        wake.begin()
        let start = wake.samplesFed
        wake.feed(quiet + quiet)
        for piece in stride(from: 0, to: word.count, by: 1_024) { wake.feed(Array(word[piece..<min(word.count, piece + 1_024)])) }
        wake.feed(quiet)
        #expect(wake.finish() && wake.proposed)
        let end = try #require(wake.wakeEndSample) - start
        #expect(end > 32_000 && end <= 32_000 + Int64(word.count) + 16_000, "the word ends within the recording or the second after")
    }

    /// The listen thread streams every utterance through it: no allocation per block.
    @Test func feedingAllocatesNothing() throws {
        let model = try EmbeddingWakeModel.load(Self.modelPath)
        let weights = try Self.weights()
        let word = try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples
        let samples = EmbeddingSpotter.padded(word) + EmbeddingSpotter.padded(word)
        func stream(_ spotter: EmbeddingSpotter, _ buffer: UnsafeBufferPointer<Int16>) -> Int {
            var detections = 0
            var offset = 0
            while offset < buffer.count {
                let n = min(480, buffer.count - offset)
                spotter.feed(UnsafeBufferPointer(rebasing: buffer[offset..<offset + n])) { _, _ in detections += 1 }
                offset += n
            }
            return detections
        }
        let spotter = EmbeddingSpotter(model: model, weights: weights)
        let detections = samples.withUnsafeBufferPointer { buffer in
            // Another spotter on the same path first: the runtime makes a type's metadata once per process.
            _ = stream(EmbeddingSpotter(model: model, weights: weights), buffer)
            let before = parley_malloc_count_current_thread()
            let detections = stream(spotter, buffer)
            let after = parley_malloc_count_current_thread()
            #expect(after == before, "\(after - before) allocations")
            return detections
        }
        #expect(detections == 2)
    }

    @Test func sensitivityMovesTheThreshold() throws {
        let model = try EmbeddingWakeModel.load(Self.modelPath)
        let weights = try Self.weights()
        #expect(EmbeddingSpotter(model: model, weights: weights).threshold == model.threshold)
        #expect(EmbeddingSpotter(model: model, weights: weights, sensitivity: 1).threshold < model.threshold)
        #expect(EmbeddingSpotter(model: model, weights: weights, sensitivity: 0).threshold > model.threshold)
    }
}

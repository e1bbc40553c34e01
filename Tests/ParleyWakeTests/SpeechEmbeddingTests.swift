import Foundation
import ParleyAudio
import ParleyTestKit
import Testing

@testable import ParleyWake

/// The Swift port of speech_embedding against the wheel's own TFLite
/// models (Tests/Fixtures/wake-computer/embedding-reference.json, written by
/// `python -m parley_training.fixtures`), and the model files' checks.
@Suite struct SpeechEmbeddingTests {
    struct Reference: Decodable {
        var recording: String
        var mel: [[Float]]
        var embeddings: [[Float]]
    }

    static func reference() throws -> Reference {
        let url = try Fixtures.require(Fixtures.root.appendingPathComponent("wake-computer/embedding-reference.json"))
        return try JSONDecoder().decode(Reference.self, from: Data(contentsOf: url))
    }

    static func weights() throws -> SpeechEmbeddingWeights {
        try SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate())
    }

    static func embeddings(of samples: [Int16], pieces: [Int], weights: SpeechEmbeddingWeights) -> [[Float]] {
        let net = SpeechEmbedding(weights: weights)
        var out: [[Float]] = []
        var at = 0, p = 0
        samples.withUnsafeBufferPointer { all in
            while at < all.count {
                let n = min(pieces[p % pieces.count], all.count - at)
                net.feed(UnsafeBufferPointer(rebasing: all[at..<(at + n)])) { out.append(Array($0)) }
                at += n
                p += 1
            }
        }
        return out
    }

    @Test func streamedEmbeddingsMatchTheTFLiteModelsWindowByWindow() throws {
        let ref = try Self.reference()
        let samples = try WAVFile.read(Fixtures.root.appendingPathComponent(ref.recording)).samples
        let weights = try Self.weights()
        // Uneven pieces, as the capture loop's blocks come: the stream must not care.
        let got = Self.embeddings(of: samples, pieces: [160, 1_000, 37, 4_096], weights: weights)
        #expect(got.count == ref.embeddings.count)
        var worst: Float = 0, largest: Float = 0
        for (g, r) in zip(got, ref.embeddings) {
            #expect(g.count == 96)
            for (a, b) in zip(g, r) {
                worst = max(worst, abs(a - b))
                largest = max(largest, abs(b))
            }
        }
        // The reference is rounded to 4 decimals; float sums in another order differ by less.
        #expect(largest > 1, "the reference holds real activations, not zeros")
        #expect(worst < 2e-3 * max(1, largest), "largest difference \(worst) against values up to \(largest)")
    }

    @Test func resetStartsANewStreamWithTheSameNumbers() throws {
        let ref = try Self.reference()
        let samples = try WAVFile.read(Fixtures.root.appendingPathComponent(ref.recording)).samples
        let net = SpeechEmbedding(weights: try Self.weights())
        var first: [[Float]] = [], second: [[Float]] = []
        samples.withUnsafeBufferPointer { net.feed($0) { first.append(Array($0)) } }
        net.reset()
        samples.withUnsafeBufferPointer { net.feed($0) { second.append(Array($0)) } }
        #expect(first.count == ref.embeddings.count)
        #expect(first == second)
    }

    @Test func tooShortForOneWindowGivesNoEmbedding() throws {
        let net = SpeechEmbedding(weights: try Self.weights())
        var count = 0
        // One window needs 76 mel frames: 12,512 samples of calls 1,280 apart.
        let samples = [Int16](repeating: 100, count: 12_000)
        samples.withUnsafeBufferPointer { net.feed($0) { _ in count += 1 } }
        #expect(count == 0)
        let more = [Int16](repeating: 100, count: 2_000)
        more.withUnsafeBufferPointer { net.feed($0) { _ in count += 1 } }
        #expect(count == 1)
    }

    @Test func aMissingFolderNamesWhatWasSearched() {
        #expect(throws: WakeModelError.assetsMissing(searched: ["/nonexistent/se"])) {
            try SpeechEmbeddingAssets.locate(in: ["/nonexistent/se"])
        }
    }

    @Test func aTruncatedModelIsRefusedWithItsPath() throws {
        let folder = try SpeechEmbeddingAssets.locate()
        let dir = try TemporaryDirectory()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + SpeechEmbeddingAssets.embeddingName))
        try bytes.prefix(bytes.count / 3).write(to: dir.url.appendingPathComponent(SpeechEmbeddingAssets.embeddingName))
        try Data(contentsOf: URL(fileURLWithPath: folder + "/" + SpeechEmbeddingAssets.melName))
            .write(to: dir.url.appendingPathComponent(SpeechEmbeddingAssets.melName))
        do {
            _ = try SpeechEmbeddingWeights(folder: dir.url.path)
            Issue.record("a truncated model was accepted")
        } catch {
            #expect(error.description.contains(dir.url.path + "/" + SpeechEmbeddingAssets.embeddingName))
        }
    }

    @Test func garbageIsNotATFLiteModel() throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("x.tflite").path
        try Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }).write(to: URL(fileURLWithPath: path))
        #expect(throws: WakeModelError.self) { try TFLiteFile(path: path) }
    }

    /// The mel stage takes its power spectrum from an FFT, which holds only
    /// while the model's kernels are a window times the DFT: a kernel that
    /// is not is refused by name, whichever tensor carries the cosines.
    @Test func theMelModelMustBeAWindowedDFT() throws {
        let n = SpeechEmbeddingWeights.fft, bins = SpeechEmbeddingWeights.bins
        let hann = (0..<n).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n))) }
        var cosine = [Float](repeating: 0, count: bins * n), sine = cosine
        for k in 0..<bins {
            for t in 0..<n {
                let angle = 2 * Double.pi * Double((k * t) % n) / Double(n)
                cosine[k * n + t] = hann[t] * Float(cos(angle))
                sine[k * n + t] = -hann[t] * Float(sin(angle))
            }
        }
        let zero = [Float](repeating: 0, count: bins)
        #expect(try SpeechEmbeddingWeights.dftWindow(real: cosine, imag: sine, bias: zero, path: "m") == hann)
        #expect(try SpeechEmbeddingWeights.dftWindow(real: sine, imag: cosine, bias: zero, path: "m") == hann)
        var bent = cosine
        bent[7 * n + 100] += 0.01
        #expect(throws: WakeModelError.self) { try SpeechEmbeddingWeights.dftWindow(real: bent, imag: sine, bias: zero, path: "m") }
        var biased = zero
        biased[3] = 0.5
        do {
            _ = try SpeechEmbeddingWeights.dftWindow(real: cosine, imag: sine, bias: biased, path: "/x/mel.tflite")
            Issue.record("a DFT with a bias was taken for a windowed DFT")
        } catch {
            #expect(error.description.contains("/x/mel.tflite"))
        }
    }
}

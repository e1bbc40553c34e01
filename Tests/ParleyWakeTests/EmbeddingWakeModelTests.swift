import Foundation
import ParleyAudio
import ParleyTestKit
import Testing

@testable import ParleyWake

/// Wake head files: what is refused and how it is named, and the shipped
/// head's scores against the Python trainer's (head-scores.json, written by
/// `python -m parley_training.fixtures` from the TFLite reference embeddings).
@Suite struct EmbeddingWakeModelTests {
    static func head(context: Int = 2, hidden: Int = 3, kind: String = "speech-embedding-head", rows: Int? = nil) -> [String: Any] {
        let inputs = context * 96
        return [
            "kind": kind, "name": "test", "context": context, "dims": 96, "threshold": 1.5,
            "mean": [Double](repeating: 0, count: inputs), "scale": [Double](repeating: 1, count: inputs),
            "layers": [
                ["weights": [[Double]](repeating: [Double](repeating: 0.01, count: inputs), count: rows ?? hidden),
                 "bias": [Double](repeating: 0, count: hidden)],
                ["weights": [[Double](repeating: 1, count: hidden)], "bias": [0.5]],
            ],
        ]
    }

    static func write(_ object: [String: Any], in dir: TemporaryDirectory) throws -> String {
        let path = dir.url.appendingPathComponent("head.json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aWellFormedHeadLoads() throws {
        let dir = try TemporaryDirectory()
        let model = try EmbeddingWakeModel.load(try Self.write(Self.head(), in: dir))
        #expect(model.context == 2)
        #expect(model.threshold == 1.5)
        #expect(model.layers.count == 2)
    }

    @Test func aHeadOfAnotherKindIsRefusedNamingTheKind() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.write(Self.head(kind: "pcen"), in: dir)
        #expect(throws: WakeModelError.headInvalid(path: path, reason: "kind is \"pcen\", expected \"speech-embedding-head\"")) {
            try EmbeddingWakeModel.load(path)
        }
    }

    @Test func layersThatDoNotChainAreRefused() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.write(Self.head(hidden: 3, rows: 4), in: dir)
        do {
            _ = try EmbeddingWakeModel.load(path)
            Issue.record("a head whose rows do not match its biases was accepted")
        } catch {
            #expect(error.description.hasPrefix(path + ": not a wake head"))
        }
    }

    @Test func notJSONIsRefusedWithThePath() throws {
        let dir = try TemporaryDirectory()
        let path = dir.url.appendingPathComponent("head.json").path
        try Data("{\"kind\": ".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: WakeModelError.self) { try EmbeddingWakeModel.load(path) }
        #expect(throws: WakeModelError.unreadable(path: path + ".missing")) { try EmbeddingWakeModel.load(path + ".missing") }
    }

    @Test func paddingIsQuietDeterministicAndASecondEachSide() {
        let word = [Int16](repeating: 1_000, count: 100)
        let a = EmbeddingSpotter.padded(word), b = EmbeddingSpotter.padded(word)
        #expect(a == b)
        #expect(a.count == 32_100)
        #expect(Array(a[16_000..<16_100]) == word)
        let floor = a[0..<16_000].map { Double($0) * Double($0) }.reduce(0, +) / 16_000
        #expect(floor > 4 && floor < 16, "about 3 units rms, got \(floor.squareRoot())")
    }
}

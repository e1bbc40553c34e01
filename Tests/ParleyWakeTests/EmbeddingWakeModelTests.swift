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

    /// A head with members in place of layers, each `weight` everywhere in its first layer and `bias` out.
    static func ensemble(context: Int = 2, members: [(weight: Double, bias: Double)]) -> [String: Any] {
        var doc = head(context: context)
        doc.removeValue(forKey: "layers")
        doc["members"] = members.map { m in
            ["layers": [
                ["weights": [[Double]](repeating: [Double](repeating: m.weight, count: context * 96), count: 3),
                 "bias": [Double](repeating: 0, count: 3)],
                ["weights": [[Double](repeating: 1, count: 3)], "bias": [m.bias]],
            ]]
        }
        return doc
    }

    @Test func anEnsembleLoadsAndASingleHeadIsOneMember() throws {
        let dir = try TemporaryDirectory()
        let model = try EmbeddingWakeModel.load(try Self.write(Self.ensemble(members: [(0.01, 0.5), (0.02, -1)]), in: dir))
        #expect(model.members.count == 2)
        #expect(model.layers.count == 2)
        let single = try EmbeddingWakeModel.load(try Self.write(Self.head(), in: dir))
        #expect(single.members.count == 1)
    }

    /// The ensemble's score is its members' mean logit, window by window.
    @Test func anEnsembleScoresTheMeanOfItsMembers() throws {
        let dir = try TemporaryDirectory()
        let weights = try SpeechEmbeddingTests.weights()
        let a = (weight: 0.01, bias: 0.5), b = (weight: -0.02, bias: -1.0)
        let load = { (doc: [String: Any]) in try EmbeddingWakeModel.load(try Self.write(doc, in: dir)) }
        let samples = EmbeddingSpotter.padded((0..<8_000).map { Int16(2_000 * sin(Double($0) * 0.05)) })
        let sa = EmbeddingSpotter.scores(of: samples, model: try load(Self.ensemble(members: [a])), weights: weights)
        let sb = EmbeddingSpotter.scores(of: samples, model: try load(Self.ensemble(members: [b])), weights: weights)
        let both = EmbeddingSpotter.scores(of: samples, model: try load(Self.ensemble(members: [a, b])), weights: weights)
        #expect(both.count == sa.count && !both.isEmpty)
        #expect(zip(sa, sb).contains { abs($0 - $1) > 0.1 }, "two different members")
        for i in both.indices { #expect(abs(both[i] - (sa[i] + sb[i]) / 2) < 1e-4) }
    }

    @Test func layersAndMembersTogetherOrNoMembersAreRefused() throws {
        let dir = try TemporaryDirectory()
        var both = Self.ensemble(members: [(0.01, 0.5)])
        both["layers"] = Self.head()["layers"]
        var none = Self.ensemble(members: [])
        none["members"] = [Any]()
        for doc in [both, none] {
            let path = try Self.write(doc, in: dir)
            #expect(throws: WakeModelError.self) { try EmbeddingWakeModel.load(path) }
        }
    }

    @Test func aMemberThatDoesNotChainIsNamed() throws {
        let dir = try TemporaryDirectory()
        var doc = Self.ensemble(members: [(0.01, 0.5), (0.01, 0.5)])
        var members = doc["members"] as! [[String: Any]]
        members[1] = ["layers": Self.head(rows: 4)["layers"]!]
        doc["members"] = members
        let path = try Self.write(doc, in: dir)
        do {
            _ = try EmbeddingWakeModel.load(path)
            Issue.record("a member whose rows do not match its biases was accepted")
        } catch {
            #expect(error.description.hasPrefix(path + ": not a wake head"))
        }
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

import CParleyMallocCounter
import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
@testable import ParleySpeech
import Testing

/// The wake word's keyword network in Swift against training/parley_training/kws.py,
/// which trained it and measured it by folds: the same features and
/// network give the same scores, so the held-out figures carry over.
@Suite struct KeywordSpotterTests {
    static var modelPath: String { Fixtures.packageRoot.appendingPathComponent(KeywordModel.sourceWakeFolder + "/computer.json").path }
    static var referencePath: URL { Fixtures.root.appendingPathComponent("wake-computer/kws-scores.jsonl") }

    struct Reference: Decodable {
        var file: String
        var scores: [Double]
    }

    static func references() throws -> (sha: String, rows: [Reference]) {
        let lines = try String(contentsOf: try Fixtures.require(referencePath), encoding: .utf8).split(separator: "\n")
        let header = try JSONDecoder().decode([String: String].self, from: Data(lines[0].utf8))
        return (header["model_sha256"] ?? "", try lines.dropFirst().map { try JSONDecoder().decode(Reference.self, from: Data($0.utf8)) })
    }

    static func fixture(_ name: String) throws -> URL {
        for folder in [Fixtures.wakeComputer, Fixtures.coffeeClean, Fixtures.root.appendingPathComponent("noise")] {
            let url = folder.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: url.path) { return url }
        }
        throw SpeechError.badSetting(name: "fixture", value: name, expected: "a file of Tests/Fixtures")
    }

    static func sha256(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: out, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    @Test func scoresMatchThePythonReference() throws {
        let model = try KeywordModel.load(Self.modelPath)
        let (sha, rows) = try Self.references()
        let digest = try Self.sha256(Self.modelPath)
        #expect(digest == sha, "model/wake/computer.json changed since its reference scores: run training/bin/train-wake-kws.sh")
        #expect(rows.count == 4)
        for row in rows {
            let audio = try PCMAudio.read(try Self.fixture(row.file))
            let scores = KeywordSpotter.scores(of: audio.samples, model: model)
            #expect(scores.count == row.scores.count, "\(row.file)")
            let worst = zip(scores, row.scores).map { abs($0 - $1) }.max() ?? .infinity
            // Logits reach about 30; float32 sums in another order differ in the fourth decimal.
            #expect(worst < 0.02, "\(row.file): largest difference \(worst)")
        }
    }

    @Test func detectsTheWordInRecordingsAndNotInNoiseOrAnOrder() throws {
        let model = try KeywordModel.load(Self.modelPath)
        let spotter = KeywordSpotter(model: model)
        var found = 0
        let files = try Fixtures.wavFiles(in: Fixtures.wakeComputer, atLeast: 10).prefix(10)
        for file in files {
            spotter.reset()
            let samples = try PCMAudio.read(file).samples
            let times = spotter.process(samples)
            #expect(times.count <= 1, "\(file.lastPathComponent): one word, at most one detection")
            if let t = times.first {
                found += 1
                // The word's end: within the recording, after its first 0.3 s.
                #expect(t > 0.3 && t <= Double(samples.count) / 16_000 + 0.05, "\(file.lastPathComponent) at \(t) s")
            }
        }
        #expect(found >= 9, "found \(found) of 10 clean recordings")
        spotter.reset()
        #expect(spotter.process(try PCMAudio.read(Fixtures.require(Fixtures.kitchenNoise)).samples).isEmpty)
    }

    @Test func streamingInAnyPiecesGivesTheSameDetections() throws {
        let model = try KeywordModel.load(Self.modelPath)
        let file = try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!
        let samples = [Int16](repeating: 0, count: 8_000) + (try PCMAudio.read(file).samples) + [Int16](repeating: 0, count: 20_000)
            + (try PCMAudio.read(file).samples)
        let whole = KeywordSpotter(model: model).process(samples)
        #expect(whole.count == 2, "the word twice, over a second apart")
        let spotter = KeywordSpotter(model: model)
        var pieces: [Double] = []
        var at = 0
        var size = 1
        while at < samples.count {
            let end = min(samples.count, at + size)
            pieces += spotter.process(Array(samples[at..<end]))
            at = end
            size = size * 3 % 4_001 + 1
        }
        #expect(pieces == whole)
    }

    /// Streaming costs no allocation once made: features, network and
    /// detections reuse their buffers (the listen thread runs it on every
    /// commands utterance).
    @Test func feedingAllocatesNothing() throws {
        let model = try KeywordModel.load(Self.modelPath)
        let file = try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!
        let samples = try PCMAudio.read(file).samples + [Int16](repeating: 0, count: 16_000) + (try PCMAudio.read(file).samples)
        func stream(_ spotter: KeywordSpotter, _ buffer: UnsafeBufferPointer<Int16>) -> Int {
            var detections = 0
            var offset = 0
            while offset < buffer.count {
                let n = min(1_600, buffer.count - offset)
                spotter.feed(UnsafeBufferPointer(rebasing: buffer[offset..<offset + n])) { _, _ in detections += 1 }
                offset += n
            }
            return detections
        }
        let spotter = KeywordSpotter(model: model)
        let detections = samples.withUnsafeBufferPointer { buffer in
            // Another spotter on the same path first: the first use of a type
            // makes the runtime's metadata for it, once per process.
            _ = stream(KeywordSpotter(model: model), buffer)
            let before = parley_malloc_count_current_thread()
            let detections = stream(spotter, buffer)
            let after = parley_malloc_count_current_thread()
            #expect(after == before, "\(after - before) allocations")
            return detections
        }
        #expect(detections == 2)
    }

    @Test func sensitivityMovesTheThreshold() throws {
        let model = try KeywordModel.load(Self.modelPath)
        #expect(KeywordSpotter(model: model).threshold == model.threshold)
        #expect(KeywordSpotter(model: model, sensitivity: 1).threshold < model.threshold)
        #expect(KeywordSpotter(model: model, sensitivity: 0).threshold > model.threshold)
    }

    @Test func badModelFilesNameTheFileAndTheProblem() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("none.json").path
        #expect(throws: SpeechError.self) { try KeywordModel.load(missing) }
        do { _ = try KeywordModel.load(missing) } catch { #expect("\(error)".contains(missing)) }

        let garbled = folder.appendingPathComponent("garbled.json")
        try Data("{\"word\": \"computer\"".utf8).write(to: garbled)
        do {
            _ = try KeywordModel.load(garbled.path)
            Issue.record("a truncated file loaded")
        } catch { #expect("\(error)".contains("garbled.json")) }

        // A layer whose rows do not fit the inputs.
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.modelPath))) as! [String: Any]
        var members = json["members"] as! [[String: Any]]
        var layers = members[0]["layers"] as! [[String: Any]]
        layers.removeFirst()
        members[0]["layers"] = layers
        json["members"] = members
        let wrong = folder.appendingPathComponent("wrong.json")
        try JSONSerialization.data(withJSONObject: json).write(to: wrong)
        do {
            _ = try KeywordModel.load(wrong.path)
            Issue.record("a network with a layer missing loaded")
        } catch { #expect("\(error)".contains("wrong.json") && "\(error)".contains("1024 inputs per row")) }
    }

    @Test func theUtteranceDecoderSaysWhereTheWordEnded() throws {
        let model = try KeywordModel.load(Self.modelPath)
        let wake = KeywordWakeUtterance(KeywordSpotter(model: model))
        let word = try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples
        // Something before, then an utterance of silence and the word.
        wake.begin()
        wake.feed([Int16](repeating: 0, count: 16_000))
        #expect(!wake.finish())
        wake.begin()
        let lead = [Int16](repeating: 0, count: wake.leadInSamples)
        for piece in stride(from: 0, to: word.count, by: 1_600) { wake.feed(Array(word[piece..<min(word.count, piece + 1_600)])) }
        wake.feed(lead)
        #expect(wake.finish() && wake.proposed)
        let end = try #require(wake.wakeEndSample)
        #expect(end > 16_000 && end <= 16_000 + Int64(word.count))
        #expect(wake.samplesFed == Int64(16_000 + word.count + lead.count))
    }
}

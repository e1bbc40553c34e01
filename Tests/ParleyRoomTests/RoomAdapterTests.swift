import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing

@testable import ParleyRoom
@testable import ParleySpeech

/// Room adaptation with the real tools: sphinx_fe, bw and mllr_solve on
/// labelled speech, and the transform swapped into running decoders.
@Suite(.serialized) struct RoomAdapterTests {
    /// Debian's en-us model with the training files bw needs, made once by
    /// the project's script (the adapted model ships them itself).
    static let model: Result<String, any Error> = Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-room-model-\(getpid())")
        let script = Fixtures.packageRoot.appendingPathComponent("scripts/adapt/training-files.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path, folder.path]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw RoomAdaptationError("training-files.sh failed") }
        return folder.path
    }

    static let sentences = [
        "can i have a medium roast latte", "i would like a large mocha with milk", "make me a small house coffee",
        "can i get a dark roast americano", "order a twelve ounce cappuccino", "a light roast coffee with sugar please",
    ]

    /// Synthetic speech of known words, in one folder as kept audio is.
    func recordings(_ count: Int, in folder: URL) throws -> [KeptRecordings.Recording] {
        let kept = KeptRecordings(directory: folder, limit: 100)
        let synth = try SpeechSynthesizer()
        for sentence in Self.sentences.prefix(count) {
            try kept.keep(try synth.render16k(sentence).samples, sampleRate: 16_000, words: sentence)
        }
        return try kept.recordings()
    }

    @Test func aTransformIsEstimatedAndSwappedIntoRunningDecodersAndBackOut() throws {
        let model = try Self.model.get()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("parley-room-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let list = try recordings(6, in: scratch.appendingPathComponent("kept"))
        let output = scratch.appendingPathComponent("room.mllr")
        let outcome = try RoomAdapter(model: model).adapt(list, work: scratch.appendingPathComponent("work"), output: output)
        #expect(outcome.recordings == 6)
        #expect(outcome.seconds > 6)
        let text = try String(contentsOf: output, encoding: .utf8)
        #expect(MLLRFile.isWellFormed(text))
        #expect(text.hasPrefix("1\n3\n13\n"))  // one class, the model's three streams of 13
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("work/mllr_matrix").path))

        // A shift-only transform leaves the matrix the identity and moves the means.
        let shiftFile = scratch.appendingPathComponent("shift.mllr")
        _ = try RoomAdapter(model: model, kind: .shift).adapt(list, work: scratch.appendingPathComponent("work"), output: shiftFile)
        let numbers = try String(contentsOf: shiftFile, encoding: .utf8).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        let matrix = numbers[3..<(3 + 169)], shift = numbers[(3 + 169)..<(3 + 169 + 13)]
        #expect(matrix.enumerated().allSatisfy { i, v in v == ((i / 13 == i % 13) ? 1 : 0) })
        #expect(shift.contains { $0 != 0 })

        // Decoders on that model: one following the room, one not (the wake
        // detector's kind), one on another model.
        let words = Self.sentences[0].split(separator: " ").map(String.init)
        let phrases = PhraseModel(rules: [PhraseRule(id: "said", target: .answer, body: .words(words))])
        let graph = try GrammarCompiler().graph(for: phrases)
        let slot = RoomTransform.Slot()
        func decoder(_ folder: String, follows: Bool) throws -> SphinxDecoder {
            var settings = DecoderSettings()
            settings.acousticModel = folder
            settings.room = follows ? slot : nil
            let decoder = try SphinxDecoder(settings: settings, words: Set(words))
            try decoder.setGrammar(name: "g", graph: graph)
            try decoder.use("g")
            return decoder
        }
        let room = try decoder(model, follows: true), wake = try decoder(model, follows: false)
        let other = try decoder(AcousticModel.stockFolder, follows: true)
        let audio = try WAVFile.read(list[0].audio).samples
        func scores() throws -> [Int32] { try [room, wake, other].map { try #require(try $0.decode(audio)).score } }
        // The first utterance moves the decoders' noise estimate; from the
        // second on the same audio scores the same.
        _ = try scores()
        let before = try scores()
        slot.use(output.path, model: model)
        let adapted = try scores()
        // Adapted on this very speech, the transform fits it much better.
        #expect(adapted[0] > before[0], "room decoder: \(before[0]) before, \(adapted[0]) with the transform")
        #expect(adapted[1] == before[1] && adapted[2] == before[2])
        #expect(room.roomTransformProblem == nil)
        // Forgotten: back to the model's own means, exactly.
        slot.use(nil, model: nil)
        #expect(try scores() == before)
    }

    @Test func tooFewRecordingsOrAModelWithoutTrainingFilesAreRefusedByName() throws {
        let model = try Self.model.get()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("parley-room-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let list = try recordings(RoomAdapter.minimumRecordings, in: scratch.appendingPathComponent("kept"))
        let output = scratch.appendingPathComponent("room.mllr")
        #expect { try RoomAdapter(model: model).adapt(Array(list.prefix(4)), work: scratch, output: output) } throws: {
            "\($0)".contains("4 confirmed recordings kept") && "\($0)".contains("at least 5")
        }
        #expect { try RoomAdapter(model: AcousticModel.stockFolder).adapt(list, work: scratch, output: output) } throws: {
            "\($0)".contains(AcousticModel.stockFolder) && "\($0)".contains("mdef.txt")
        }
        // Words bw cannot align (audio that is not what the words say) fail
        // with the tool named, and leave no transform behind.
        var wrong = list
        wrong[0].audio = scratch.appendingPathComponent("missing.wav")
        #expect(throws: (any Error).self) { try RoomAdapter(model: model).adapt(wrong, work: scratch.appendingPathComponent("w"), output: output) }
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// With the neural front end the decoder hears denoised audio, so the
    /// transform is estimated on denoised copies of the kept recordings
    /// (kept as captured): written beside the work, each as long as its
    /// recording and not the same samples, and the transform is another.
    @Test func withTheNeuralFrontEndTheTransformIsEstimatedOnDenoisedCopies() throws {
        let model = try Self.model.get()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("parley-room-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let kitchen = try PCMAudio.read(Fixtures.kitchenNoise).samples
        let kept = KeptRecordings(directory: scratch.appendingPathComponent("kept"), limit: 100)
        let synth = try SpeechSynthesizer()
        for (i, sentence) in Self.sentences.enumerated() {
            let noisy = NoiseMixer.mix(speech: try synth.render16k(sentence).samples, noise: kitchen, snrDB: 6, seed: UInt64(i))
            try kept.keep(noisy, sampleRate: 16_000, words: sentence)
        }
        let list = try kept.recordings()
        let raw = scratch.appendingPathComponent("raw.mllr"), denoised = scratch.appendingPathComponent("denoised.mllr")
        _ = try RoomAdapter(model: model).adapt(list, work: scratch.appendingPathComponent("work-raw"), output: raw)
        let outcome = try RoomAdapter(model: model, frontEnd: .neural)
            .adapt(list, work: scratch.appendingPathComponent("work"), output: denoised)
        #expect(outcome.recordings == list.count)
        for recording in list {
            let original = try WAVFile.read(recording.audio).samples
            let copy = try WAVFile.read(scratch.appendingPathComponent("work/denoised/\(recording.audio.lastPathComponent)")).samples
            #expect(copy.count == original.count)
            #expect(copy != original)
        }
        let text = try String(contentsOf: denoised, encoding: .utf8)
        #expect(MLLRFile.isWellFormed(text))
        #expect(text != (try String(contentsOf: raw, encoding: .utf8)), "the same transform from raw and denoised audio")
    }
}

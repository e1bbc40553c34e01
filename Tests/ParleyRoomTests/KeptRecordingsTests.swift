import Foundation
import ParleyAudio
import ParleySpeech
import Testing

@testable import ParleyRoom

/// The kept confirmed audio: numbered WAV and words files, bounded, deleted whole.
@Suite struct KeptRecordingsTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-kept-\(UUID().uuidString)")

    func tone(_ seconds: Double) -> [Int16] {
        (0..<Int(seconds * 16_000)).map { Int16(3_000 * sin(Double($0) * 0.1)) }
    }

    @Test func keptAudioIsReadBackWithItsWordsOldestFirst() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = KeptRecordings(directory: folder, limit: 10)
        try kept.keep(tone(0.5), sampleRate: 16_000, words: "hey  order a latte\n")
        try kept.keep(tone(0.25), sampleRate: 16_000, words: "large")
        let all = try kept.recordings()
        #expect(all.map(\.words) == ["hey order a latte", "large"])
        #expect(all.map(\.name) == ["00000001", "00000002"])
        let (samples, rate) = try WAVFile.read(all[0].audio)
        #expect(rate == 16_000 && samples.count == 8_000)
    }

    @Test func theOldestGoOverTheLimitAndDeleteAllTakesEverything() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = KeptRecordings(directory: folder, limit: 3)
        for i in 1...5 { try kept.keep(tone(0.1), sampleRate: 16_000, words: "order \(i)") }
        #expect(try kept.recordings().map(\.words) == ["order 3", "order 4", "order 5"])
        // A file that is not Parley's stays; ours go.
        try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        #expect(try kept.deleteAll() == 3)
        #expect(try kept.recordings().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.txt"])
    }

    @Test func audioLeftWithoutWordsIsNeverUsedAndIsCleanedUp() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = KeptRecordings(directory: folder, limit: 10)
        try kept.keep(tone(0.1), sampleRate: 16_000, words: "first")
        // As after a crash between the audio and its words.
        try Data("RIFF".utf8).write(to: folder.appendingPathComponent("00000002.wav"))
        #expect(try kept.recordings().map(\.words) == ["first"])
        #expect(kept.count == 1)
        try kept.keep(tone(0.1), sampleRate: 16_000, words: "third")
        #expect(try kept.recordings().map(\.name) == ["00000001", "00000003"])
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("00000002.wav").path))
    }

    @Test func aRecordingWithoutWordsIsRefused() {
        let kept = KeptRecordings(directory: folder, limit: 10)
        #expect { try kept.keep(tone(0.1), sampleRate: 16_000, words: "  ") } throws: { "\($0)".contains("needs its words") }
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }

    @Test func transformFilesAreCheckedForShape() {
        let identity = RoomTransform.identityText(streamLengths: [13, 13, 13])
        #expect(MLLRFile.isWellFormed(identity))
        #expect(!MLLRFile.isWellFormed("1\n1\n3\n1 0 0\n0 1 0\n"))  // cut short
        #expect(!MLLRFile.isWellFormed("one\n"))
        #expect(!MLLRFile.isWellFormed(""))
    }
}

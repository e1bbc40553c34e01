import Foundation
import ParleyAudio
import Synchronization

/// The audio of commands a person confirmed with the button, kept as
/// labelled recordings of this household in this room (only when
/// `adaptation.keep_audio` allows it): `NNNNNNNN.wav` (16-bit mono) and
/// `NNNNNNNN.txt` (the words the recogniser heard, which the confirmation
/// vouches for) in one folder under the state directory. At most `limit`
/// are kept; the oldest go first.
public final class KeptRecordings: Sendable {
    public struct Recording: Sendable, Equatable {
        public var audio: URL
        public var words: String
        public init(audio: URL, words: String) { self.audio = audio; self.words = words }
        /// The file name without extension, also its id in sphinxtrain's lists.
        public var name: String { audio.deletingPathExtension().lastPathComponent }
    }

    public let directory: URL
    public let limit: Int
    /// Writers and deleters take turns: numbering and the limit need one view.
    private let lock = Mutex(())

    public init(directory: URL, limit: Int) {
        self.directory = directory
        self.limit = max(1, limit)
    }

    /// Keeps one confirmed command. The words are written after the audio,
    /// so a recording without words (a crash between the two) is never used
    /// and is removed with the next keep.
    @discardableResult
    public func keep(_ samples: [Int16], sampleRate: Int, words: String) throws -> Recording {
        let words = words.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard !words.isEmpty else { throw KeptRecordingsError("a kept recording needs its words; none were given") }
        return try lock.withLock { _ in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let existing = try numbered()
            let next = (existing.last?.number ?? 0) + 1
            let name = String(format: "%08d", next)
            let audio = directory.appendingPathComponent(name + ".wav")
            try WAVFile.write(samples, sampleRate: sampleRate, to: audio)
            try (words + "\n").write(to: directory.appendingPathComponent(name + ".txt"), atomically: true, encoding: .utf8)
            // Over the limit, and any audio left without words, goes.
            var complete = existing.filter(\.hasWords)
            for orphan in existing where !orphan.hasWords { remove(orphan.number) }
            while complete.count + 1 > limit, let oldest = complete.first {
                remove(oldest.number)
                complete.removeFirst()
            }
            return Recording(audio: audio, words: words)
        }
    }

    /// Every complete recording, oldest first.
    public func recordings() throws -> [Recording] {
        try lock.withLock { _ in
            try numbered().filter(\.hasWords).compactMap { entry in
                let name = String(format: "%08d", entry.number)
                let text = try String(contentsOf: directory.appendingPathComponent(name + ".txt"), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return text.isEmpty ? nil : Recording(audio: directory.appendingPathComponent(name + ".wav"), words: text)
            }
        }
    }

    /// How many complete recordings there are (from the folder listing
    /// alone: `parley status` asks often).
    public var count: Int { lock.withLock { _ in ((try? numbered()) ?? []).filter(\.hasWords).count } }

    /// Deletes every kept recording; returns how many there were.
    @discardableResult
    public func deleteAll() throws -> Int {
        try lock.withLock { _ in
            let existing = try numbered()
            for entry in existing { remove(entry.number) }
            return existing.filter(\.hasWords).count
        }
    }

    /// Deletes one recording by the name `recordings()` gives it
    /// ("00000012"); false when there is none by that name. The name is
    /// looked up among the folder's own recordings, never used as a path.
    public func delete(_ name: String) -> Bool {
        lock.withLock { _ in
            guard let entry = ((try? numbered()) ?? []).first(where: { String(format: "%08d", $0.number) == name }) else { return false }
            remove(entry.number)
            return true
        }
    }

    private struct Entry { var number: Int; var hasWords: Bool }

    /// The numbered recordings in the folder (other files are not Parley's
    /// and are left alone), in order.
    private func numbered() throws -> [Entry] {
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let set = Set(names)
        return names.compactMap { name -> Entry? in
            guard name.hasSuffix(".wav"), name.count == 12, let number = Int(name.prefix(8)) else { return nil }
            return Entry(number: number, hasWords: set.contains(String(name.prefix(8)) + ".txt"))
        }.sorted { $0.number < $1.number }
    }

    private func remove(_ number: Int) {
        let name = String(format: "%08d", number)
        for ext in ["wav", "txt"] { try? FileManager.default.removeItem(at: directory.appendingPathComponent("\(name).\(ext)")) }
    }
}

public struct KeptRecordingsError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

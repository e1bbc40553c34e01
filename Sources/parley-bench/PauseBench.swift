import ArgumentParser
import Foundation
import ParleyAudio
import ParleyCore
import ParleySpeech

/// Test material for phrase-complete endpointing: commands in which the
/// person pauses between two words, as people do ("a large … latte with
/// milk"). Each recording is aligned against its own recognised words (the
/// coffee grammar's Viterbi path, ps_seg word frames: a forced alignment
/// to the transcript the decoder settles on), and `--variants` copies are
/// written, each with one pause of 200-800 ms spliced in at a word
/// boundary chosen at random (seeded). The pause is filled with the
/// recording's own background level (Gaussian noise at the RMS of its
/// quietest 50 ms), not digital silence, which no microphone records.
///
/// `manifest.json` in the output folder says, per written file, where the
/// pause is and where speech resumes after it (`resume_seconds`): an
/// endpointer that ends the command before that point has cut it short.
/// `progress` is how far the words before the pause have come through the
/// grammar (incomplete, extendable, complete).
struct Pauses: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pauses",
        abstract: "Write copies of 16 kHz mono commands with a 200-800 ms pause spliced in at a word boundary, plus manifest.json.")
    @Option(help: "Output folder (created).") var out: String
    @Option(help: "Copies per recording, each with its own pause.") var variants = 3
    @Option(help: "Shortest pause, ms.") var minimum = 200
    @Option(help: "Longest pause, ms.") var maximum = 800
    @Option(help: "Random seed.") var seed: UInt64 = 19
    @Option(help: "Grammar (Rhino context YAML) the words are aligned with.")
    var grammar = sharedData("coffee-maker/grammar.yaml").path
    @Argument(help: "WAV files.") var files: [String]

    struct Entry: Codable {
        var file: String
        var source: String
        var afterWord: Int
        var words: [String]
        var pauseSeconds: Double
        var pauseAtSeconds: Double
        var resumeSeconds: Double
        var progress: String
        /// Each word's start and end in the source recording (seconds).
        var wordTimes: [[Double]]
        enum CodingKeys: String, CodingKey {
            case file, source, words, progress
            case wordTimes = "word_times"
            case afterWord = "after_word", pauseSeconds = "pause_seconds", pauseAtSeconds = "pause_at_seconds"
            case resumeSeconds = "resume_seconds"
        }
    }

    func run() throws {
        guard minimum > 0, maximum >= minimum else { throw ValidationError("--minimum/--maximum: expected 0 < minimum <= maximum") }
        let model = try RhinoContext.load(URL(fileURLWithPath: grammar), app: "Coffee Maker")
        let progressIndex = PhraseProgressIndex(try GrammarCompiler().graph(for: model))
        let recognizer = try CommandRecognizer(model: model, rejection: nil)
        let folder = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var random = SplitMix64(seed: seed)
        var entries: [Entry] = []
        for file in files {
            let url = URL(fileURLWithPath: file)
            let (samples, rate) = try WAVFile.read(url)
            guard rate == 16_000 else { throw ValidationError("\(file): \(rate) Hz; expected 16 kHz mono") }
            guard try recognizer.decoder.decode(samples) != nil else { continue }
            let words = recognizer.decoder.segments().filter { !$0.isFiller && !RejectionModel.isFiller($0.word) }
            guard words.count >= 2 else { continue }
            let floorRMS = Self.quietestRMS(samples)
            for variant in 0..<variants {
                // Boundary after word k (0-based), between k and k+1.
                let k = Int(random.next() % UInt64(words.count - 1))
                let pauseMs = minimum + Int(random.next() % UInt64(maximum - minimum + 1))
                // Splice in the middle of whatever gap the alignment left between the words.
                let gapStart = (words[k].endFrame + 1) * 160
                let gapEnd = max(gapStart, words[k + 1].startFrame * 160)
                let at = min(samples.count, (gapStart + gapEnd) / 2)
                let pause = (0..<(pauseMs * 16)).map { _ in Int16(clamping: Int((Self.gaussian(&random) * floorRMS).rounded())) }
                let spliced = Array(samples[..<at]) + pause + Array(samples[at...])
                let name = url.deletingPathExtension().lastPathComponent + "-p\(variant).wav"
                try WAVFile.write(spliced, sampleRate: rate, to: folder.appendingPathComponent(name))
                let before = words[...k].map { Self.plain($0.word) }
                let progress: String = switch progressIndex.progress(before) {
                case .incomplete: "incomplete"
                case .extendable: "extendable"
                case .complete: "complete"
                }
                entries.append(Entry(
                    file: name, source: url.lastPathComponent, afterWord: k, words: words.map { Self.plain($0.word) },
                    pauseSeconds: Double(pauseMs) / 1000, pauseAtSeconds: Double(at) / 16_000,
                    resumeSeconds: Double(max(at, words[k + 1].startFrame * 160)) / 16_000 + Double(pauseMs) / 1000,
                    progress: progress,
                    wordTimes: words.map { [Double($0.startFrame) / 100, Double($0.endFrame + 1) / 100] }))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(entries).write(to: folder.appendingPathComponent("manifest.json"))
        let counts = Dictionary(grouping: entries, by: \.progress).mapValues(\.count)
        print("pauses: \(entries.count) files in \(out); words before the pause: "
              + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }

    /// A dictionary word without its pronunciation variant ("the(2)").
    static func plain(_ word: String) -> String {
        word.firstIndex(of: "(").map { String(word[..<$0]) } ?? word
    }

    /// A standard normal value (Box-Muller).
    static func gaussian(_ random: inout SplitMix64) -> Double {
        let u1 = max(Double(random.next() >> 11) / Double(1 << 53), 1e-12)
        let u2 = Double(random.next() >> 11) / Double(1 << 53)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    /// RMS of the quietest 50 ms window (the room between the words).
    static func quietestRMS(_ samples: [Int16]) -> Double {
        let window = 800
        guard samples.count >= window else { return 1 }
        var best = Double.infinity
        var start = 0
        while start + window <= samples.count {
            var energy = 0.0
            for s in samples[start..<(start + window)] { energy += Double(s) * Double(s) }
            best = min(best, energy / Double(window))
            start += window / 2
        }
        return max(1, best.squareRoot())
    }
}

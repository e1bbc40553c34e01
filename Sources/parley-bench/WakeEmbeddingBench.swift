import ArgumentParser
import Foundation
import ParleyAudio
import ParleySpeech
import ParleyWake

/// What the speech_embedding wake path costs: CPU time per second of audio
/// through the streamed network (and a head, when one is given), from
/// getrusage, so other load on the machine does not count. Prints one JSON
/// line: seconds of audio, CPU seconds, the share of one core it would
/// take in real time, and the embeddings made.
struct SpeechEmbeddingCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speech-embedding-cost",
        abstract: "CPU per second of audio of the speech_embedding network (and a wake head), one JSON line.")

    @Option(help: "A wake head (model/wake/<name>.embedding.json) scored on every window too.")
    var head: String?
    @Option(help: "Seconds of audio to stream (the files repeated).")
    var seconds = 60.0
    @Argument(help: "WAV files (16 kHz, 16-bit, mono).")
    var files: [String]

    func validate() throws {
        guard seconds > 0, seconds <= 36_000 else { throw ValidationError("--seconds \(seconds): expected 0 to 36000") }
        guard !files.isEmpty else { throw ValidationError("expected at least one WAV file") }
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    func run() throws {
        let weights = try SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate())
        var audio: [Int16] = []
        for file in files { audio += try PCMAudio.read(URL(fileURLWithPath: file)).samples }
        let total = Int(seconds * 16_000)
        let block = 1_024  // the capture loop's period
        let spotter = try head.map { EmbeddingSpotter(model: try EmbeddingWakeModel.load($0), weights: weights) }
        let net = SpeechEmbedding(weights: weights)
        var made = 0
        let start = Self.cpuSeconds()
        audio.withUnsafeBufferPointer { all in
            var fed = 0
            while fed < total {
                let at = fed % all.count
                let n = min(block, all.count - at, total - fed)
                let piece = UnsafeBufferPointer(rebasing: all[at..<(at + n)])
                if let spotter { spotter.feed(piece) { _, _ in } } else { net.feed(piece) { _ in made += 1 } }
                fed += n
            }
        }
        let cpu = Self.cpuSeconds() - start
        let line: [String: Any] = ["audio_seconds": seconds, "cpu_seconds": (cpu * 1000).rounded() / 1000,
                                   "core_share": (cpu / seconds * 10_000).rounded() / 10_000,
                                   "embeddings": spotter == nil ? made : Int(seconds * 12.5), "head": head ?? "none"]
        let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
    }
}

import ArgumentParser
import Foundation
import ParleySpeech

/// Every stage-1 candidate of the wake detector in each file, with its
/// stage-2 verification, one JSON line per file. The candidates do not
/// depend on the sensitivity, so scripts/eval-wake-cv.sh decodes each file
/// once, caches these lines and sweeps thresholds (and cross-validates them)
/// without decoding again.
struct SpeechWakeScores: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speech-wake-scores",
        abstract: "Stage-1 candidates of the wake detector with their stage-2 scores, one JSON line per file.")

    @Option(help: "Wake phrase (\"hey\" before it stays optional).")
    var wake = "computer"
    @Option(help: "Stage-1 keyword threshold.")
    var candidateThreshold = WakeDetector.candidateThreshold
    @Option(help: "Seconds of silence added before and after each file (a recording of the phrase alone, as in a stream).")
    var padSeconds = 0.0
    @Option(name: .customLong("set"), help: "Decoder setting override name=value (repeatable).")
    var overrides: [String] = []
    @Argument(help: "WAV files (16 kHz, 16-bit, mono); each is streamed from a fresh detector state.")
    var files: [String]

    func validate() throws {
        guard padSeconds >= 0, padSeconds <= 10 else { throw ValidationError("--pad-seconds \(padSeconds): expected 0 to 10") }
        guard candidateThreshold > 0, candidateThreshold < 1 else {
            throw ValidationError("--candidate-threshold \(candidateThreshold): expected a probability between 0 and 1")
        }
    }

    func run() throws {
        let detector = try WakeDetector(mode: .named(wake, heyOptional: true), settings: decoderSettings(overrides),
                                        candidateThreshold: candidateThreshold)
        let pad = [Int16](repeating: 0, count: Int(padSeconds * 16_000))
        for file in files {
            let audio = try PCMAudio.read(URL(fileURLWithPath: file))
            let start = DispatchTime.now().uptimeNanoseconds
            let candidates = try detector.candidates(in: PCMAudio(samples: pad + audio.samples + pad))
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let audioSeconds = Double(audio.samples.count + 2 * pad.count) / 16_000
            // -infinity (no path) is written as null: JSON has no infinities.
            func nats(_ x: Double) -> Any { x.isFinite ? (x * 100).rounded() / 100 : NSNull() }
            // [time, score, phrase frames, with "hey", likelihood ratio]
            let rows: [[Any]] = candidates.map {
                [round($0.time * 1000) / 1000, nats($0.score), $0.phraseFrames, $0.withHey, nats($0.likelihoodRatio)]
            }
            let line: [String: Any] = ["file": file, "seconds": audioSeconds, "pad": padSeconds,
                                       "rtf": (seconds / audioSeconds * 10_000).rounded() / 10_000, "candidates": rows]
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            emit(String(decoding: data, as: UTF8.self))
        }
    }
}

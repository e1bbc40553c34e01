import ArgumentParser
import Foundation
import ParleyAudio
import ParleySpeech

/// Every stage-1 candidate of the wake detector in each file, with its
/// stage-2 verification, one JSON line per file. The candidates do not
/// depend on the sensitivity, so training/bin/eval-wake-cv.sh decodes each file
/// once, caches these lines and sweeps thresholds (and cross-validates them)
/// without decoding again.
///
/// `--noise`/`--snr` mix each file (with its padding) with a seeded slice of
/// noise, as `parley-bench audio mix` does, so the noise also covers the
/// silence around the phrase; `--front-end` then runs the capture front end
/// over it (`FrontEndSource.processed`, the listen thread's blocks) before
/// the detector, a fresh state per file.
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
    @Option(help: "Noise WAV (16 kHz mono) mixed into each padded file at --snr.")
    var noise: String?
    @Option(help: "SNR in dB of --noise (peak-frame definition, as `audio mix`).")
    var snr = 10.0
    @Option(help: "Capture front end before the detector: none, denoise or denoise+agc (optionally :dB, as speech.front_end).")
    var frontEnd = "none"
    @Argument(help: "WAV files (16 kHz, 16-bit, mono); each is streamed from a fresh detector state.")
    var files: [String]

    func validate() throws {
        guard padSeconds >= 0, padSeconds <= 10 else { throw ValidationError("--pad-seconds \(padSeconds): expected 0 to 10") }
        guard candidateThreshold > 0, candidateThreshold < 1 else {
            throw ValidationError("--candidate-threshold \(candidateThreshold): expected a probability between 0 and 1")
        }
        guard snr.isFinite, (-20...60).contains(snr) else { throw ValidationError("--snr \(snr): expected dB from -20 to 60") }
        _ = try frontEndSettings()
    }

    /// FNV-1a of the file's name.
    static func seed(_ file: String) -> UInt64 {
        URL(fileURLWithPath: file).lastPathComponent.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    func frontEndSettings() throws -> FrontEndSettings {
        do { return try FrontEndSettings(parsing: frontEnd) } catch {
            throw ValidationError("--front-end \(frontEnd): \(error)")
        }
    }

    func run() throws {
        let detector = try WakeDetector(mode: .named(wake, heyOptional: true), settings: decoderSettings(overrides),
                                        candidateThreshold: candidateThreshold)
        let pad = [Int16](repeating: 0, count: Int(padSeconds * 16_000))
        let settings = try frontEndSettings()
        let noiseSamples = try noise.map { try PCMAudio.read(URL(fileURLWithPath: $0)).samples }
        for file in files {
            let audio = try PCMAudio.read(URL(fileURLWithPath: file))
            var samples = pad + audio.samples + pad
            if let noiseSamples, let noise {
                guard noiseSamples.count >= samples.count else {
                    throw ValidationError("""
                        --noise \(noise): \(noiseSamples.count) samples, shorter than \(file) with its padding \
                        (\(samples.count)); expected noise at least as long as every file
                        """)
                }
                // Seeded by the file's name, not its place in the list: the
                // same file gets the same slice of noise however the files
                // are split between jobs.
                samples = NoiseMixer.mix(speech: samples, noise: noiseSamples, snrDB: snr, seed: Self.seed(file))
            }
            let start = DispatchTime.now().uptimeNanoseconds
            // Timed with the detector: the front end runs on the device too.
            samples = try FrontEndSource.processed(samples, settings: settings)
            let candidates = try detector.candidates(in: PCMAudio(samples: samples))
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let audioSeconds = Double(audio.samples.count + 2 * pad.count) / 16_000
            // -infinity (no path) is written as null: JSON has no infinities.
            func nats(_ x: Double) -> Any { x.isFinite ? (x * 100).rounded() / 100 : NSNull() }
            // [time, score, phrase frames, with "hey", likelihood ratio]
            let rows: [[Any]] = candidates.map {
                [round($0.time * 1000) / 1000, nats($0.score), $0.phraseFrames, $0.withHey, nats($0.likelihoodRatio)]
            }
            // Per candidate, stage 2's evidence (WakeEvidence): [name ratio,
            // "hey" ratio or null, name frames, loop phones in the name,
            // phone distance, window SNR in dB].
            let evidence: [[Any]] = candidates.map {
                let e = $0.evidence
                return [nats(e.nameRatio), e.heyRatio.map(nats) ?? NSNull(), e.nameFrames, e.loopPhones,
                        (e.phoneDistance * 1000).rounded() / 1000, (e.snr * 10).rounded() / 10]
            }
            let line: [String: Any] = ["file": file, "seconds": audioSeconds, "pad": padSeconds,
                                       "rtf": (seconds / audioSeconds * 10_000).rounded() / 10_000, "candidates": rows,
                                       "evidence": evidence,
                                       "front_end": settings.description, "noise": noise ?? NSNull(),
                                       "snr": noise == nil ? NSNull() : snr]
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            emit(String(decoding: data, as: UTF8.self))
        }
    }
}

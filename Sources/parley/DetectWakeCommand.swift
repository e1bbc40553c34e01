import ArgumentParser
import Foundation
import ParleyAudio
import ParleySpeech
import ParleyWake

/// `parley detect-wake --wake "<phrase>" [--sensitivity S] [--detector D] FILE.wav...`:
/// streams each file through the wake detector (the daemon's by default)
/// and prints `{"file": ..., "detections": [seconds, ...]}` per line, with
/// `"peak"` (the highest score, for DET curves) for the embedding and network detectors.
struct DetectWake: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect-wake", abstract: "Run the wake-word detector over recordings, one JSON line per file.")

    @Option(help: "Wake phrase, e.g. \"computer\" or \"hey computer\". A leading 'hey' is optional when spoken.")
    var wake: String
    @Option(help: "Sensitivity from 0 (fewest false alarms) to 1 (fewest misses).")
    var sensitivity: Double = 0.5
    @Option(help: "Detector, as the daemon's wake.detector: embedding (the name's speech_embedding head, model/wake/<name>.embedding.json), network (its keyword network, model/wake/<name>.json) or pocketsphinx.")
    var detector = "embedding"
    @Option(name: .customLong("first-stage"), help: "embedding detector: the name's keyword network as its first stage (on, as the daemon) or the embedding alone (off).")
    var firstStageSetting = "on"
    var firstStage: Bool { firstStageSetting == "on" }
    @Option(help: "Acoustic model (pocketsphinx detector): stock (Debian's en-us, the default, as the daemon's speech.wake_acoustic_model), adapted (/usr/share/parley/model/en-us-adapted) or a model folder.")
    var acousticModel = "stock"
    @Option(help: "Capture front end before the detector: none, denoise or denoise+agc (optionally :dB, as speech.front_end); a fresh state per file. neural runs after the wake word (on what the command decoders hear), so here it leaves the audio as it is.")
    var frontEnd = "none"
    @Argument(help: "WAV files (16 kHz, 16-bit, mono).")
    var files: [String]

    func validate() throws {
        guard (0...1).contains(sensitivity) else { throw ValidationError("--sensitivity \(sensitivity): expected a number from 0 to 1") }
        guard ["embedding", "network", "pocketsphinx"].contains(detector) else {
            throw ValidationError("--detector \(detector): expected embedding, network or pocketsphinx")
        }
        guard ["on", "off"].contains(firstStageSetting) else { throw ValidationError("--first-stage \(firstStageSetting): expected on or off") }
        _ = try frontEndSettings()
    }

    func frontEndSettings() throws -> FrontEndSettings {
        do { return try FrontEndSettings(parsing: frontEnd) } catch {
            throw ValidationError("--front-end \(frontEnd): \(error)")
        }
    }

    func run() throws {
        var words = wake.lowercased().split(separator: " ").map(String.init)
        if words.first == "hey" && words.count > 1 { words.removeFirst() }
        var settings = DecoderSettings()
        do { settings.acousticModel = try AcousticModel(parsing: acousticModel).folder } catch {
            throw ValidationError("--acoustic-model \(acousticModel): \(error)")
        }
        let name = words.joined(separator: " ")
        let detect: (PCMAudio) throws -> [Double]
        var peak: () -> Double? = { nil }
        if detector == "embedding" {
            guard let path = KeywordModel.wakeHeadPath(name: name) else {
                throw ValidationError("--detector embedding: no speech_embedding head for \"\(name)\" (model/wake/\(name).embedding.json); try --detector network")
            }
            // As the daemon: the name's keyword network first, where it has one.
            let wake = try EmbeddingWakeUtterance.load(head: path, networkPath: firstStage ? KeywordModel.wakeModelPath(name: name) : nil,
                                                       sensitivity: sensitivity)
            peak = { wake.peak }
            // A recording starts and ends at the word: each is heard with a
            // second of quiet room either side (EmbeddingSpotter.padded), in
            // the capture loop's blocks, as the daemon's wake decoder is fed.
            detect = { audio in
                wake.begin()
                let padded = EmbeddingSpotter.padded(audio.samples)
                for at in stride(from: 0, to: padded.count, by: 1_024) {
                    wake.feed(Array(padded[at..<min(padded.count, at + 1_024)]))
                }
                guard let end = wake.wakeEndSample else { return [] }
                return [Double(end - wake.samplesFed + Int64(padded.count)) / 16_000 - EmbeddingSpotter.paddingSeconds]
            }
        } else if detector == "network" {
            guard let path = KeywordModel.wakeModelPath(name: name) else {
                throw ValidationError("--detector network: no keyword network for \"\(name)\" (model/wake/\(name).json); try --detector pocketsphinx")
            }
            let spotter = KeywordSpotter(model: try KeywordModel.load(path), sensitivity: sensitivity)
            peak = { spotter.peak }
            // A fresh stream per file, as PocketSphinx's detector restarts its search.
            detect = { audio in
                spotter.reset()
                return spotter.process(audio.samples)
            }
        } else {
            let sphinx = try WakeDetector(mode: .named(name, heyOptional: true), sensitivity: sensitivity, settings: settings)
            detect = { try sphinx.detections(in: $0) }
        }
        let frontEnd = try frontEndSettings()
        for file in files {
            let audio = try PCMAudio.read(URL(fileURLWithPath: file))
            let heard = PCMAudio(samples: try FrontEndSource.processed(audio.samples, settings: frontEnd))
            let times = try detect(heard).map { ($0 * 1000).rounded() / 1000 }
            var line: [String: Any] = ["file": file, "detections": times]
            if let p = peak(), p.isFinite { line["peak"] = (p * 1000).rounded() / 1000 }
            let data = try JSONSerialization.data(withJSONObject: line,
                                                  options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}

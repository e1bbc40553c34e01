import ArgumentParser
import Foundation
import ParleyAudio
import ParleySpeech

/// `parley detect-wake --wake "<phrase>" [--sensitivity S] FILE.wav...`:
/// streams each file through the always-on wake detector in 100 ms frames
/// and prints `{"file": ..., "detections": [seconds, ...]}` per line.
struct DetectWake: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect-wake", abstract: "Run the wake-word detector over recordings, one JSON line per file.")

    @Option(help: "Wake phrase, e.g. \"computer\" or \"hey computer\". A leading 'hey' is optional when spoken.")
    var wake: String
    @Option(help: "Sensitivity from 0 (fewest false alarms) to 1 (fewest misses).")
    var sensitivity: Double = 0.5
    @Option(help: "Acoustic model: stock (Debian's en-us, the default, as the daemon's speech.wake_acoustic_model), adapted (/usr/share/parley/model/en-us-adapted) or a model folder.")
    var acousticModel = "stock"
    @Option(help: "Capture front end before the detector: none, denoise or denoise+agc (optionally :dB, as speech.front_end); a fresh state per file.")
    var frontEnd = "none"
    @Argument(help: "WAV files (16 kHz, 16-bit, mono).")
    var files: [String]

    func validate() throws {
        guard (0...1).contains(sensitivity) else { throw ValidationError("--sensitivity \(sensitivity): expected a number from 0 to 1") }
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
        let detector = try WakeDetector(mode: .named(words.joined(separator: " "), heyOptional: true), sensitivity: sensitivity,
                                        settings: settings)
        let frontEnd = try frontEndSettings()
        for file in files {
            let audio = try PCMAudio.read(URL(fileURLWithPath: file))
            let heard = PCMAudio(samples: try FrontEndSource.processed(audio.samples, settings: frontEnd))
            let times = try detector.detections(in: heard).map { ($0 * 1000).rounded() / 1000 }
            let data = try JSONSerialization.data(withJSONObject: ["file": file, "detections": times] as [String: Any],
                                                  options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}

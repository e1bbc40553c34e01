import ArgumentParser
import Foundation
import ParleyAudio
import ParleyDenoise

extension AudioBenchCommand {
    /// Writes recordings through the neural noise suppressor, one utterance
    /// each, as the daemon hears a command: so an acoustic model can be
    /// adapted on what the decoder is fed behind `speech.front_end: neural`
    /// (scripts/adapt-model.sh, `DENOISE=neural`). One network state runs
    /// across the files, as it runs across the daemon's utterances.
    struct Denoise: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "denoise", abstract: "Write 16 kHz mono WAV files through the neural noise suppressor into a folder.")
        @Option(help: "The front end, as speech.front_end: neural, optionally with its attenuation limit (neural:-30).")
        var frontEnd = "neural"
        @Option(help: "Output folder (created; files keep their names).") var out: String
        @Argument(help: "WAV files.") var files: [String]

        func run() throws {
            let settings = try FrontEndSettings(parsing: frontEnd)
            guard settings.isNeural else { throw ValidationError("--front-end \(frontEnd): expected neural or neural:DB") }
            let denoiser = try NeuralDenoiser(settings: settings)
            let folder = URL(fileURLWithPath: out)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for file in files {
                let url = URL(fileURLWithPath: file)
                let (samples, rate) = try WAVFile.read(url)
                guard rate == NeuralDenoiser.sampleRate else { throw ValidationError("\(file): \(rate) Hz; expected 16 kHz mono") }
                try WAVFile.write(denoiser.denoise(utterance: samples), sampleRate: rate, to: folder.appendingPathComponent(url.lastPathComponent))
            }
        }
    }
}

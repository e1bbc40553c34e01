import Foundation
import ArgumentParser

struct SayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "say",
        abstract: "Say something to the device, as if spoken after the wake word.",
        discussion: "Example: parley say \"order a large latte with barista\"")

    @OptionGroup var options: ControlOptions
    @Argument(help: "What to say.") var words: [String]

    func validate() throws {
        guard !words.joined().isEmpty else { throw ValidationError("Say something: parley say \"coffee time\"") }
    }

    func run() throws {
        let response = try options.send(.say(words.joined(separator: " ")))
        let spoken = response.spoken ?? []
        output(options, spoken.isEmpty ? "(the device said nothing: \(response.message ?? "no answer"))"
                                       : spoken.map { "> \($0)" }.joined(separator: "\n"))
    }
}

/// `parley play FILE.wav...`: WAV files played into the running daemon's
/// stand-in microphone (a `spool:` capture), heard like a person speaking.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play WAV files into the daemon's microphone (development machines: audio.capture spool:<path>).",
        discussion: "Example: parley play Tests/Fixtures/coffee-maker/clean/<file>.wav — say the wake word first: the file is heard as it is.")

    @OptionGroup var options: ControlOptions
    @Argument(help: "16-bit WAV files (any rate and channel count).") var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give a WAV file: parley play hey-coffee-time.wav") }
        for file in files where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("\(file): no such readable file")
        }
    }

    func run() throws {
        for file in files {
            let path = URL(fileURLWithPath: file).standardizedFileURL.path
            output(options, try options.send(.play(path)).message ?? "")
        }
    }
}

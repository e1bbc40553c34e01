import ArgumentParser
import ParleyDaemon

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
        let spoken = try options.send(.say(words.joined(separator: " "))).spoken ?? []
        output(options, spoken.isEmpty ? "(no answer)" : spoken.map { "> \($0)" }.joined(separator: "\n"))
    }
}

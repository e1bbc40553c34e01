import ArgumentParser

/// `parley`: the command-line tool. Each subcommand lives in its own file.
@main
struct ParleyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley",
        abstract: "Talk to Parley, the offline voice-shortcuts runtime.",
        subcommands: [Chat.self, Understand.self, DetectWake.self] + ControlCommands.all)
}

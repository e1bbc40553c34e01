import ArgumentParser
import ParleyDevice

/// `parley`: the command-line tool. Each subcommand lives in its own file.
struct ParleyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley",
        abstract: "Talk to Parley, the offline voice-shortcuts runtime.",
        subcommands: [Chat.self, Understand.self, DetectWake.self, WakeCommand.self] + ControlCommands.all)
}

/// A synchronous entry point (see `BlockingMain`: valgrind cannot run Swift's async main).
@main
enum ParleyMain {
    static func main() { BlockingMain.run { await ParleyCommand.main() } }
}

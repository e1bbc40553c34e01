import ArgumentParser
import ParleyDaemon

struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "apps", abstract: "List the installed apps.")
    @OptionGroup var options: ControlOptions

    func run() throws {
        let apps = try options.send(.apps).apps ?? []
        output(options, apps.map { app in
            let synonyms = app.synonyms.isEmpty ? "" : " (also: \(app.synonyms.joined(separator: ", ")))"
            return "\(app.name)\(app.primary ? " [primary]" : "")\(synonyms): \(app.intents.joined(separator: ", "))"
        }.joined(separator: "\n"))
    }
}

struct LogsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logs", abstract: "Show the daemon's recent log lines.")
    @OptionGroup var options: ControlOptions
    @Option(name: [.customShort("n"), .long], help: "How many lines.") var lines = 50

    func run() throws {
        let logs = try options.send(.logs(limit: lines)).logs ?? []
        output(options, logs.joined(separator: "\n"))
    }
}

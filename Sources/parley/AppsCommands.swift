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

struct ShortcutsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcuts", abstract: "List the App Shortcut phrases the device understands now.")
    @OptionGroup var options: ControlOptions
    @Option(help: "Only this app's shortcuts.") var app: String?

    func run() throws {
        let shortcuts = (try options.send(.shortcuts).shortcuts ?? []).filter { app == nil || $0.app == app }
        output(options, shortcuts.map { "\"\($0.phrase)\"  → \($0.app) / \($0.intent)" }.joined(separator: "\n"))
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

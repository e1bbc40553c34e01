import ArgumentParser
import Foundation
import Logging
import ParleyApps
import ParleyExternal
import ParleyIntents

/// `parley apps` lists the apps (its default); `parley apps check FOLDER`
/// validates an external app's folder without a daemon.
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "List the installed apps, or check an app folder.",
        subcommands: [AppsListCommand.self, AppsCheckCommand.self, AppsStatusCommand.self, AppsSwitchCommand.On.self,
                      AppsSwitchCommand.Off.self, AppsInstallCommand.self],
        defaultSubcommand: AppsListCommand.self)
}

/// `parley apps status`: each external app's handler and its standard error's last lines.
struct AppsStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show each external app's handler (running, restarting, stopped, off) and its last standard error lines.")
    @OptionGroup var options: ControlOptions
    @Option(name: [.customShort("n"), .long], help: "How many standard error lines per app.") var lines = 5

    func run() throws {
        let apps = try options.send(.externalApps).externalApps ?? []
        output(options, apps.isEmpty ? "No external apps." : apps.map { app in
            "\(app.identifier) (\(app.folder)): \(app.state)\(app.restarts > 0 ? ", \(app.restarts) restarts" : "")"
                + app.stderr.suffix(max(0, lines)).map { "\n  " + $0 }.joined()
        }.joined(separator: "\n"))
    }
}

/// `parley apps on|off IDENTIFIER`: an external app turned off stays installed, its handler stopped and its phrases not understood.
enum AppsSwitchCommand {
    struct On: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "on", abstract: "Turn an external app on again (its handler starts).")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The app's identifier (see `parley apps status`).") var identifier: String

        func run() throws { output(options, try options.send(.setAppEnabled(identifier: identifier, enabled: true)).message ?? "") }
    }

    struct Off: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "off", abstract: "Turn an external app off: its handler stops and its phrases are not understood, across restarts.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The app's identifier (see `parley apps status`).") var identifier: String

        func run() throws { output(options, try options.send(.setAppEnabled(identifier: identifier, enabled: false)).message ?? "") }
    }
}

/// `parley apps install [NAME]`: the apps that come with Parley, or one of them installed into the apps folder.
struct AppsInstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install an app that comes with Parley (home-assistant, ...) into the daemon's apps folder; without a name, list them.")
    @OptionGroup var options: ControlOptions
    @Argument(help: "The app's folder name (see `parley apps install`).") var name: String?

    func run() throws {
        let response = try options.send(.installApp(name: name))
        output(options, response.message ?? "")
    }
}

struct AppsCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check an app folder's manifest.yaml against every rule, without a daemon.",
        discussion: "Exit status 0 when the app would load; 1 with one FILE:LINE:COLUMN: reason line per problem.")
    @Argument(help: "The app folder (it holds manifest.yaml).") var folder: String
    @Option(help: "Also check against the apps in this apps folder (clashes with them).") var apps: String?
    @Option(help: "The primary app (parley.yaml's primary_app): when it names this app, its phrases need not name it.")
    var primaryApp: String?

    func run() throws {
        let url = URL(fileURLWithPath: folder)
        var installed = BundledApps.all.map(AppDescription.init)
        if let apps {
            installed += AppsFolder.load(directory: URL(fileURLWithPath: apps), builtIn: installed, logger: Logger(label: "parley.apps") { _ in SwiftLogNoOpLogHandler() })
                .loaded.filter { $0.manifest.folder.standardizedFileURL != url.standardizedFileURL }.map(\.description)
        }
        do {
            let app = try ExternalApp.load(folder: url, installed: installed, primaryApp: primaryApp, logger: Logger(label: "parley.apps") { _ in SwiftLogNoOpLogHandler() })
            let phrases = app.description.shortcuts.reduce(0) { $0 + $1.phrases.count }
            print("\(app.manifest.file): ok: \(app.description.identifier) (\(app.description.name)), "
                + "\(app.description.intents.count) intents, \(app.description.shortcuts.count) shortcuts, \(phrases) phrases")
        } catch {
            for problem in error.errors { print(problem.description) }
            throw ExitCode(1)
        }
    }
}

struct AppsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the installed apps.")
    @OptionGroup var options: ControlOptions

    func run() throws {
        let apps = try options.send(.apps).apps ?? []
        output(options, apps.map { app in
            let synonyms = app.synonyms.isEmpty ? "" : " (also: \(app.synonyms.joined(separator: ", ")))"
            let kind = app.external == true ? " [external]" : app.external == false ? " [built-in]" : ""
            return "\(app.name)\(app.primary ? " [primary]" : "")\(kind)\(synonyms): \(app.intents.joined(separator: ", "))"
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

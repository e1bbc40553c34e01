import ArgumentParser
import Foundation
import ParleyApps
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ParleyHardware

/// `parley shortcuts ...`: a person's multi-step shortcuts (docs/shortcuts.md).
struct ShortcutsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcuts", abstract: "A person's multi-step shortcuts (docs/shortcuts.md), and the App Shortcut phrases.",
        subcommands: [List.self, Show.self, Run.self, Add.self, Remove.self, Enable.self, Disable.self, Check.self, AppPhrases.self], defaultSubcommand: List.self)

    /// One shortcut in lines: name, phrases, triggers, what it does.
    static func lines(_ shortcut: PersonalShortcut) -> String {
        var text = shortcut.name + (shortcut.enabled == false ? " [off]" : "")
        if !shortcut.phrases.isEmpty { text += "  \"" + shortcut.phrases.joined(separator: "\", \"") + "\"" }
        if !shortcut.triggers.isEmpty { text += "  [" + shortcut.triggers.joined(separator: "; ") + "]" }
        return text + "\n  " + shortcut.summary
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the shortcuts the daemon loaded, with what each does.")
        @OptionGroup var options: ControlOptions

        func run() throws {
            let shortcuts = try options.send(.personalShortcuts).personalShortcuts ?? []
            output(options, shortcuts.isEmpty ? "No shortcuts." : shortcuts.map(ShortcutsCommand.lines).joined(separator: "\n"))
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one shortcut and its file.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The shortcut's name.") var name: String

        func run() throws {
            guard let shortcut = try options.send(.showShortcut(name)).personalShortcuts?.first else { return }
            output(options, ShortcutsCommand.lines(shortcut) + "\n  file: \(shortcut.file)")
        }
    }

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run a shortcut by name, as if its phrase was said.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The shortcut's name.") var name: String

        func run() throws {
            let response = try options.send(.runShortcut(name))
            output(options, (response.spoken ?? []).joined(separator: "\n"))
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a shortcut file and copy it into the daemon's shortcut folder (one FILE:LINE:COLUMN line per problem).")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The shortcut file.") var file: String

        func run() throws {
            let path = URL(fileURLWithPath: file).standardizedFileURL.path
            output(options, try options.send(.addShortcut(path)).message ?? "")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a shortcut (its file) by name.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The shortcut's name.") var name: String

        func run() throws { output(options, try options.send(.removeShortcut(name)).message ?? "") }
    }

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a shortcut that was turned off on again: its phrases and triggers work again.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The shortcut's name.") var name: String

        func run() throws { output(options, try options.send(.setShortcutEnabled(name: name, enabled: true)).message ?? "") }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn a shortcut off, keeping its file: its phrases are not understood and its triggers do not fire until it is enabled.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The shortcut's name.") var name: String

        func run() throws { output(options, try options.send(.setShortcutEnabled(name: name, enabled: false)).message ?? "") }
    }

    /// The App Shortcut phrases the running daemon understands (what bare `parley shortcuts` printed before).
    struct AppPhrases: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "app-phrases", abstract: "List the App Shortcut phrases the device understands now.")
        @OptionGroup var options: ControlOptions
        @Option(help: "Only this app's shortcuts.") var app: String?

        func run() throws {
            let shortcuts = (try options.send(.shortcuts).shortcuts ?? []).filter { app == nil || $0.app == app }
            output(options, shortcuts.map { "\"\($0.phrase)\"  → \($0.app) / \($0.intent)" }.joined(separator: "\n"))
        }
    }

    /// Checks files without a daemon, against the apps and board the daemon's
    /// configuration names: exit 0, or 1 with one `FILE:LINE:COLUMN: reason`
    /// line per problem on standard output.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check shortcut files (no daemon needed): one FILE:LINE:COLUMN: reason line per problem; exit 1 if any.",
            discussion: """
                The other shortcut files in each file's folder are read too, so a `shortcut:` action may \
                run them and loops through them are found; only the given files' problems are printed.
                """)
        @Argument(help: "Shortcut files (.yaml).") var files: [String]
        @Option(help: "The configuration whose primary_app and board apply (default: $PARLEY_CONFIG, else /etc/parley/parley.yaml if present).")
        var config: String?
        @Option(name: .customLong("primary-app"), help: "The primary app ('none' for none); overrides the configuration.")
        var primaryApp: String?
        @Option(help: "A board name or file whose inputs `input:` triggers may name; overrides the configuration.")
        var board: String?

        func run() throws {
            var primary: String? = nil
            var boardName: String? = nil
            do {
                let loaded = try ConfigLoader.load(flag: config)
                primary = loaded.config.primaryApp
                boardName = loaded.config.board
            } catch {
                throw ValidationError("\(error)")
            }
            if let primaryApp { primary = primaryApp.lowercased() == "none" ? nil : primaryApp }
            if let board { boardName = board }
            let registry: AppRegistry
            do {
                registry = try AppRegistry(apps: BundledApps.all, primaryApp: primary)
            } catch {
                throw ValidationError("primary app: \(error)")
            }
            var inputs: Set<String>?
            if let boardName {
                do {
                    inputs = Set(try Board.load(from: BoardLocator.locate(boardName)).inputs.map(\.name))
                } catch {
                    throw ValidationError("board: \(error)")
                }
            }
            let given = files.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            var all = given
            for folder in Set(given.map { ($0 as NSString).deletingLastPathComponent }).sorted() {
                all += ShortcutLibrary.files(in: folder).filter { !all.contains($0) }
            }
            let library = ShortcutLibrary.load(files: all, environment: ShortcutEnvironment(registry: registry, inputNames: inputs))
            // Printed with the path as given on the command line.
            let asGiven = Dictionary(zip(given, files), uniquingKeysWith: { a, _ in a })
            let problems = library.problems.filter { asGiven[$0.location.file] != nil }
            for problem in problems {
                var shown = problem
                shown.location.file = asGiven[problem.location.file] ?? problem.location.file
                print(shown.description)
            }
            if !problems.isEmpty { throw ExitCode.failure }
        }
    }
}

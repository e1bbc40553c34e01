import ArgumentParser
import ParleyControl
import ParleyCore

/// `parley phrases [list|add|delete]`: a person's own phrases ("Add to Siri").
struct PhrasesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phrases", abstract: "List, add or delete custom phrases.",
        subcommands: [List.self, Add.self, Delete.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List custom phrases.")
        @OptionGroup var options: ControlOptions

        func run() throws {
            let phrases = try options.send(.phrases).phrases ?? []
            output(options, phrases.isEmpty ? "No custom phrases." : phrases.map { p in
                let parameters = p.parameters.keys.sorted().map { "\($0)=\(p.parameters[$0]!)" }.joined(separator: " ")
                return "\"\(p.phrase)\"  → \(p.app) / \(p.intent)  \(parameters)"
            }.joined(separator: "\n"))
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give an intent with fixed values a phrase of your own.",
            discussion: """
                Example: parley phrases add "coffee time" --app "Coffee Maker" --intent OrderDrink size=large drink=latte
                Or another phrase for a shortcut: parley phrases add "soup o'clock" --shortcut Lunch
                """)
        @OptionGroup var options: ControlOptions
        @Argument(help: "The phrase.") var phrase: String
        @Option(help: "The app.") var app: String?
        @Option(help: "The intent.") var intent: String?
        @Option(help: "A shortcut (by name) the phrase runs, instead of --app and --intent.") var shortcut: String?
        @Argument(help: "Fixed parameter values as name=value.") var values: [String] = []

        func parameters() throws -> [String: String] {
            var result: [String: String] = [:]
            for value in values {
                guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                    throw ValidationError("\"\(value)\" is not name=value")
                }
                result[String(value[..<equals])] = String(value[value.index(after: equals)...])
            }
            return result
        }

        func validate() throws {
            _ = try parameters()
            if shortcut != nil {
                guard app == nil, intent == nil, values.isEmpty else {
                    throw ValidationError("--shortcut gives the phrase to a shortcut: leave out --app, --intent and values")
                }
            } else if app == nil || intent == nil {
                throw ValidationError("give --app and --intent, or --shortcut NAME")
            }
        }

        func run() throws {
            let request = shortcut.map { ControlRequest.addPhrase(phrase: phrase, app: CustomPhrase.shortcutApp, intent: $0, parameters: [:]) }
                ?? ControlRequest.addPhrase(phrase: phrase, app: app ?? "", intent: intent ?? "", parameters: try parameters())
            output(options, try options.send(request).message ?? "")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a custom phrase.")
        @OptionGroup var options: ControlOptions
        @Argument(help: "The phrase.") var phrase: String

        func run() throws { output(options, try options.send(.deletePhrase(phrase)).message ?? "") }
    }
}

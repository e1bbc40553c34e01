import ArgumentParser
import Foundation
import ParleyControl

/// `parley web tokens [--revoke ID]`: the browsers paired with the speaker's page.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web", abstract: "The speaker's web page: paired browsers.",
        subcommands: [Tokens.self], defaultSubcommand: Tokens.self)

    struct Tokens: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the browsers paired with the page, or revoke one (it must pair again).",
            discussion: "Examples: parley web tokens · parley web tokens --revoke 3f2a9c01")
        @OptionGroup var options: ControlOptions
        @Option(help: "Revoke the pairing with this id (from the list).") var revoke: String?

        func run() throws {
            if let revoke {
                output(options, try options.send(.revokeWebToken(revoke)).message ?? "")
                return
            }
            let tokens = try options.send(.webTokens).webTokens ?? []
            let formatter = ISO8601DateFormatter()
            output(options, tokens.isEmpty ? "No browser is paired." : tokens.map { t in
                "\(t.id)  paired \(formatter.string(from: t.created))  last used \(formatter.string(from: t.lastUsed))  \(t.browser)"
            }.joined(separator: "\n"))
        }
    }
}

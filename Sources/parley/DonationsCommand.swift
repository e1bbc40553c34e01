import ArgumentParser
import Foundation
import ParleyControl

/// `parley donations [list|forget]`: the history suggestions are learned from.
struct DonationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "donations", abstract: "List or forget the history of performed intents.",
        subcommands: [List.self, Forget.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List donations, newest first.")
        @OptionGroup var options: ControlOptions
        @Option(help: "Only this app's donations.") var app: String?
        @Option(help: "At most this many.") var limit = 50

        func run() throws {
            let donations = try options.send(.donations(app: app, limit: limit)).donations ?? []
            let formatter = ISO8601DateFormatter()
            output(options, donations.isEmpty ? "No donations." : donations.map { d in
                let parameters = d.parameters.keys.sorted().map { "\($0)=\(d.parameters[$0]!)" }.joined(separator: " ")
                var tags = ""
                if let id = d.identifier { tags += " id=\(id)" }
                if let group = d.groupIdentifier { tags += " group=\(group)" }
                return "#\(d.rowID ?? 0)  \(formatter.string(from: d.date))  \(d.app) / \(d.intent)  \(parameters)  (\(d.trigger))\(tags)"
            }.joined(separator: "\n"))
        }
    }

    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete donations by row number, identifier, group, app, or all.",
            discussion: "Examples: parley donations forget 12 · --identifier ID · --group G · --app \"Soup Chef\" · --all")
        @OptionGroup var options: ControlOptions
        @Argument(help: "A row number from `parley donations`.") var row: Int64?
        @Option(help: "The donation identifier an app gave.") var identifier: String?
        @Option(help: "A group identifier.") var group: String?
        @Option(help: "Every donation of this app.") var app: String?
        @Flag(help: "Every donation.") var all = false

        func validate() throws {
            let given = [row != nil, identifier != nil, group != nil, app != nil, all].filter { $0 }.count
            guard given == 1 else { throw ValidationError("Say which donations: a row number, --identifier, --group, --app or --all (exactly one).") }
        }

        func run() throws {
            let scope: ForgetScope =
                if let row { .row(row) } else if let identifier { .identifier(identifier) }
                else if let group { .group(group) } else if let app { .app(app) } else { .all }
            output(options, try options.send(.forgetDonations(scope)).message ?? "")
        }
    }
}

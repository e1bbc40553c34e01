import ArgumentParser
import Foundation
import ParleyControl

/// The subcommands that talk to a running parleyd over its control socket.
/// The root command lists them: `subcommands: [...] + ControlCommands.all`.
enum ControlCommands {
    static let all: [any ParsableCommand.Type] = [
        StatusCommand.self, SayCommand.self, PlayCommand.self, PressCommand.self, LongPressCommand.self, DoublePressCommand.self,
        AppsCommand.self, ShortcutsCommand.self, LogsCommand.self, DonationsCommand.self, PhrasesCommand.self, AdaptCommand.self, WebCommand.self,
        VolumeCommand.self, UpdateCommand.self,
    ]
}

/// Options every control subcommand takes.
struct ControlOptions: ParsableArguments {
    @Option(help: "The daemon's control socket (default: $PARLEY_SOCKET, else control_socket from the configuration).")
    var socket: String?

    @Option(help: "The configuration file to read control_socket from (default: $PARLEY_CONFIG, else /etc/parley/parley.yaml).")
    var config: String?

    @Flag(help: "Print the daemon's JSON answer instead of text.")
    var json = false

    /// Sends one request; on failure prints the reason and exits with
    /// 69 (daemon not running), 77 (permission denied) or 1.
    func send(_ request: ControlRequest) throws -> ControlResponse {
        let path = ControlClient.socketPath(flag: socket, configFlag: config)
        let response: ControlResponse
        do {
            response = try ControlClient(path: path).send(request)
        } catch {
            FileHandle.standardError.write(Data("parley: \(error)\n".utf8))
            switch error {
            case .notRunning: throw ExitCode(69)  // EX_UNAVAILABLE
            case .permissionDenied: throw ExitCode(77)  // EX_NOPERM
            default: throw ExitCode.failure
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            print(String(decoding: try encoder.encode(response), as: UTF8.self))
        }
        return response
    }
}

/// Prints `text` unless the JSON answer was printed instead.
func output(_ options: ControlOptions, _ text: String) {
    if !options.json { print(text) }
}

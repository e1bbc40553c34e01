import ArgumentParser
import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyDaemon
import ParleyDevice
import ParleyWeb

/// `parleyd [--config FILE] [--check-config]`: the daemon systemd starts.
struct Parleyd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parleyd",
        abstract: "The Parley daemon: listens, understands, answers, runs shortcuts.",
        discussion: """
            Reads /etc/parley/parley.yaml (or --config, or $PARLEY_CONFIG); without that file the \
            defaults run on a development machine (simulated board, file audio). Stops gracefully \
            on SIGTERM or SIGINT. Talk to it with `parley`.
            """,
        subcommands: [StoreStress.self])

    @Option(name: .long, help: "Configuration file (default: $PARLEY_CONFIG, else /etc/parley/parley.yaml).")
    var config: String?

    @Option(name: .long, help: "Override state_directory from the configuration.")
    var stateDirectory: String?

    @Option(name: .long, help: "Override control_socket from the configuration.")
    var socket: String?

    @Flag(name: .long, help: "Check the configuration, print the result and exit.")
    var checkConfig = false

    func run() async throws {
        let loaded: (config: ParleyConfig, source: String?)
        do {
            loaded = try ConfigLoader.load(flag: config, stateDirectory: stateDirectory)
        } catch let error as ConfigError {
            FileHandle.standardError.write(Data("parleyd: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG: systemd does not restart on it (RestartPreventExitStatus)
        }
        var settings = loaded.config
        if let stateDirectory { settings.stateDirectory = stateDirectory }
        if let socket { settings.controlSocket = socket }
        if checkConfig {
            print("\(loaded.source ?? "defaults (no \(ConfigLoader.defaultPath))"): ok")
            return
        }
        // State and socket are private to the daemon and control_group.
        umask(0o027)
        let ring = LogRing(capacity: 1_000)
        JournalLogHandler.bootstrap(level: Logger.Level(rawValue: settings.logLevel) ?? .info, ring: ring)
        // libasound's own messages too, in the same format (see ALSAErrorLog).
        ALSAErrorLog.route(to: Logger(label: "parley.alsa"))
        let logger = Logger(label: "parleyd")
        logger.info("starting", metadata: [
            "version": "\(ParleyVersion.current)", "config": "\(loaded.source ?? "defaults")",
        ])
        do {
            try await Daemon(config: settings, configFile: loaded.source, logs: ring, logger: logger)
                .run(makeComponents: Wiring.components, attach: WebAttachment.attach)
        } catch {
            logger.critical("parleyd failed: \(error)")
            throw ExitCode.failure
        }
    }
}

/// A synchronous entry point (see `BlockingMain`: valgrind cannot run Swift's async main).
@main
enum ParleydMain {
    static func main() { BlockingMain.run { await Parleyd.main() } }
}

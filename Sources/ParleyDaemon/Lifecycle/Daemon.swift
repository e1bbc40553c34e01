import CParleyShims
import Foundation
import Logging
import ParleyConfiguration
import ParleyControl
import ParleyStore
import ServiceLifecycle

/// parleyd: opens the state, builds the components and runs every
/// long-running part in one service group. SIGTERM or SIGINT starts a
/// graceful shutdown: the control socket closes, an open conversation is
/// cancelled, LEDs go off, the components stop, the database is closed; all
/// within ``shutdownLimit`` (then the group cancels what is left).
public struct Daemon: Sendable {
    public let config: ParleyConfig
    public let configFile: String?
    public let logs: LogRing
    public let logger: Logger
    public let notifier: SystemdNotifier

    /// The graceful part of shutdown; cancellation gets a little more, so
    /// the whole stop stays under systemd's and the issue's 2 seconds.
    public static let shutdownLimit: Duration = .milliseconds(1_500)
    /// The whole stop, graceful part and cancellation, after which
    /// ``StopWatchdog`` ends the process (exit status 0, never a crash);
    /// under the unit's TimeoutStopSec=5, so systemd never needs SIGKILL.
    public static let stopLimit: Duration = .seconds(4)

    public init(config: ParleyConfig, configFile: String?, logs: LogRing, logger: Logger,
                notifier: SystemdNotifier = SystemdNotifier()) {
        self.config = config
        self.configFile = configFile
        self.logs = logs
        self.logger = logger
        self.notifier = notifier
    }

    /// Runs until a shutdown signal; `makeComponents` plugs in the engine,
    /// audio, speech and board (see ``DaemonComponents``).
    public func run(
        makeComponents: @Sendable (ParleyConfig, StateStore, Logger) async throws -> DaemonComponents,
        attach: DaemonAttach? = nil
    ) async throws {
        // Every thread that allocates would otherwise get a malloc arena of its
        // own (up to 8 per core), each keeping its freed pages; the daemon's
        // threads allocate little once listening, so two arenas are plenty.
        parley_limit_malloc_arenas(2)
        let store = try StateStore(directory: config.stateDirectory, retention: config.donationRetention)
        let components = try await makeComponents(config, store, logger)
        let controller = DaemonController(
            config: config, configFile: configFile, store: store, components: components, logs: logs, logger: logger)
        // The web page (when parleyd is built with it) wraps the controller.
        let attached = try await attach?(DaemonAttachmentContext(
            config: config, configFile: configFile, store: store, components: components, logs: logs,
            handler: controller, logger: logger))
        let server = ControlServer(
            path: config.controlSocket, group: config.controlGroup, handler: attached?.handler ?? controller,
            logger: logger)
        let notifier = self.notifier
        let logger = self.logger
        let control = ControlSocketService(server: server) {
            logger.notice("parleyd ready", metadata: [
                "socket": "\(config.controlSocket)", "state": "\(config.stateDirectory)",
                "board": "\(config.board)", "not-wired": "\(components.notWired.joined(separator: ","))",
            ])
            notifier.notify("READY=1\nSTATUS=listening")
        }
        let trace = ServiceTrace(logger: logger)
        let watchdog = StopWatchdog(limit: Self.stopLimit, logger: logger, stillRunning: { trace.stillRunning })
        // ServiceGroup stops services in reverse order, each after the one
        // behind it has returned: StopStart first (at SIGTERM), then the
        // socket, the conversation, the components, the database last.
        let services: [any Service] =
            [StoreCloser(store: store, logger: logger)] + components.services + (attached?.services ?? [])
            + [ConversationStopper(components: components, logger: logger), control,
               StopStart(notifier: notifier, watchdog: watchdog, trace: trace, logger: logger)]
        var groupConfig = ServiceGroupConfiguration(
            services: services.map { .init(service: trace.traced($0)) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfig.maximumGracefulShutdownDuration = Self.shutdownLimit
        // No limit here: the library's limit is a fatalError (see StopWatchdog).
        groupConfig.maximumCancellationDuration = nil
        defer { watchdog.disarm() }
        try await ServiceGroup(configuration: groupConfig).run()
        logger.notice("parleyd stopped", metadata: ["stop-ms": "\(trace.millisecondsSinceStop.map(String.init) ?? "none")"])
    }
}

/// Last to stop: closes the database once nothing else can write.
struct StoreCloser: Service {
    let store: StateStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        await store.close()
        logger.info("state closed")
    }
}

/// The first to see a stop, at SIGTERM: starts the watchdog's count and the
/// trace's clock there, not after the socket has closed, so the 4 s bound
/// is from the signal, as systemd's TimeoutStopSec counts.
struct StopStart: Service {
    let notifier: SystemdNotifier
    let watchdog: StopWatchdog
    let trace: ServiceTrace
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        trace.stopBegins()
        watchdog.arm()
        notifier.notify("STOPPING=1")
        logger.notice("stopping")
    }
}

/// First to react to shutdown after the socket: nothing half-done survives
/// a stop (the open conversation is cancelled without performing, LEDs off).
struct ConversationStopper: Service {
    let components: DaemonComponents
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        await components.conversation?.cancelAll()
        await components.board?.allOff()
    }
}

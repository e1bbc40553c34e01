import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ParleyCore
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import ParleySocket
import ServiceLifecycle

/// The page plugged into parleyd (`Daemon.run(attach: WebAttachment.attach)`):
/// with `web.enabled` off it adds nothing (no port opened) and `parley web
/// tokens` says the page is off; on, it answers the token requests and
/// serves the page.
public enum WebAttachment {
    @Sendable public static func attach(_ context: DaemonAttachmentContext) async throws -> DaemonAttachment {
        let web = context.config.web
        guard web.enabled else { return DaemonAttachment(handler: context.handler, services: []) }
        let logger = Logger(label: "parley.web")
        let page = WebPage(
            handler: context.handler,
            webDirectory: URL(fileURLWithPath: context.config.stateDirectory).appendingPathComponent("web"),
            configFile: context.configFile, machineName: ProcessInfo.processInfo.hostName,
            announce: PairingAnnouncer(components: context.components).announce, logger: logger,
            live: LiveSettings(components: context.components), microphoneLevel: context.components.microphoneLevel,
            pairing: web.pairing == "button" ? .button : .spoken, updater: context.components.updater,
            maxUploadBytes: context.config.update.maxUploadBytes)
        wirePairingButton(page, context.components)
        return DaemonAttachment(
            handler: WebControlHandler(inner: context.handler, sessions: page.sessions),
            services: [WebService(page: page, port: web.port, listen: web.listen, logger: logger)])
    }
}

extension WebAttachment {
    /// With button pairing, short presses go to the page first (taken only
    /// while a request from the page waits for one).
    public static func wirePairingButton(_ page: WebPage, _ components: DaemonComponents) {
        guard page.pairingMode == .button else { return }
        guard let board = components.board as? BoardBridge else {
            Logger(label: "parley.web").error("web.pairing is button, but this parleyd has no button to press; codes cannot be asked for")
            return
        }
        board.takeShortPresses { await page.buttonPressed() }
    }
}

/// The control socket's handler with the page's own requests answered first.
public struct WebControlHandler: ControlHandling {
    let inner: any ControlHandling
    let sessions: SessionStore

    public init(inner: any ControlHandling, sessions: SessionStore) {
        self.inner = inner
        self.sessions = sessions
    }

    public func handle(_ request: ControlRequest) async -> ControlResponse {
        switch request {
        case .webTokens:
            var response = ControlResponse()
            response.webTokens = sessions.list()
            return response
        case .revokeWebToken(let id):
            do {
                return try sessions.revoke(id: id) ? .message("Revoked \(id): that browser must pair again.")
                    : .failure("no paired browser with id \"\(id)\" (see `parley web tokens`)")
            } catch {
                return .failure("could not write \(sessions.file.path): \(error)")
            }
        default:
            return await inner.handle(request)
        }
    }
}

/// Says the pairing code through the daemon's normal speech path (the
/// engine bridge's "spoke" event: logged, synthesised, played) with the
/// LEDs showing the waiting pattern meanwhile; refused while a
/// conversation is open, so a code never cuts into one.
struct PairingAnnouncer: Sendable {
    let components: DaemonComponents
    /// How long a code waits for the speaker to finish what it is saying.
    var busyWait: Duration = .seconds(10)
    /// States that end by themselves, soon.
    static let passing = Set([DeviceState.speaking, .thinking, .listening, .success, .error].map(\.rawValue))

    func announce(_ text: String) async throws {
        guard let bridge = components.conversation as? EngineBridge else {
            throw WebRequestFailed("this parleyd has no conversation engine to speak with")
        }
        // A sentence being spoken or a command being decided ends within
        // seconds: the code waits for it (the owner asked while a timer
        // answered, in the LAN attack test under load, and got an error).
        // An open conversation waits for a person, so it is refused at once.
        var state = await bridge.stateDescription()
        let deadline = ContinuousClock.now + busyWait
        while Self.passing.contains(state), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            state = await bridge.stateDescription()
        }
        guard state == DeviceState.idle.rawValue || state == DeviceState.muted.rawValue else {
            throw WebRequestFailed("the speaker is busy (\(state)); try again in a moment")
        }
        await bridge.emit(.led(.awaitingConfirmation))
        await bridge.emit(.spoke(text))
        await bridge.emit(.led(.idle))
    }
}

/// Runs the page's HTTP server in the daemon's service group, on one event
/// loop thread (a speaker has a few visitors at most). With `listen: lan`
/// and no private address yet (the network comes up after parleyd), it
/// looks again every 5 s; it stops with the daemon.
public struct WebService: Service {
    let page: WebPage
    let port: Int
    let listen: String
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void
    let limits: PageLimits
    /// Open connections by address (tests read it).
    public let connections: ConnectionCounts

    public init(page: WebPage, port: Int, listen: String, logger: Logger, limits: PageLimits = .init(),
                onListening: @escaping @Sendable (Int) async -> Void = { _ in }) {
        self.limits = limits
        self.connections = ConnectionCounts(limits: limits, logger: logger)
        self.page = page
        self.port = port
        self.listen = listen
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        var address = ListenAddress.resolve(listen)
        if address == nil {
            logger.warning("web: no private network address yet; the page waits for one", metadata: ["listen": "\(listen)"])
        }
        while address == nil {
            try? await Task.sleep(for: .seconds(5))
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            address = ListenAddress.resolve(listen)
        }
        guard let address else { return }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let logger = self.logger
        let onListening = self.onListening
        let (counts, limits) = (connections, self.limits)
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionLimit(counts: counts)], idleTimeout: limits.idleTimeout,
            httpDecoderConfiguration: .init(maxHeaderFieldSize: limits.headerBytes, maxHeaderListSize: limits.headerBytes,
                                            maxHeaderFieldCount: 100))
        // The connections above are closed at once or make room; the server's own
        // cap (a backstop four times larger) only bounds a burst of accepts.
        let app = Application(
            router: page.router(),
            server: .http1(configuration: http1),
            configuration: .init(address: .hostname(address, port: port), serverName: "parley",
                                 availableConnectionsDelegate: MaximumAvailableConnections(4 * limits.total, logger: logger)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                logger.notice("web page listening", metadata: ["url": "http://\(address):\(bound)/"])
                await onListening(bound)
            },
            eventLoopGroupProvider: .shared(group), logger: logger)
        do {
            // run(), not runService(): the latter makes a service group of its own that
            // stops at SIGTERM at once, before the daemon's ordered stop reaches the page.
            try await app.run()
        } catch {
            // A port taken or an address gone must not stop the speaker: said once, the rest runs on.
            logger.error("web page stopped: \(error)", metadata: ["address": "\(address)", "port": "\(port)"])
        }
        try? await group.shutdownGracefully()
    }
}

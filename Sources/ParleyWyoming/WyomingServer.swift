import Foundation
import Logging
import ParleySocket
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A Wyoming TCP server: Home Assistant is the client. Connections are few
/// (Home Assistant keeps one per satellite or service), so each runs on its
/// own thread with blocking reads, as the control socket's do; at most
/// `maximumConnections` at once, one more is closed at once. `stop()` wakes
/// the blocked calls with shutdown(2) and waits for the threads.
public final class WyomingServer: Sendable {
    public let host: String
    public let requestedPort: Int
    public let maximumConnections: Int
    public let limits: WyomingLimits
    public let idleTimeout: Duration
    private let logger: Logger
    private let serve: @Sendable (WyomingConnection) -> Void
    /// Accepts and runs the connections (shared with the control socket).
    private let server: SocketServer<WyomingConnection>
    private let listeningPort = Atomic<Int>(0)

    /// `serve` runs on the connection's own thread until the connection ends.
    public init(host: String = "0.0.0.0", port: Int, maximumConnections: Int = 4, limits: WyomingLimits = WyomingLimits(),
                idleTimeout: Duration = .seconds(30), logger: Logger, serve: @escaping @Sendable (WyomingConnection) -> Void) {
        self.host = host
        requestedPort = port
        self.maximumConnections = maximumConnections
        self.limits = limits
        self.idleTimeout = idleTimeout
        self.logger = logger
        self.serve = serve
        server = SocketServer(
            names: .init(acceptThread: "parley-wyoming", connectionThread: "parley-wyoming-peer",
                         acceptFailed: "wyoming accept failed", busyAtShutdown: "wyoming connections still busy at shutdown"),
            maximumConnections: maximumConnections, logger: logger)
    }

    /// The port listened on (the one picked when 0 was asked), 0 before `start`.
    public var port: Int { listeningPort.load(ordering: .acquiring) }

    public func start() throws {
        let (fd, port) = try TCPAddress.listen(host: host, port: requestedPort)
        listeningPort.store(port, ordering: .releasing)
        let (limits, idleTimeout, logger) = (self.limits, self.idleTimeout, self.logger)
        server.start(
            listener: fd,
            handlers: .init(
                open: { fd, peer in WyomingConnection(fd: fd, peer: peer, limits: limits, idleTimeout: idleTimeout) },
                serve: serve,
                refuse: { connection, maximum in
                    logger.warning("wyoming connection refused: \(maximum) already open", metadata: ["peer": "\(connection.peer)"])
                    try? connection.send(.error(text: "too many connections (\(maximum) open)", code: "busy"))
                },
                // close() is shutdown(2); the descriptor is closed when the connection goes.
                interrupt: { $0.close() },
                release: { $0.close() }))
        logger.info("wyoming listening", metadata: ["address": "\(host):\(port)"])
    }

    public func stop(timeout: Duration = .seconds(1)) {
        server.stop(timeout: timeout)
    }
}

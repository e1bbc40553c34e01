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
    /// Who may connect (nil: anyone; tests of the protocol alone).
    public let peers: WyomingPeers?
    private let logger: Logger
    private let serve: @Sendable (WyomingConnection) -> Void
    /// Accepts and runs the connections (shared with the control socket).
    private let server: SocketServer<WyomingConnection>
    private let listeningPort = Atomic<Int>(0)

    /// `serve` runs on the connection's own thread until the connection ends;
    /// a peer `peers` refuses gets an `error` event (code "not-allowed")
    /// naming its address and who is served, and is closed before `serve`.
    /// `host`: an IPv4 address, `lan` (the first private address of an
    /// interface that is up) or `loopback`.
    public init(host: String = "0.0.0.0", port: Int, maximumConnections: Int = 4, limits: WyomingLimits = WyomingLimits(),
                idleTimeout: Duration = .seconds(30), peers: WyomingPeers? = nil, logger: Logger,
                serve: @escaping @Sendable (WyomingConnection) -> Void) {
        self.host = host
        self.peers = peers
        requestedPort = port
        self.maximumConnections = maximumConnections
        self.limits = limits
        self.idleTimeout = idleTimeout
        self.logger = logger
        self.serve = peers.map { Self.guarded(serve, by: $0, logger: logger) } ?? serve
        server = SocketServer(
            names: .init(acceptThread: "parley-wyoming", connectionThread: "parley-wyoming-peer",
                         acceptFailed: "wyoming accept failed", busyAtShutdown: "wyoming connections still busy at shutdown"),
            maximumConnections: maximumConnections, logger: logger)
    }

    /// `serve` behind the allow list: a refused peer gets the `error` event
    /// and is closed; an allowed one is asked again at its first event (the
    /// first Home Assistant to speak may be kept meanwhile).
    private static func guarded(_ serve: @escaping @Sendable (WyomingConnection) -> Void, by peers: WyomingPeers,
                                logger: Logger) -> @Sendable (WyomingConnection) -> Void {
        return { (connection: WyomingConnection) -> Void in
            let host = connection.peerHost
            if case .refused(let reason) = peers.admit(host) {
                logger.warning("wyoming connection refused: address not allowed", metadata: ["peer": "\(connection.peer)"])
                try? connection.send(.error(text: reason, code: "not-allowed"))
                return  // the server closes it
            }
            connection.checkFirstEvent { peers.firstEvent(from: host) }
            serve(connection)
        }
    }

    /// The port listened on (the one picked when 0 was asked), 0 before `start`.
    public var port: Int { listeningPort.load(ordering: .acquiring) }

    /// The address `host` names now; nil for `lan` while no private address is up.
    public var resolvedHost: String? { ListenAddress.resolve(host) }

    public func start() throws {
        guard let address = resolvedHost else {
            throw SocketCallError(call: "listen", address: "lan (no private IPv4 address up yet)", errno: EADDRNOTAVAIL)
        }
        let (fd, port) = try TCPAddress.listen(host: address, port: requestedPort)
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
        logger.info("wyoming listening", metadata: ["address": "\(address):\(port)"])
    }

    public func stop(timeout: Duration = .seconds(1)) {
        server.stop(timeout: timeout)
    }
}

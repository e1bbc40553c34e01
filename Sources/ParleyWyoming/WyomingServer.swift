import Dispatch
import Foundation
import Logging
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
    private let state = Mutex(State())
    private let threads = DispatchGroup()

    private struct State {
        var listener: Int32 = -1
        var port = 0
        var connections: [ObjectIdentifier: WyomingConnection] = [:]
        var stopping = false
    }

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
    }

    /// The port listened on (the one picked when 0 was asked), 0 before `start`.
    public var port: Int { state.withLock { $0.port } }

    public func start() throws {
        let (fd, port) = try TCPAddress.listen(host: host, port: requestedPort)
        state.withLock {
            $0.listener = fd
            $0.port = port
        }
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop(fd)
            threads.leave()
        }
        thread.name = "parley-wyoming"
        thread.start()
        logger.info("wyoming listening", metadata: ["address": "\(host):\(port)"])
    }

    public func stop(timeout: Duration = .seconds(1)) {
        let (listener, connections) = state.withLock { s in
            s.stopping = true
            return (s.listener, Array(s.connections.values))
        }
        guard listener >= 0 else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in connections { connection.close() }
        let millis = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        if threads.wait(timeout: .now() + .milliseconds(millis)) == .timedOut {
            logger.warning("wyoming connections still busy at shutdown")
        }
        state.withLock { s in
            if s.listener >= 0 { close(s.listener) }
            s.listener = -1
        }
    }

    private func acceptLoop(_ listener: Int32) {
        while true {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if !state.withLock({ $0.stopping }) { logger.error("wyoming accept failed", metadata: ["errno": "\(errno)"]) }
                return
            }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let peer = "\(host):\(UInt16(bigEndian: address.sin_port))"
            let connection = WyomingConnection(fd: fd, peer: peer, limits: limits, idleTimeout: idleTimeout)
            let key = ObjectIdentifier(connection)
            let maximum = maximumConnections
            let admitted = state.withLock { s -> Bool? in
                guard !s.stopping else { return nil }
                guard s.connections.count < maximum else { return false }
                s.connections[key] = connection
                return true
            }
            guard let admitted else { connection.close(); return }
            guard admitted else {
                logger.warning("wyoming connection refused: \(maximum) already open", metadata: ["peer": "\(peer)"])
                try? connection.send(.error(text: "too many connections (\(maximum) open)", code: "busy"))
                connection.close()
                continue
            }
            threads.enter()
            let thread = Thread { [self] in
                serve(connection)
                connection.close()
                state.withLock { _ = $0.connections.removeValue(forKey: key) }
                threads.leave()
            }
            thread.name = "parley-wyoming-peer"
            thread.start()
        }
    }
}

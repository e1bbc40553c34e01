import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the control socket and Wyoming's TCP servers share: one thread
/// accepting on a listening socket, one thread per admitted connection
/// with blocking reads, at most `maximumConnections` at once (one more is
/// refused and closed at once), and a `stop()` that wakes the blocked
/// `accept`/`read` calls with shutdown(2) and waits for the threads.
/// Connections are rare and few on both sockets, so threads, not an event
/// loop (docs/architecture.md, real-time rule 2: blocking calls on their
/// own threads).
///
/// `Connection` is what a server makes of an accepted descriptor; the
/// closures say how to serve, refuse, wake and release one.
package final class SocketServer<Connection: Sendable>: Sendable {
    /// Thread names and log wording, so each server's logs read as before.
    package struct Names: Sendable {
        /// The accepting thread ("parley-control").
        var acceptThread: String
        /// Each connection's thread ("parley-control-client").
        var connectionThread: String
        /// "control socket accept failed".
        var acceptFailed: String
        /// "control connections still busy at shutdown".
        var busyAtShutdown: String

        package init(acceptThread: String, connectionThread: String, acceptFailed: String, busyAtShutdown: String) {
            self.acceptThread = acceptThread
            self.connectionThread = connectionThread
            self.acceptFailed = acceptFailed
            self.busyAtShutdown = busyAtShutdown
        }
    }

    package struct Handlers: Sendable {
        /// Wraps an accepted descriptor (close-on-exec already set) and its
        /// peer ("host:port" for TCP, empty for a Unix socket).
        var open: @Sendable (_ fd: Int32, _ peer: String) -> Connection
        /// Runs on the connection's own thread until the connection ends.
        var serve: @Sendable (Connection) -> Void
        /// Tells a connection past the limit why it is not served (then it is released).
        var refuse: @Sendable (Connection, _ maximum: Int) -> Void
        /// Wakes the connection's blocked calls at `stop()` (shutdown(2)); its thread then releases it.
        var interrupt: @Sendable (Connection) -> Void
        /// Releases the connection: served, refused, or accepted while stopping.
        var release: @Sendable (Connection) -> Void

        package init(open: @escaping @Sendable (Int32, String) -> Connection, serve: @escaping @Sendable (Connection) -> Void,
                     refuse: @escaping @Sendable (Connection, Int) -> Void, interrupt: @escaping @Sendable (Connection) -> Void,
                     release: @escaping @Sendable (Connection) -> Void) {
            self.open = open
            self.serve = serve
            self.refuse = refuse
            self.interrupt = interrupt
            self.release = release
        }
    }

    private let names: Names
    private let maximumConnections: Int
    private let logger: Logger
    private let state = Mutex(State())
    private let threads = DispatchGroup()

    private enum Admission { case stopping, full, admitted(key: Int) }

    private struct State: ~Copyable {
        var listener: Int32 = -1
        var handlers: Handlers?
        var connections: [Int: Connection] = [:]
        var nextKey = 0
        var stopping = false
    }

    package init(names: Names, maximumConnections: Int, logger: Logger) {
        self.names = names
        self.maximumConnections = maximumConnections
        self.logger = logger
    }

    /// Starts accepting on `listener`, a listening socket this server owns
    /// (and closes at `stop()`) from now on. The handlers come here, not to
    /// `init`, so they may use the server that owns this one.
    package func start(listener: Int32, handlers: Handlers) {
        state.withLock {
            $0.listener = listener
            $0.handlers = handlers
        }
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop(listener, handlers)
            threads.leave()
        }
        thread.name = names.acceptThread
        thread.start()
    }

    /// Whether `stop()` has begun: errors after it are the stop's own doing, not worth a log line.
    package var stopping: Bool { state.withLock { $0.stopping } }

    /// Stops accepting, wakes open connections, waits up to `timeout` for
    /// their threads and closes the listening socket. False when the server
    /// was not listening (never started, or already stopped).
    @discardableResult
    package func stop(timeout: Duration) -> Bool {
        let (listener, handlers, connections) = state.withLock { s in
            s.stopping = true
            return (s.listener, s.handlers, Array(s.connections.values))
        }
        guard listener >= 0, let handlers else { return false }
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in connections { handlers.interrupt(connection) }
        let millis = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        if threads.wait(timeout: .now() + .milliseconds(millis)) == .timedOut {
            logger.warning("\(names.busyAtShutdown)")
        }
        state.withLock { s in
            if s.listener >= 0 { close(s.listener) }
            s.listener = -1
            // The handlers usually hold the owning server: let it go.
            s.handlers = nil
        }
        return true
    }

    private func acceptLoop(_ listener: Int32, _ handlers: Handlers) {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if !stopping { logger.error("\(names.acceptFailed)", metadata: ["errno": "\(errno)"]) }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let connection = handlers.open(fd, Self.peer(address))
            let maximum = maximumConnections
            let admission = state.withLock { s -> Admission in
                guard !s.stopping else { return .stopping }
                guard s.connections.count < maximum else { return .full }
                s.nextKey += 1
                s.connections[s.nextKey] = connection
                return .admitted(key: s.nextKey)
            }
            let key: Int
            switch admission {
            case .stopping:
                handlers.release(connection)
                return
            case .full:
                handlers.refuse(connection, maximum)
                handlers.release(connection)
                continue
            case .admitted(let admitted): key = admitted
            }
            threads.enter()
            let thread = Thread { [self] in
                handlers.serve(connection)
                // Forgotten before released, so `stop()` never wakes a
                // descriptor number the system may already have reused.
                state.withLock { _ = $0.connections.removeValue(forKey: key) }
                handlers.release(connection)
                threads.leave()
            }
            thread.name = names.connectionThread
            thread.start()
        }
    }

    /// "host:port" of an IPv4 peer; a Unix socket's peers have no name.
    private static func peer(_ address: sockaddr_storage) -> String {
        guard Int32(address.ss_family) == AF_INET else { return "" }
        return withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { TCPAddress.describe($0.pointee) }
        }
    }
}

import Foundation
import Logging
import ParleySocket
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Answers control requests; the daemon's ``DaemonController`` implements it.
public protocol ControlHandling: Sendable {
    func handle(_ request: ControlRequest) async -> ControlResponse
}

/// What one control connection, and all of them together, may hold.
/// `parley` sends a request of a few hundred bytes and waits for the answer;
/// anything far beyond that is a broken or hostile client, and it must not
/// keep the daemon's threads or memory.
public struct ControlLimits: Sendable, Hashable {
    /// Connections served at once; one more is answered with a refusal and closed.
    public var maximumClients = 16
    /// The longest request line, in bytes.
    public var maximumRequestBytes = 64 * 1024
    /// A connection that sends nothing (or stops halfway through a line) for
    /// this long is closed; so is one that does not read its answers, or
    /// takes longer than this to send one line.
    public var idleTimeout: Duration = .seconds(10)

    public init() {}
}

/// The Unix socket `parley` talks to.
///
/// The socket file gets mode 0660 (owner and `control_group` only) inside a
/// directory created 0750 if missing. Connections are rare and short, so
/// each runs on its own thread with blocking reads; a request is handed to
/// the async handler and the thread waits for the answer. ``ControlLimits``
/// bound the threads, the line buffer and how long a silent client stays. `stop()` wakes
/// the blocked `accept`/`read` calls with `shutdown(2)` and joins the threads.
public final class ControlServer: Sendable {
    public let path: String
    private let group: String?
    private let handler: any ControlHandling
    private let logger: Logger
    public let limits: ControlLimits
    /// Accepts and runs the connections (shared with Wyoming's server);
    /// a connection is its descriptor.
    private let server: SocketServer<Int32>

    public init(path: String, group: String? = nil, handler: any ControlHandling, logger: Logger,
                limits: ControlLimits = ControlLimits()) {
        self.limits = limits
        self.path = path
        self.group = group
        self.handler = handler
        self.logger = logger
        server = SocketServer(
            names: .init(acceptThread: "parley-control", connectionThread: "parley-control-client",
                         acceptFailed: "control socket accept failed",
                         busyAtShutdown: "control connections still busy at shutdown"),
            maximumConnections: limits.maximumClients, logger: logger)
    }

    /// Creates the socket and starts accepting connections.
    public func start() throws {
        try prepareDirectory()
        try removeStaleSocket()
        let fd = try UnixSocket.listen(path: path, mode: 0o660, group: try group.map(groupID), backlog: 16)
        let idleTimeout = limits.idleTimeout
        server.start(
            listener: fd,
            handlers: .init(
                open: { fd, _ in
                    // A silent client, or one that never reads, is dropped (EAGAIN ends it).
                    SocketOptions.setIdleTimeout(fd, idleTimeout)
                    return fd
                },
                serve: { [self] fd in serve(fd) },
                refuse: { [self] fd, maximum in refuse(fd, "too many control connections (\(maximum) open); try again") },
                // Woken at stop; closed only once its thread is done with it.
                interrupt: { fd in _ = shutdown(fd, Int32(SHUT_RDWR)) },
                release: { fd in _ = close(fd) }))
        logger.info("control socket listening", metadata: ["path": "\(path)"])
    }

    /// Stops accepting, ends open connections, waits up to `timeout` for
    /// their threads and removes the socket file.
    public func stop(timeout: Duration = .seconds(1)) {
        guard server.stop(timeout: timeout) else { return }
        unlink(path)
    }

    private func prepareDirectory() throws {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) else { return }
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
    }

    /// A socket file left by a daemon that died is removed; a live one means
    /// another daemon runs, and this one must not steal its socket.
    private func removeStaleSocket() throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw ControlServerError("\(path) exists and is not a socket; remove it or set control_socket")
        }
        if let fd = try? UnixSocket.connect(to: path) {
            close(fd)
            throw ControlServerError("another parleyd is already listening on \(path)")
        }
        unlink(path)
    }

    /// The group `control_group` names, which the socket file is given.
    private func groupID(_ name: String) throws -> (name: String, id: gid_t) {
        guard let entry = getgrnam(name) else {
            throw ControlServerError("control_group \"\(name)\" does not exist")
        }
        return (name, entry.pointee.gr_gid)
    }

    /// Answers a connection past the limit with one failure line (the server then closes it).
    private func refuse(_ fd: Int32, _ message: String) {
        logger.warning("control connection refused", metadata: ["why": "\(message)"])
        if let line = try? ControlCoding.encode(ControlResponse.failure(message)) {
            try? UnixSocket.writeAll(fd, line, path: path)
        }
    }

    /// One connection: a response line for every request line until EOF.
    private func serve(_ fd: Int32) {
        var reader = LineReader(fd: fd, path: path, maxLine: limits.maximumRequestBytes, lineTimeLimit: limits.idleTimeout)
        do {
            while let line = try reader.next() {
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                let response = respond(to: line)
                try UnixSocket.writeAll(fd, try ControlCoding.encode(response), path: path)
            }
        } catch {
            if !server.stopping {
                logger.debug("control connection ended", metadata: ["error": "\(error)"])
            }
        }
    }

    private func respond(to line: Data) -> ControlResponse {
        let request: ControlRequest
        do { request = try ControlRequest(line: line) } catch { return .failure(error.description) }
        let handler = self.handler
        return ConnectionThread.run { await handler.handle(request) }
    }
}

public struct ControlServerError: Error, CustomStringConvertible, Equatable {
    public var description: String
    init(_ description: String) { self.description = description }
}


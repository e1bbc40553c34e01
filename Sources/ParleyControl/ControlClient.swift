import Foundation
import ParleyConfiguration
import ParleySocket

#if canImport(Glibc)
    import Glibc
#endif

/// Why the control tool could not get an answer, in words for the person
/// at the terminal.
public enum ControlClientError: Error, Equatable, CustomStringConvertible {
    /// No socket file, or nobody listening on it (ENOENT, ECONNREFUSED).
    case notRunning(path: String)
    /// The socket exists but the caller may not use it (EACCES, EPERM).
    case permissionDenied(path: String)
    /// Any other failure talking to the socket.
    case io(String)
    /// The daemon answered something that is not a response.
    case badResponse(String)
    /// The daemon refused the request and said why.
    case refused(String)

    public var description: String {
        switch self {
        case .notRunning(let path):
            "parleyd is not running (nothing listening on \(path)). Start it with `systemctl start parleyd` "
                + "or `scripts/run.sh`, or name another socket with --socket or PARLEY_SOCKET."
        case .permissionDenied(let path):
            "permission denied on \(path): run as root or as a member of the socket's group "
                + "(control_group in parley.yaml)."
        case .io(let detail): "cannot talk to parleyd: \(detail)"
        case .badResponse(let detail): "parleyd sent an unreadable answer: \(detail)"
        case .refused(let reason): reason
        }
    }
}

extension ControlClientError {
    /// What a failed connect means to the person at the terminal.
    init(connectFailure error: SystemCallError) {
        switch error.errno {
        case ENOENT, ECONNREFUSED, ENOTDIR: self = .notRunning(path: error.path)
        case EACCES, EPERM: self = .permissionDenied(path: error.path)
        default: self = .io(error.description)
        }
    }
}

/// The client end of the control socket, used by the `parley` subcommands.
/// Blocking and synchronous: one request, one answer.
public final class ControlClient {
    public let path: String
    private let fd: Int32
    private var reader: LineReader

    /// The socket the tool talks to: `--socket`, else `$PARLEY_SOCKET`, else
    /// `control_socket` from the configuration (`--config`, `$PARLEY_CONFIG`,
    /// /etc/parley/parley.yaml) when readable, else the default.
    public static func socketPath(
        flag: String?, configFlag: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let env = environment["PARLEY_SOCKET"], !env.isEmpty { return env }
        if let loaded = try? ConfigLoader.load(flag: configFlag, environment: environment) {
            return loaded.config.controlSocket
        }
        return ParleyConfig().controlSocket
    }

    /// Connects; throws ``ControlClientError`` with a clear reason.
    public init(path: String) throws(ControlClientError) {
        self.path = path
        do {
            fd = try UnixSocket.connect(to: path)
        } catch let error as SystemCallError {
            throw ControlClientError(connectFailure: error)
        } catch {
            throw .io("\(error)")
        }
        reader = LineReader(fd: fd, path: path, maxLine: 64 << 20)
    }

    deinit {
        close(fd)
    }

    /// Sends one request and returns the daemon's answer; a refusal
    /// (`ok: false`) is thrown as ``ControlClientError/refused(_:)``.
    public func send(_ request: ControlRequest) throws(ControlClientError) -> ControlResponse {
        let line: Data?
        // A daemon past its connection limit writes why and closes at once;
        // the request may then meet a closed socket (EPIPE), but the reason
        // is still there to read, and it is what the person needs to see.
        var writeError: (any Error)?
        do {
            try UnixSocket.writeAll(fd, try ControlCoding.encode(request), path: path)
        } catch {
            writeError = error
        }
        do {
            line = try reader.next()
        } catch {
            throw .io("\(writeError ?? error)")
        }
        guard let line else {
            if let writeError { throw .io("\(writeError)") }
            throw .io("parleyd closed the connection without answering")
        }
        let response: ControlResponse
        do {
            response = try ControlCoding.decode(ControlResponse.self, from: line)
        } catch {
            throw .badResponse(String(decoding: line.prefix(200), as: UTF8.self))
        }
        guard response.ok else { throw .refused(response.error ?? "parleyd refused the request") }
        return response
    }
}

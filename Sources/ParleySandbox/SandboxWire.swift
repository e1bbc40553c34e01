import Foundation

/// The conversation between parleyd and the sandbox runner
/// (`parley-app-runner`), which systemd starts once per connection to
/// `parley-app.socket` (Accept=yes), each time as a fresh instance of
/// `parley-app@.service`: the system user `parley-app`, a cgroup of its own
/// with MemoryMax, TasksMax and CPUQuota, no access to parleyd's state.
///
/// 1. parleyd connects and sends one ``SandboxRequest`` as a JSON line,
///    with four descriptors (SCM_RIGHTS) on its first byte: the handler's
///    standard input, output and error (pipes whose other ends parleyd
///    keeps, so it reads and writes the handler exactly as one it started
///    itself) and the app's folder, opened (the runner changes into it by
///    descriptor, so the handler needs no right to the folders above it).
/// 2. The runner starts the handler and answers with ``SandboxReport``
///    lines: `started PID`, then `exited STATUS` or `killed SIGNAL` when it
///    ends (or `failed ERRNO reason` when it could not start).
/// 3. parleyd closing (or shutting down) the connection means "kill it":
///    the runner kills the handler's group and exits, and systemd then
///    kills whatever is left in the instance's cgroup, including a child
///    that left the group with setsid(). When the handler ends by itself,
///    the runner reports it and exits: the same cgroup clean-up follows.
public enum SandboxWire {
    /// `parley-app.socket`'s ListenStream: parleyd's `handler_sandbox: auto`
    /// uses the sandbox when this socket exists.
    public static let defaultSocket = "/run/parley-app.sock"
    /// The request line is at most this long (an app's argv and environment).
    public static let maximumRequestBytes = 64 * 1024
    /// Standard input, output, error and the app's folder.
    public static let descriptorCount = 4
}

/// What parleyd asks the runner to start.
public struct SandboxRequest: Codable, Sendable, Equatable {
    /// The app's identifier, for the runner's log lines.
    public var app: String
    /// The handler's command (the manifest's `handler`), run in the app's folder.
    public var argv: [String]
    /// Added to the runner's environment (PARLEY_APP_DATA and the like).
    public var environment: [String: String]
    /// The app's folder as parleyd names it: the runner changes into it by
    /// this path when it is the folder whose descriptor came with the
    /// request (the same device and inode). The descriptor alone would do,
    /// but it belongs to parleyd's mount namespace (its unit's
    /// ProtectSystem): a handler standing in it could not name its own
    /// folder (getcwd fails), which shells and interpreters need.
    public var directory: String?
    /// RLIMIT_DATA for the handler, as a handler parleyd starts itself gets
    /// (HandlerLimits.memoryBytes); the unit's MemoryMax caps the whole cgroup besides.
    public var memoryBytes: Int?

    public init(app: String, argv: [String], environment: [String: String] = [:], directory: String? = nil, memoryBytes: Int? = nil) {
        self.app = app
        self.argv = argv
        self.environment = environment
        self.directory = directory
        self.memoryBytes = memoryBytes
    }

    /// The request as sent: one JSON object and a newline.
    public func line() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(self) + Data([0x0A])
    }

    /// Why a received request cannot be run, in words for the journal.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notJSON(String)
        /// Not all of it came: a time-out, a hang-up, descriptors missing.
        case incomplete(String)
        case noCommand
        case tooLong
        public var description: String {
            switch self {
            case .notJSON(let reason): "the request is not a JSON object with app, argv and environment: \(reason)"
            case .incomplete(let reason): "the request did not arrive whole: \(reason)"
            case .noCommand: "the request's argv is empty: there is no program to start"
            case .tooLong: "the request is longer than \(SandboxWire.maximumRequestBytes) bytes"
            }
        }
    }

    /// Reads one request line (without its newline).
    public static func parse(_ line: Data) throws(Problem) -> SandboxRequest {
        guard line.count <= SandboxWire.maximumRequestBytes else { throw .tooLong }
        let request: SandboxRequest
        do {
            request = try JSONDecoder().decode(SandboxRequest.self, from: line)
        } catch {
            throw .notJSON(String(describing: error).prefix(200).description)
        }
        guard let first = request.argv.first, !first.isEmpty else { throw .noCommand }
        return request
    }
}

/// One line from the runner to parleyd.
public enum SandboxReport: Sendable, Equatable {
    case started(pid: Int32)
    case failed(errno: Int32, reason: String)
    case exited(status: Int32)
    case killed(signal: Int32)

    public var line: String {
        switch self {
        case .started(let pid): "started \(pid)\n"
        case .failed(let code, let reason): "failed \(code) \(reason.replacingOccurrences(of: "\n", with: " "))\n"
        case .exited(let status): "exited \(status)\n"
        case .killed(let signal): "killed \(signal)\n"
        }
    }

    /// Reads one line (without its newline); nil when it is none of the four.
    public init?(line: Substring) {
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard words.count >= 2, let number = Int32(words[1]) else { return nil }
        switch words[0] {
        case "started" where words.count == 2 && number > 0: self = .started(pid: number)
        case "failed": self = .failed(errno: number, reason: words.count > 2 ? String(words[2]) : "")
        case "exited" where words.count == 2: self = .exited(status: number)
        case "killed" where words.count == 2: self = .killed(signal: number)
        default: return nil
        }
    }
}

import CParleyProcess
import Foundation
import Logging
import ParleySandbox
import ParleySocket
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a handler process ended, in words for the log.
public struct HandlerExit: Sendable, Hashable, CustomStringConvertible {
    public var status: Int32?
    public var signal: Int32?
    public init(status: Int32?, signal: Int32?) {
        self.status = status
        self.signal = signal
    }
    public var description: String {
        if let signal { return "was killed by signal \(signal)\(Self.signalNames[signal].map { " (\($0))" } ?? "")" }
        return "exited with status \(status ?? -1)"
    }
    static let signalNames: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM",
                                               SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGPIPE: "SIGPIPE"]
}

/// One running handler: its pipes, and a thread that reads its output.
///
/// Started with posix_spawn (CParleyProcess) rather than swift-subprocess:
/// the supervisor needs exactly what that call gives directly — a process
/// group it can kill whole, no inherited descriptors (the control socket,
/// ALSA), a non-blocking standard input, and bounded reads straight off the
/// pipe with one thread blocked in poll(2), so a round trip is one write, one
/// read and one resumed continuation. swift-subprocess runs a process inside
/// a closure scope and hands output through its own buffered sequences;
/// that suits one-shot commands better than a long-lived, restarted peer.
final class HandlerProcess: Sendable {
    enum Event: Sendable {
        /// One line of standard output, newline removed.
        case line(Data)
        /// A line longer than the limit: the process was killed.
        case lineTooLong(Int)
        /// More lines waiting than the limit: the process was killed.
        case flooded(Int)
        /// The process ended (after its output was read to the end).
        case exited(HandlerExit)
        /// The sandbox runner started it: its process id (a handler in the
        /// sandbox has none until then).
        case started(pid_t)
    }

    enum StartError: Error, Sendable, CustomStringConvertible {
        case spawn(program: String, errno: Int32)
        /// The sandbox's socket could not be reached or spoken to.
        case sandbox(socket: String, reason: String)
        var description: String {
            switch self {
            case .spawn(let program, let code):
                code == ENOENT ? "cannot start '\(program)': no such program" : "cannot start '\(program)': \(String(cString: strerror(code)))"
            case .sandbox(let socket, let reason): "cannot start it in the sandbox (\(socket)): \(reason)"
            }
        }
    }

    enum WriteError: Error, Sendable { case notReading, closed }

    /// 0 for a handler in the sandbox until the runner reports it started.
    var pid: pid_t { pidValue.withLock { $0 } }
    let events: AsyncStream<Event>
    /// Whether the sandbox runner started it (``SandboxWire``): then the
    /// runner is its parent and `control` is the connection to the runner.
    let sandboxed: Bool
    private let pidValue: Mutex<pid_t>
    private let control: Mutex<Int32>
    private let input: Mutex<Int32>
    private let queued = Mutex(0)
    /// Set once the process has ended and its output is read to the end.
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    private init(pid: pid_t, input: Int32, control: Int32 = -1, events: AsyncStream<Event>) {
        pidValue = Mutex(pid)
        sandboxed = control >= 0
        self.control = Mutex(control)
        self.input = Mutex(input)
        self.events = events
    }

    /// Starts `argv` in `directory`; its standard error goes to `logger`, each line prefixed with `app`.
    /// `environment` is added to the daemon's own environment.
    static func start(argv: [String], environment: [String: String] = [:], directory: String, app: String, limits: HandlerLimits,
                      logger: Logger, tail: LineTail? = nil) throws(StartError) -> HandlerProcess {
        Self.ignoreBrokenPipes
        if let socket = limits.sandbox {
            return try startSandboxed(socket: socket, argv: argv, environment: environment, directory: directory, app: app,
                                      limits: limits, logger: logger, tail: tail)
        }
        var pid: pid_t = 0
        var fds: [Int32] = [-1, -1, -1]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        let result = CStrings.with(argv) { argvPointer in
            CStrings.with(CStrings.environment(merged)) { envPointer in
                parley_spawn_handler(argvPointer, envPointer, directory, &pid, &fds)
            }
        }
        guard result == 0 else { throw .spawn(program: argv.first ?? "", errno: result) }
        // Set as soon as it runs (posix_spawn returns once the program is
        // executed; an interpreter has allocated little by then).
        if let bytes = limits.memoryBytes {
            let failed = parley_limit_memory(pid, UInt64(bytes))
            if failed != 0 {
                logger.warning("[\(app)] could not cap the handler's memory at \(bytes / 1_048_576) MiB: \(String(cString: strerror(failed)))")
            }
        }
        return begin(pid: pid, fds: fds, control: -1, app: app, limits: limits, logger: logger, tail: tail)
    }

    /// The process and its reader thread, once its pipes are open.
    private static func begin(pid: pid_t, fds: [Int32], control: Int32, app: String, limits: HandlerLimits,
                              logger: Logger, tail: LineTail?) -> HandlerProcess {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let process = HandlerProcess(pid: pid, input: fds[0], control: control, events: stream)
        let reader = OutputReader(process: process, output: fds[1], error: fds[2], control: control, app: app, limits: limits,
                                  logger: logger, tail: tail, continuation: continuation)
        let thread = Thread { reader.run() }
        thread.name = "parley-app"
        thread.start()
        return process
    }

    /// Starts the handler through the sandbox runner at `socket`
    /// (``SandboxWire``): the pipes are made here and their far ends handed
    /// over, so everything after is as for a handler started directly,
    /// except that the runner reports its process id and its end.
    private static func startSandboxed(socket path: String, argv: [String], environment: [String: String], directory: String,
                                       app: String, limits: HandlerLimits, logger: Logger, tail: LineTail?) throws(StartError) -> HandlerProcess {
        let line: Data
        do {
            line = try SandboxRequest(app: app, argv: argv, environment: environment, directory: directory,
                                  memoryBytes: limits.memoryBytes).line()
        } catch {
            throw .sandbox(socket: path, reason: "the request could not be encoded: \(error)")
        }
        guard line.count <= SandboxWire.maximumRequestBytes else {
            throw .sandbox(socket: path, reason: "the handler's command and environment are longer than \(SandboxWire.maximumRequestBytes) bytes")
        }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw .sandbox(socket: path, reason: "its folder \(directory): \(String(cString: strerror(errno)))") }
        defer { close(folder) }
        let connection: Int32
        do {
            connection = try UnixSocket.connect(to: path)
        } catch {
            throw .sandbox(socket: path, reason: "\(error)")
        }
        var parent = [Int32](repeating: -1, count: 3), child = [Int32](repeating: -1, count: 3)
        let made = parley_handler_pipes(&parent, &child)
        guard made == 0 else {
            close(connection)
            throw .sandbox(socket: path, reason: "no pipes: \(String(cString: strerror(made)))")
        }
        let handed = child + [folder]
        let sent = line.withUnsafeBytes { bytes in parley_send_with_fds(connection, bytes.baseAddress, bytes.count, handed, Int32(handed.count)) }
        child.forEach { close($0) }
        guard sent == 0 else {
            close(connection)
            parent.forEach { close($0) }
            throw .sandbox(socket: path, reason: "sending the request: \(String(cString: strerror(sent)))")
        }
        return begin(pid: 0, fds: parent, control: connection, app: app, limits: limits, logger: logger, tail: tail)
    }

    /// A handler that exits makes writes to its pipe fail with EPIPE; the
    /// default SIGPIPE would end the daemon instead.
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Writes a whole line or fails: never blocks (the pipe is non-blocking).
    func send(_ data: Data) throws(WriteError) {
        try input.withLock { fd throws(WriteError) in
            guard fd >= 0 else { throw .closed }
            var offset = 0
            while offset < data.count {
                let written = data.withUnsafeBytes { bytes in write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
                if written > 0 { offset += written; continue }
                if written < 0 && errno == EINTR { continue }
                // A full pipe (64 KiB of requests unread) means the handler stopped reading.
                if written < 0 && errno == EAGAIN { throw .notReading }
                throw .closed
            }
        }
    }

    /// Closes standard input: a handler reading to the end of its input stops.
    func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Returns once the process has ended and its output was read to the end
    /// (standard error logged).
    func waitForExit() async {
        await withCheckedContinuation { continuation in
            let done = ended.withLock { state -> Bool in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    fileprivate func markEnded() {
        let waiters = ended.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Kills the handler and everything it started: its process group and
    /// any descendant that left the group (``ProcessTree``). In the sandbox,
    /// hanging up on the runner does it: the runner kills the group, and
    /// systemd the rest of the instance's cgroup.
    func kill() {
        guard sandboxed else { return ProcessTree.kill(group: pid) }
        control.withLock { fd in
            if fd >= 0 { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    fileprivate func startedInSandbox(_ pid: pid_t) { pidValue.withLock { $0 = pid } }

    fileprivate func closeControl() {
        control.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// The supervisor took one line: frees a place in the bounded queue.
    func consumed() { queued.withLock { $0 -= 1 } }

    /// Counts a line handed over; false when the queue is full.
    fileprivate func enqueue(limit: Int) -> Bool {
        queued.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    deinit { closeInput() }
}

/// The body of a handler's reader thread: bounded line splitting of standard
/// output, rate-limited logging of standard error, and the exit status.
private struct OutputReader: Sendable {
    let process: HandlerProcess
    let output: Int32
    let error: Int32
    /// The connection to the sandbox runner, or -1.
    let control: Int32
    let app: String
    let limits: HandlerLimits
    let logger: Logger
    let tail: LineTail?
    let continuation: AsyncStream<HandlerProcess.Event>.Continuation

    func run() {
        var outLine = [UInt8](), errLine = [UInt8]()
        var discardingOut = false, errTruncated = false
        var logBudget = LogBudget(limits: limits)
        var polls = [pollfd(fd: output, events: Int16(POLLIN), revents: 0), pollfd(fd: error, events: Int16(POLLIN), revents: 0)]
        if control >= 0 { polls.append(pollfd(fd: control, events: Int16(POLLIN), revents: 0)) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var exit: HandlerExit?
        var reports = [UInt8]()
        defer {
            close(output)
            close(error)
            process.closeControl()
        }
        while polls[0].fd >= 0 || polls[1].fd >= 0 {
            let ready = poll(&polls, nfds_t(polls.count), 1000)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                // Output still open but the handler gone: a child of it holds the
                // pipe. Its group is killed so the pipes close.
                if control >= 0 {
                    if exit != nil { process.kill() }
                } else if exit == nil, let ended = reap(wait: false) {
                    exit = ended
                    process.kill()
                }
                continue
            }
            for index in polls.indices where polls[index].fd >= 0 && polls[index].revents != 0 {
                let fd = polls[index].fd
                if fd == control {
                    if !readReports(into: &reports, exit: &exit) { polls[index].fd = -1 }
                    continue
                }
                let count = read(fd, &chunk, chunk.count)
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if count <= 0 {
                    polls[index].fd = -1
                    continue
                }
                if fd == output {
                    for byte in chunk[0..<count] {
                        if byte == 0x0A {
                            if !discardingOut { deliver(outLine, discarding: &discardingOut) }
                            outLine.removeAll(keepingCapacity: true)
                        } else if !discardingOut {
                            outLine.append(byte)
                            if outLine.count > limits.maximumLineBytes {
                                discardingOut = true
                                outLine.removeAll()
                                process.kill()
                                continuation.yield(.lineTooLong(limits.maximumLineBytes))
                            }
                        }
                    }
                } else {
                    for byte in chunk[0..<count] {
                        if byte == 0x0A {
                            tail?.append(errLine, truncated: errTruncated)
                            logBudget.log(errLine, truncated: errTruncated, app: app, logger: logger)
                            errLine.removeAll(keepingCapacity: true)
                            errTruncated = false
                        } else if errLine.count < limits.maximumLogLineBytes {
                            errLine.append(byte)
                        } else {
                            errTruncated = true
                        }
                    }
                }
            }
        }
        if !outLine.isEmpty && !discardingOut { deliver(outLine, discarding: &discardingOut) }
        if !errLine.isEmpty {
            tail?.append(errLine, truncated: errTruncated)
            logBudget.log(errLine, truncated: errTruncated, app: app, logger: logger)
        }
        logBudget.flush(app: app, logger: logger)
        if control >= 0 && exit == nil && polls[2].fd >= 0 {
            // The pipes closed first: the runner's last line follows at once.
            var waiting = [polls[2]]
            let deadline = ContinuousClock.now + .seconds(3)
            while exit == nil, deadline > .now, poll(&waiting, 1, 100) >= 0 {
                if waiting[0].revents != 0 && !readReports(into: &reports, exit: &exit) { break }
            }
        }
        // A runner gone without a word was killed with its cgroup (MemoryMax, a stop).
        let ending = exit ?? (control >= 0 ? HandlerExit(status: nil, signal: SIGKILL) : reap(wait: true))
            ?? HandlerExit(status: nil, signal: nil)
        process.markEnded()
        continuation.yield(.exited(ending))
        continuation.finish()
    }

    /// Reads what the sandbox runner wrote (``SandboxReport`` lines); false
    /// once the connection is closed.
    private func readReports(into pending: inout [UInt8], exit: inout HandlerExit?) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(control, &buffer, buffer.count)
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return true }
        guard count > 0 else { return false }
        pending += buffer[0..<count]
        while let newline = pending.firstIndex(of: 0x0A) {
            let line = String(decoding: pending[..<newline], as: UTF8.self)
            pending.removeSubrange(...newline)
            switch SandboxReport(line: Substring(line)) {
            case .started(let pid):
                process.startedInSandbox(pid)
                continuation.yield(.started(pid))
            case .failed(_, let reason):
                logger.error("[\(app)] the sandbox could not start the handler: \(reason)")
                exit = HandlerExit(status: 127, signal: nil)
            case .exited(let status): exit = HandlerExit(status: status, signal: nil)
            case .killed(let signal): exit = HandlerExit(status: nil, signal: signal)
            case nil: logger.warning("[\(app)] the sandbox runner wrote a line that is not a report: \(line.prefix(120))")
            }
        }
        // A runner that never ends its line is cut off (its lines are short).
        if pending.count > 1024 { pending.removeAll() }
        return true
    }

    private func deliver(_ line: [UInt8], discarding: inout Bool) {
        guard process.enqueue(limit: limits.maximumQueuedLines) else {
            discarding = true
            process.kill()
            continuation.yield(.flooded(limits.maximumQueuedLines))
            return
        }
        continuation.yield(.line(Data(line)))
    }

    private func reap(wait: Bool) -> HandlerExit? {
        var status: Int32 = 0
        let result = waitpid(process.pid, &status, wait ? 0 : WNOHANG)
        guard result == process.pid else { return nil }
        // WIFEXITED / WTERMSIG by hand: the macros are not imported.
        let signal = status & 0x7F
        return signal == 0 ? HandlerExit(status: (status >> 8) & 0xFF, signal: nil) : HandlerExit(status: nil, signal: signal)
    }
}

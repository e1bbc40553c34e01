import CParleyProcess
import Foundation
import Logging
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
    }

    enum StartError: Error, Sendable, CustomStringConvertible {
        case spawn(program: String, errno: Int32)
        var description: String {
            switch self {
            case .spawn(let program, let code):
                code == ENOENT ? "cannot start '\(program)': no such program" : "cannot start '\(program)': \(String(cString: strerror(code)))"
            }
        }
    }

    enum WriteError: Error, Sendable { case notReading, closed }

    let pid: pid_t
    let events: AsyncStream<Event>
    private let input: Mutex<Int32>
    private let queued = Mutex(0)
    /// Set once the process has ended and its output is read to the end.
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    private init(pid: pid_t, input: Int32, events: AsyncStream<Event>) {
        self.pid = pid
        self.input = Mutex(input)
        self.events = events
    }

    /// Starts `argv` in `directory`; its standard error goes to `logger`, each line prefixed with `app`.
    /// `environment` is added to the daemon's own environment.
    static func start(argv: [String], environment: [String: String] = [:], directory: String, app: String, limits: HandlerLimits,
                      logger: Logger, tail: LineTail? = nil) throws(StartError) -> HandlerProcess {
        Self.ignoreBrokenPipes
        var pid: pid_t = 0
        var fds: [Int32] = [-1, -1, -1]
        let cArguments = argv.map { strdup($0) } + [nil]
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        let cEnvironment = merged.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        let result = cArguments.withUnsafeBufferPointer { arguments in
            cEnvironment.withUnsafeBufferPointer { environment in
                arguments.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: arguments.count) { argvPointer in
                    environment.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: environment.count) { envPointer in
                        parley_spawn_handler(argvPointer, envPointer, directory, &pid, &fds)
                    }
                }
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
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let process = HandlerProcess(pid: pid, input: fds[0], events: stream)
        let reader = OutputReader(process: process, output: fds[1], error: fds[2], app: app, limits: limits,
                                  logger: logger, tail: tail, continuation: continuation)
        let thread = Thread { reader.run() }
        thread.name = "parley-app"
        thread.start()
        return process
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
    /// any descendant that left the group (``ProcessTree``).
    func kill() { ProcessTree.kill(group: pid) }

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
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var exit: HandlerExit?
        defer {
            close(output)
            close(error)
        }
        while polls.contains(where: { $0.fd >= 0 }) {
            let ready = poll(&polls, nfds_t(polls.count), 1000)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                // Output still open but the handler gone: a child of it holds the
                // pipe. Its group is killed so the pipes close.
                if exit == nil, let ended = reap(wait: false) {
                    exit = ended
                    process.kill()
                }
                continue
            }
            for index in polls.indices where polls[index].fd >= 0 && polls[index].revents != 0 {
                let fd = polls[index].fd
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
        let ending = exit ?? reap(wait: true) ?? HandlerExit(status: nil, signal: nil)
        process.markEnded()
        continuation.yield(.exited(ending))
        continuation.finish()
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

/// At most `logLinesPerWindow` standard-error lines per window reach the log;
/// the rest are counted and the count logged, so a chatty handler cannot
/// flood the journal.
private struct LogBudget {
    let limits: HandlerLimits
    var windowStart = ContinuousClock.now
    var logged = 0
    var dropped = 0

    init(limits: HandlerLimits) { self.limits = limits }

    mutating func log(_ bytes: [UInt8], truncated: Bool, app: String, logger: Logger) {
        let now = ContinuousClock.now
        if now - windowStart > limits.logWindow {
            flush(app: app, logger: logger)
            windowStart = now
            logged = 0
        }
        guard logged < limits.logLinesPerWindow else {
            dropped += 1
            return
        }
        logged += 1
        let text = String(decoding: bytes, as: UTF8.self)
        logger.notice("[\(app)] \(text)\(truncated ? " …(cut)" : "")")
    }

    mutating func flush(app: String, logger: Logger) {
        if dropped > 0 { logger.notice("[\(app)] \(dropped) more lines of standard error not logged") }
        dropped = 0
    }
}

/// The last lines a handler wrote to standard error, whatever the log's
/// budget let through (the page shows them beside the handler's state):
/// at most `capacity` lines, each at most the log's line length.
public final class LineTail: Sendable {
    public let capacity: Int
    private let lines: Mutex<[String]>

    public init(capacity: Int = 20) {
        self.capacity = max(1, capacity)
        lines = Mutex([])
    }

    func append(_ bytes: [UInt8], truncated: Bool) {
        let text = String(decoding: bytes, as: UTF8.self) + (truncated ? " …(cut)" : "")
        lines.withLock { current in
            current.append(text)
            if current.count > capacity { current.removeFirst(current.count - capacity) }
        }
    }

    /// Oldest first.
    public var recent: [String] { lines.withLock { $0 } }
}

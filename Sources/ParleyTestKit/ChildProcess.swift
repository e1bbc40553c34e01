import Foundation
import Subprocess
import Synchronization
import SystemPackage

/// A program started by a test (parleyd, parley, a tool), run with
/// swift-subprocess. Its standard output and error are drained into memory
/// *while it runs*: a child writing more than a pipe holds (64 KiB on Linux)
/// never blocks on a test that reads only once it stops it.
///
/// Standard input is a pipe that gets `input` (if any) and is then closed,
/// so nothing waits on the test runner's own terminal.
///
/// What is kept is bounded: `outputLimit` bytes of each stream (the rest is
/// counted, and the text says how much went), and lines longer than that
/// keep their beginning. Standard output's lines wait for `outputLines`'
/// reader in a queue of at most `outputLimit` bytes (lines past it are
/// dropped), or, with `lineBacklog`, of that many lines: then the output is
/// not read while the queue is full, so a child writing faster than the test
/// reads blocks on the pipe instead of running ahead of it (the crash test's
/// writer, killed after an acknowledgement, must not run thousands of
/// writes past it). That hold ends once the test kills, stops or waits for
/// the child, so none of those can hang on a full pipe.
public final class ChildProcess: Sendable {
    /// How a child ended, with everything it wrote.
    public struct Exit: Sendable, CustomStringConvertible {
        /// The exit code, nil if a signal ended it.
        public var code: Int32?
        /// The signal that ended it, nil if it exited.
        public var signal: Int32?
        public var standardOutput: String
        public var standardError: String

        /// Exited with code 0.
        public var succeeded: Bool { code == 0 }
        /// The exit code, or 128 + the signal as a shell reports it.
        public var status: Int32 { code ?? 128 + (signal ?? 0) }

        public var description: String {
            let how = code.map { "exited with \($0)" } ?? "killed by signal \(signal ?? 0)"
            return "\(how); stderr: \(standardError)"
        }
    }

    /// The child's process identifier.
    public let processIdentifier: pid_t
    private let shared: Shared
    private let finished: Task<TerminationStatus, any Error>

    private init(processIdentifier: pid_t, shared: Shared, finished: Task<TerminationStatus, any Error>) {
        self.processIdentifier = processIdentifier
        self.shared = shared
        self.finished = finished
    }

    /// The default `outputLimit`: far more than any test's child writes on
    /// purpose, far less than a runaway one would.
    public static let defaultOutputLimit = 16 << 20

    /// Starts `executable` and returns once it is running; throws if it
    /// cannot be started. `environment` nil inherits the test's environment,
    /// otherwise it is the whole environment. `outputLimit` bounds the bytes
    /// kept of each stream; `lineBacklog`, if set, how many lines of standard
    /// output wait unread before the child is held (see the type's comment).
    public static func start(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, input: String? = nil,
        outputLimit: Int = defaultOutputLimit, lineBacklog: Int? = nil
    ) async throws -> ChildProcess {
        precondition(outputLimit > 0 && (lineBacklog ?? 1) > 0)
        _ = ignoreBrokenPipes
        let shared = Shared(outputLimit: outputLimit, lineBacklog: lineBacklog)
        let configuration = Configuration(
            executable: .path(FilePath(executable)), arguments: Arguments(arguments),
            environment: environment.map { variables in
                .custom(Dictionary(uniqueKeysWithValues: variables.compactMap { key, value in
                    Environment.Key(rawValue: key).map { ($0, value) }
                }))
            } ?? .inherit,
            workingDirectory: workingDirectory.map { FilePath($0) })
        let finished = Task<TerminationStatus, any Error> {
            do {
                let result = try await Subprocess.run(configuration, input: .inputWriter, output: .sequence, error: .sequence) {
                    execution in
                    shared.started(execution)
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            if let input { _ = try? await execution.standardInputWriter.write(input) }
                            try? await execution.standardInputWriter.finish()
                        }
                        group.addTask { await shared.drain(execution.standardOutput, into: \.output) }
                        group.addTask { await shared.drain(execution.standardError, into: \.errors) }
                    }
                    shared.streamsClosed()
                }
                shared.exited()
                return result.terminationStatus
            } catch {
                shared.failedToStart(error)
                shared.exited()
                throw error
            }
        }
        let pid = try await shared.waitUntilStarted()
        return ChildProcess(processIdentifier: pid, shared: shared, finished: finished)
    }

    /// A child that exits before reading its input (`parley chat` refusing
    /// its options) closes the pipe; writing to it would raise SIGPIPE and
    /// end the whole test runner. Ignored, the write fails with EPIPE instead
    /// (and the child's exit says what happened).
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Runs `executable` to its end and returns what it wrote.
    public static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, input: String? = nil
    ) async throws -> Exit {
        try await start(
            executable, arguments, environment: environment, workingDirectory: workingDirectory, input: input
        ).wait()
    }

    /// True until the child has exited and been reaped.
    public var isRunning: Bool { shared.isRunning }

    /// What it has written to standard output so far.
    public var standardOutput: String { shared.text(\.output) }
    /// What it has written to standard error so far.
    public var standardError: String { shared.text(\.errors) }

    /// Standard output line by line as it arrives, ending when the child
    /// closes it (or when the reading task is cancelled). One reader.
    public var outputLines: AsyncStream<String> {
        let shared = self.shared
        return AsyncStream(unfolding: { await shared.nextLine() })
    }

    /// Sends SIGTERM (a no-op once it has exited).
    public func terminate() { shared.send(.terminate) }

    /// Sends SIGKILL (a no-op once it has exited).
    public func kill() { shared.send(.kill) }

    /// Waits for the child to exit and returns how, with all its output.
    public func wait() async throws -> Exit {
        // Nobody waiting for the exit reads lines any more: a held child
        // would never exit.
        shared.releaseLines()
        let status = try await finished.value
        var exit = Exit(code: nil, signal: nil, standardOutput: standardOutput, standardError: standardError)
        switch status {
        case .exited(let code): exit.code = code
        case .signaled(let signal): exit.signal = signal
        }
        return exit
    }

    /// Sends SIGTERM and waits for the exit.
    public func stop() async throws -> Exit {
        terminate()
        return try await wait()
    }

    /// The state the running child and the test share, behind one lock.
    private final class Shared: Sendable {
        struct State {
            var output: [UInt8] = []
            var errors: [UInt8] = []
            /// Bytes past `outputLimit`, not kept.
            var outputDropped = 0
            var errorsDropped = 0
            var pendingLine: [UInt8] = []
            /// The pending line grew past `outputLimit`: the rest of it, up
            /// to its newline, is not kept.
            var discardingLine = false
            /// Lines waiting for the reader, from `lineHead` on.
            var lineQueue: [String] = []
            var lineHead = 0
            var queuedLineBytes = 0
            var droppedLines = 0
            var linesEnded = false
            /// The reader waiting for a line while the queue is empty.
            var lineReader: CheckedContinuation<String?, Never>?
            /// The drain waiting for room in the queue (`lineBacklog`).
            var roomWaiter: CheckedContinuation<Void, Never>?
            /// The test killed, stopped or waits for the child: lines no longer hold it.
            var linesReleased = false
            /// Valid while the streams are open: the run call closes the
            /// process descriptor signals go through only after that.
            var execution: Execution<CustomWriteInput, SequenceOutput, SequenceOutput>?
            var started: CheckedContinuation<pid_t, any Error>?
            var startResult: Result<pid_t, any Error>?
            var running = true

            var queuedLines: Int { lineQueue.count - lineHead }

            mutating func popLine() -> String? {
                guard lineHead < lineQueue.count else { return nil }
                let line = lineQueue[lineHead]
                lineHead += 1
                queuedLineBytes -= line.utf8.count
                // Compacted once half is read, so popping stays cheap.
                if lineHead * 2 >= lineQueue.count {
                    lineQueue.removeFirst(lineHead)
                    lineHead = 0
                }
                return line
            }
        }

        let state = Mutex(State())
        let outputLimit: Int
        let lineBacklog: Int?

        init(outputLimit: Int, lineBacklog: Int?) {
            self.outputLimit = outputLimit
            self.lineBacklog = lineBacklog
        }

        func started(_ execution: Execution<CustomWriteInput, SequenceOutput, SequenceOutput>) {
            let waiter = state.withLock { state in
                state.execution = execution
                state.startResult = .success(execution.processIdentifier.value)
                defer { state.started = nil }
                return state.started
            }
            waiter?.resume(returning: execution.processIdentifier.value)
        }

        func failedToStart(_ error: any Error) {
            let waiter = state.withLock { state in
                if state.startResult == nil { state.startResult = .failure(error) }
                defer { state.started = nil }
                return state.started
            }
            waiter?.resume(throwing: error)
        }

        func waitUntilStarted() async throws -> pid_t {
            try await withCheckedThrowingContinuation { continuation in
                let known = state.withLock { state in
                    if state.startResult == nil { state.started = continuation }
                    return state.startResult
                }
                if let known { continuation.resume(with: known) }
            }
        }

        func drain(_ stream: SubprocessOutputSequence, into buffer: WritableKeyPath<State, [UInt8]>) async {
            let dropped: WritableKeyPath<State, Int> = buffer == \State.output ? \.outputDropped : \.errorsDropped
            let limit = outputLimit
            do {
                for try await chunk in stream {
                    let bytes = chunk.withUnsafeBytes { Array($0) }
                    let complete = state.withLock { state -> [String] in
                        let room = max(0, limit - state[keyPath: buffer].count)
                        state[keyPath: buffer] += bytes.prefix(room)
                        state[keyPath: dropped] += max(0, bytes.count - room)
                        guard buffer == \State.output else { return [] }
                        return Self.splitLines(bytes[...], into: &state, limit: limit)
                    }
                    for line in complete { await enqueue(line) }
                }
            } catch {
                // The child's end of the pipe failed: what arrived is kept.
            }
            if buffer == \State.output { endLines() }
        }

        /// Appends `bytes` to the pending line and returns the lines it completes.
        private static func splitLines(_ bytes: ArraySlice<UInt8>, into state: inout State, limit: Int) -> [String] {
            let newline = UInt8(ascii: "\n")
            var bytes = bytes
            var lines: [String] = []
            if state.discardingLine {
                guard let end = bytes.firstIndex(of: newline) else { return [] }
                lines.append(String(decoding: state.pendingLine, as: UTF8.self))
                state.pendingLine = []
                state.discardingLine = false
                bytes = bytes[(end + 1)...]
            }
            state.pendingLine += bytes
            var start = state.pendingLine.startIndex
            while let end = state.pendingLine[start...].firstIndex(of: newline) {
                let kept = min(end, start + limit)
                lines.append(String(decoding: state.pendingLine[start..<kept], as: UTF8.self))
                start = end + 1
            }
            state.pendingLine.removeSubrange(..<start)
            if state.pendingLine.count > limit {
                state.pendingLine.removeSubrange(limit...)
                state.discardingLine = true
            }
            return lines
        }

        /// Hands `line` to the waiting reader or queues it; with
        /// `lineBacklog`, first waits for room (which stops this stream
        /// being read, so the child blocks once the pipe is full).
        private func enqueue(_ line: String) async {
            if let backlog = lineBacklog {
                await withCheckedContinuation { (room: CheckedContinuation<Void, Never>) in
                    let go = state.withLock { state in
                        if state.linesReleased || state.queuedLines < backlog { return true }
                        state.roomWaiter = room
                        return false
                    }
                    if go { room.resume() }
                }
            }
            let limit = outputLimit
            let reader = state.withLock { state -> CheckedContinuation<String?, Never>? in
                if let reader = state.lineReader {
                    state.lineReader = nil
                    return reader
                }
                if lineBacklog == nil && state.queuedLineBytes + line.utf8.count > limit {
                    state.droppedLines += 1
                } else {
                    state.lineQueue.append(line)
                    state.queuedLineBytes += line.utf8.count
                }
                return nil
            }
            reader?.resume(returning: line)
        }

        /// The next line of standard output, nil once it has ended or the
        /// reading task is cancelled.
        func nextLine() async -> String? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (reader: CheckedContinuation<String?, Never>) in
                    let (answer, room) = state.withLock { state -> (String??, CheckedContinuation<Void, Never>?) in
                        if let line = state.popLine() {
                            defer { state.roomWaiter = nil }
                            return (.some(line), state.roomWaiter)
                        }
                        if state.linesEnded || Task.isCancelled { return (.some(nil), nil) }
                        state.lineReader = reader
                        return (nil, nil)
                    }
                    room?.resume()
                    if let answer { reader.resume(returning: answer) }
                }
            } onCancel: {
                let reader = state.withLock { state in
                    defer { state.lineReader = nil }
                    return state.lineReader
                }
                reader?.resume(returning: nil)
            }
        }

        private func endLines() {
            let reader = state.withLock { state in
                state.linesEnded = true
                defer { state.lineReader = nil }
                return state.lineReader
            }
            reader?.resume(returning: nil)
        }

        /// Lines no longer hold the child (it is being killed, stopped or waited for).
        func releaseLines() {
            let room = state.withLock { state in
                state.linesReleased = true
                defer { state.roomWaiter = nil }
                return state.roomWaiter
            }
            room?.resume()
        }

        func streamsClosed() {
            state.withLock { $0.execution = nil }
        }

        func exited() {
            state.withLock { $0.running = false }
            endLines()
        }

        var isRunning: Bool { state.withLock { $0.running } }

        func text(_ buffer: KeyPath<State, [UInt8]>) -> String {
            state.withLock { state in
                let dropped = buffer == \State.output ? state.outputDropped : state.errorsDropped
                var text = String(decoding: state[keyPath: buffer], as: UTF8.self)
                if dropped > 0 {
                    text += "\n[\(dropped) more bytes not kept: the test's output limit is \(outputLimit)]"
                }
                return text
            }
        }

        func send(_ signal: Subprocess.Signal) {
            releaseLines()
            state.withLock { state in
                _ = try? state.execution?.send(signal: signal)
            }
        }
    }
}

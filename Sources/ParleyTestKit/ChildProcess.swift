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

    /// Starts `executable` and returns once it is running; throws if it
    /// cannot be started. `environment` nil inherits the test's environment,
    /// otherwise it is the whole environment.
    public static func start(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        workingDirectory: String? = nil, input: String? = nil
    ) async throws -> ChildProcess {
        _ = ignoreBrokenPipes
        let shared = Shared()
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
    /// closes it. One reader.
    public var outputLines: AsyncStream<String> { shared.lines }

    /// Sends SIGTERM (a no-op once it has exited).
    public func terminate() { shared.send(.terminate) }

    /// Sends SIGKILL (a no-op once it has exited).
    public func kill() { shared.send(.kill) }

    /// Waits for the child to exit and returns how, with all its output.
    public func wait() async throws -> Exit {
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
            var pendingLine: [UInt8] = []
            /// Valid while the streams are open: the run call closes the
            /// process descriptor signals go through only after that.
            var execution: Execution<CustomWriteInput, SequenceOutput, SequenceOutput>?
            var started: CheckedContinuation<pid_t, any Error>?
            var startResult: Result<pid_t, any Error>?
            var running = true
        }

        let state = Mutex(State())
        let lines: AsyncStream<String>
        private let linesContinuation: AsyncStream<String>.Continuation

        init() {
            (lines, linesContinuation) = AsyncStream.makeStream(of: String.self)
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
            do {
                for try await chunk in stream {
                    let bytes = chunk.withUnsafeBytes { Array($0) }
                    let complete = state.withLock { state -> [String] in
                        state[keyPath: buffer] += bytes
                        guard buffer == \State.output else { return [] }
                        state.pendingLine += bytes
                        var lines: [String] = []
                        while let newline = state.pendingLine.firstIndex(of: UInt8(ascii: "\n")) {
                            lines.append(String(decoding: state.pendingLine[..<newline], as: UTF8.self))
                            state.pendingLine.removeSubrange(...newline)
                        }
                        return lines
                    }
                    for line in complete { linesContinuation.yield(line) }
                }
            } catch {
                // The child's end of the pipe failed: what arrived is kept.
            }
            if buffer == \State.output { linesContinuation.finish() }
        }

        func streamsClosed() {
            state.withLock { $0.execution = nil }
        }

        func exited() {
            state.withLock { $0.running = false }
            linesContinuation.finish()
        }

        var isRunning: Bool { state.withLock { $0.running } }

        func text(_ buffer: KeyPath<State, [UInt8]>) -> String {
            state.withLock { String(decoding: $0[keyPath: buffer], as: UTF8.self) }
        }

        func send(_ signal: Subprocess.Signal) {
            state.withLock { state in
                _ = try? state.execution?.send(signal: signal)
            }
        }
    }
}

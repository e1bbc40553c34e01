import Foundation
import Logging

/// Why a request to a handler did not give a result.
public enum HandlerFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// -32601: the handler leaves this step to Parley.
    case notImplemented
    /// Any other JSON-RPC error: the app's own message.
    case appError(code: Int, message: String)
    case cannotStart(String)
    /// The handler is down (restarting after a failure, or stopped).
    case notRunning(String)
    case exited(HandlerExit)
    case timedOut(method: String, seconds: Double)
    case notJSON(String)
    case lineTooLong(bytes: Int)
    case flooded
    case notReading
    /// A result that is JSON but not what the method returns.
    case badAnswer(String)
    case cancelled

    public var description: String {
        switch self {
        case .notImplemented: "the method is not implemented (-32601)"
        case .appError(let code, let message): "error \(code): \(message)"
        case .cannotStart(let why): why
        case .notRunning(let why): "not running (\(why))"
        case .exited(let exit): "the handler \(exit)"
        case .timedOut(let method, let seconds): "no answer to \(method) within \(Self.seconds(seconds))"
        case .notJSON(let excerpt): "printed something that is not a JSON object: \(excerpt)"
        case .lineTooLong(let bytes): "wrote a line longer than \(bytes) bytes"
        case .flooded: "flooded its output with lines that answer nothing"
        case .notReading: "stopped reading its input"
        case .badAnswer(let why): "answered with \(why)"
        case .cancelled: "the request was cancelled"
        }
    }

    /// What the device says when this failure ends a request (docs/spec.md §5: the
    /// dialog rules' voice: short, no jargon, the app named).
    public func spokenMessage(app: String) -> String {
        switch self {
        case .appError(_, let message): message
        case .notImplemented: "\(app) cannot do that."
        case .timedOut: "\(app) took too long to answer."
        case .exited, .cannotStart, .notReading: "\(app) stopped working. Try again in a moment."
        case .notRunning: "\(app) is not running right now. Try again in a moment."
        case .notJSON, .badAnswer, .lineTooLong: "\(app) gave an answer I could not understand."
        case .flooded: "\(app) misbehaved and was restarted."
        case .cancelled: "Cancelled."
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}

/// Keeps one app's handler running and carries its requests: starts it,
/// matches answers to requests by id, enforces every limit, and restarts it
/// with back-off when it fails, logging why. A failing handler fails only
/// the requests in flight; nothing here can stop the daemon.
public actor HandlerSupervisor {
    public enum Status: Sendable, Hashable, CustomStringConvertible {
        case notStarted
        case running(pid: Int32)
        case restarting(reason: String)
        case stopped

        public var description: String {
            switch self {
            case .notStarted: "not started"
            case .running(let pid): pid > 0 ? "running (pid \(pid))" : "starting in the sandbox"
            case .restarting(let reason): "restarting: \(reason)"
            case .stopped: "stopped"
            }
        }
    }

    public nonisolated let app: String
    public nonisolated let argv: [String]
    public nonisolated let directory: URL
    public nonisolated let limits: HandlerLimits
    /// Added to the daemon's environment for the handler (`PARLEY_APP_DATA`).
    public nonisolated let environment: [String: String]
    /// What its handler last wrote to standard error, across restarts.
    public nonisolated let stderrTail = LineTail()
    private let logger: Logger

    private var process: HandlerProcess?
    private var generation = 0
    private var pending: [Int: Pending] = [:]
    private var nextID = 1
    private var unsolicited = 0
    private var backoffIndex = 0
    private var startedAt: ContinuousClock.Instant?
    /// Whether the running handler has answered anything since it started.
    private var answeredSinceStart = false
    private var restartDue: ContinuousClock.Instant?
    private var restartTask: Task<Void, Never>?
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var lastFailure = "not started"
    private var stopping = false
    /// Told when the handler says its options changed (at most once per
    /// `limits.optionsChangeInterval`).
    private var onOptionsChanged: (@Sendable () -> Void)?
    private var optionsChangeDue = false
    private var optionsChangeMissed = false
    private var lastOptionsChange: ContinuousClock.Instant?
    /// How many times the handler was restarted after a failure.
    public private(set) var restarts = 0
    public private(set) var status = Status.notStarted

    private struct Pending {
        var method: String
        var continuation: CheckedContinuation<Result<JSONValue, HandlerFailure>, Never>
        var timeout: Task<Void, Never>
    }

    public init(app: String, argv: [String], directory: URL, environment: [String: String] = [:],
                limits: HandlerLimits = HandlerLimits(), logger: Logger) {
        self.app = app
        self.argv = argv
        self.environment = environment
        self.directory = directory
        self.limits = limits
        self.logger = logger
    }

    /// Starts the handler; a failure to start is logged and retried with back-off.
    public func start() {
        stopping = false
        guard process == nil, restartTask == nil else { return }
        launch()
    }

    /// Sends `shutdown`, closes the handler's input, waits the grace period
    /// for it to exit, then kills its process group.
    public func stop() async {
        stopping = true
        restartTask?.cancel()
        restartTask = nil
        restartDue = nil
        resumeWaiters()
        failAll(.notRunning("the app is being unloaded"))
        status = .stopped
        guard let process else { return }
        self.process = nil
        generation += 1
        try? process.send(JSONRPC.line(id: nil, method: .shutdown, params: nil))
        process.closeInput()
        // The handler has the grace period to exit by itself; then its group is killed.
        let (app, logger, grace) = (self.app, self.logger, limits.shutdownGrace)
        let deadline = Task {
            guard (try? await Task.sleep(for: grace)) != nil else { return }
            logger.notice("[\(app)] handler did not exit within the grace period after shutdown; killed")
            process.kill()
        }
        await process.waitForExit()
        deadline.cancel()
    }

    /// Sends a request and waits for its answer, at most `timeLimit` (the
    /// step limit when nil). A handler down for a restart that is due within
    /// the limit is waited for.
    public func call(_ method: JSONRPC.Method, params: JSONValue, timeLimit: Duration? = nil) async throws(HandlerFailure) -> JSONValue {
        // A perform has the intent's own limit; the step limit of the other
        // calls gets the start-up allowance until the handler first answers.
        let limit = timeLimit ?? (limits.stepTimeLimit + (answeredSinceStart ? .zero : limits.startupAllowance))
        if process == nil, let due = restartDue, due < .now + limit {
            await withCheckedContinuation { waiters.append($0) }
        }
        guard let process else { throw .notRunning(lastFailure) }
        let id = nextID
        nextID += 1
        unsolicited = 0
        let current = generation
        let result: Result<JSONValue, HandlerFailure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timeout = Task { [weak self] in
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    await self?.timedOut(id: id, generation: current, limit: limit)
                }
                pending[id] = Pending(method: method.rawValue, continuation: continuation, timeout: timeout)
                do throws(HandlerProcess.WriteError) {
                    try process.send(JSONRPC.line(id: id, method: method, params: params))
                } catch .notReading {
                    fail(.notReading, why: "stopped reading its input")
                } catch {
                    fail(.exited(HandlerExit(status: nil, signal: nil)), why: "closed its input")
                }
            }
        } onCancel: {
            Task { await self.cancel(id: id) }
        }
        return try result.get()
    }

    /// What to do when the handler sends `options-changed` (the apps host
    /// recompiles the phrases, asking `options` again).
    /// A notification that came before anyone listened (a handler quick to
    /// fetch its names while the daemon still starts) is passed on now.
    public func setOptionsChanged(_ body: (@Sendable () -> Void)?) {
        onOptionsChanged = body
        if body != nil, optionsChangeMissed {
            optionsChangeMissed = false
            optionsChanged()
        }
    }

    // MARK: Events

    private func launch() {
        restartTask = nil
        restartDue = nil
        guard !stopping else { return }
        do {
            let started = try HandlerProcess.start(argv: argv, environment: environment, directory: directory.path, app: app, limits: limits,
                                                   logger: logger, tail: stderrTail)
            process = started
            generation += 1
            startedAt = .now
            answeredSinceStart = false
            status = .running(pid: started.pid)
            let current = generation
            if !started.sandboxed { logger.info("[\(app)] handler started (pid \(started.pid)): \(argv.joined(separator: " "))") }
            Task { [weak self] in
                for await event in started.events {
                    if case .line = event { started.consumed() }
                    await self?.handle(event, generation: current)
                }
            }
        } catch {
            lastFailure = error.description
            scheduleRestart(why: error.description)
        }
        resumeWaiters()
    }

    private func handle(_ event: HandlerProcess.Event, generation: Int) {
        guard generation == self.generation, process != nil else { return }
        switch event {
        case .line(let data):
            switch JSONRPC.reply(to: data) {
            case .notJSON(let text):
                fail(.notJSON(text), why: "printed something that is not a JSON object: \(text)")
            case .answer(let id, let outcome) where pending[id] != nil:
                let request = pending.removeValue(forKey: id)!
                request.timeout.cancel()
                answeredSinceStart = true
                request.continuation.resume(returning: outcome)
            case .optionsChanged:
                optionsChanged()
            case .answer, .unsolicited:
                unsolicited += 1
                if unsolicited > limits.maximumUnsolicitedLines {
                    fail(.flooded, why: "wrote more than \(limits.maximumUnsolicitedLines) lines that answer no request")
                }
            }
        case .lineTooLong(let bytes):
            fail(.lineTooLong(bytes: bytes), why: "wrote a line longer than \(bytes) bytes")
        case .flooded:
            fail(.flooded, why: "flooded its output (more than \(limits.maximumQueuedLines) lines waiting)")
        case .exited(let exit):
            fail(.exited(exit), why: "\(exit)")
        case .started(let pid):
            status = .running(pid: pid)
            logger.info("[\(app)] handler started in the sandbox (pid \(pid)): \(argv.joined(separator: " "))")
        }
    }

    /// A handler that repeats the notification costs one recompilation per
    /// interval, never more: the ones in between fold into one at its end.
    private func optionsChanged() {
        guard onOptionsChanged != nil else {
            optionsChangeMissed = true
            return
        }
        guard !optionsChangeDue else { return }
        optionsChangeDue = true
        let wait = lastOptionsChange.map { limits.optionsChangeInterval - (ContinuousClock.now - $0) } ?? .zero
        logger.info("[\(app)] handler says its options changed; compiling the phrases again")
        Task { [weak self] in
            if wait > .zero { try? await Task.sleep(for: wait) }
            await self?.fireOptionsChanged()
        }
    }

    private func fireOptionsChanged() {
        optionsChangeDue = false
        lastOptionsChange = .now
        onOptionsChanged?()
    }

    private func timedOut(id: Int, generation: Int, limit: Duration) {
        guard generation == self.generation, let request = pending[id] else { return }
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        fail(.timedOut(method: request.method, seconds: seconds),
             why: "did not answer \(request.method) within \(HandlerFailure.seconds(seconds))")
    }

    private func cancel(id: Int) {
        guard let request = pending.removeValue(forKey: id) else { return }
        request.timeout.cancel()
        request.continuation.resume(returning: .failure(.cancelled))
    }

    /// The handler broke: every request in flight gets `failure`, the process
    /// group is killed and a restart scheduled.
    private func fail(_ failure: HandlerFailure, why: String) {
        failAll(failure)
        process?.kill()
        process = nil
        generation += 1
        lastFailure = why
        scheduleRestart(why: why)
    }

    private func failAll(_ failure: HandlerFailure) {
        let requests = pending.values
        pending.removeAll()
        for request in requests {
            request.timeout.cancel()
            request.continuation.resume(returning: .failure(failure))
        }
    }

    private func scheduleRestart(why: String) {
        guard !stopping, restartTask == nil else { return }
        if let startedAt, ContinuousClock.now - startedAt > limits.stableRun { backoffIndex = 0 }
        let delay = limits.restartDelays[min(backoffIndex, limits.restartDelays.count - 1)]
        backoffIndex += 1
        restarts += 1
        status = .restarting(reason: why)
        restartDue = .now + delay
        logger.warning("[\(app)] handler \(why); restarting in \(delay)")
        restartTask = Task { [weak self] in
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            await self?.launch()
        }
    }

    private func resumeWaiters() {
        let waiting = waiters
        waiters.removeAll()
        waiting.forEach { $0.resume() }
    }
}

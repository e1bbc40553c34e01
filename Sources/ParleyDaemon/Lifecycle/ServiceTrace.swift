import Logging
import ServiceLifecycle
import Synchronization

/// Which of parleyd's services are still running, so that a stop which
/// outlasts its limit says what held it (the stop watchdog logs
/// ``stillRunning``), and each service's end during a stop is logged with
/// the time since the stop began. A slow stop on a slow CPU (a Pi 3, or
/// the arm64 build under qemu-user) is otherwise a bare timeout.
public final class ServiceTrace: Sendable {
    private struct State {
        /// Names of the services running, in the group's order.
        var running: [String] = []
        var stopBegan: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    /// `service` run under this trace, known by its type's name.
    public func traced(_ service: any Service) -> any Service {
        TracedService(service: service, name: String(describing: type(of: service)), trace: self)
    }

    /// The stop began (SIGTERM): ends from now on are logged with their time.
    public func stopBegins() {
        state.withLock { s in
            if s.stopBegan == nil { s.stopBegan = .now }
        }
    }

    /// The services whose `run` has not returned, in the group's order.
    public var stillRunning: [String] { state.withLock { $0.running } }

    /// Whole milliseconds since the stop began (nil: no stop yet).
    public var millisecondsSinceStop: Int64? {
        state.withLock { $0.stopBegan }.map { Self.milliseconds(ContinuousClock.now - $0) }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    fileprivate func started(_ name: String) {
        state.withLock { $0.running.append(name) }
    }

    fileprivate func ended(_ name: String, error: (any Error)?) {
        let (began, left) = state.withLock { s -> (ContinuousClock.Instant?, [String]) in
            if let index = s.running.firstIndex(of: name) { s.running.remove(at: index) }
            return (s.stopBegan, s.running)
        }
        var metadata: Logger.Metadata = ["service": "\(name)", "still-running": "\(left.joined(separator: ","))"]
        if let error { metadata["error"] = "\(error)" }
        if let began {
            metadata["ms-since-stop"] = "\(Self.milliseconds(ContinuousClock.now - began))"
            logger.info("service ended", metadata: metadata)
        } else {
            // Before any stop a service only ends by failing; ServiceGroup
            // then stops the others and the error is logged there too.
            logger.debug("service ended", metadata: metadata)
        }
    }
}

/// A service whose start and end are recorded in a ``ServiceTrace``. Its run
/// is the wrapped service's, in the same task, so graceful shutdown and
/// cancellation reach the wrapped service unchanged.
struct TracedService: Service {
    let service: any Service
    let name: String
    let trace: ServiceTrace

    func run() async throws {
        trace.started(name)
        do {
            try await service.run()
            trace.ended(name, error: nil)
        } catch {
            trace.ended(name, error: error)
            throw error
        }
    }
}

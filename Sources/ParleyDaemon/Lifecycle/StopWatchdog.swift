import Foundation
import Glibc
import Logging
import Synchronization

/// Bounds a stop without ever crashing.
///
/// swift-service-lifecycle's `maximumCancellationDuration` ends a slow
/// cancellation with `fatalError` (a crash and a core dump), which is what a
/// slow CPU got when a question was open at SIGTERM: speaking "Cancelled."
/// and stopping took longer than the 1.5 s + 0.3 s allowed (3 of 4 runs of
/// the arm64 build under qemu-user; a Pi 3 is about that slow). parleyd
/// therefore gives the service group no cancellation limit, and this
/// watchdog, armed when the stop begins, ends the process with exit status 0
/// and a log line naming the limit when the stop outlasts it. The state
/// needs no orderly close for safety: every acknowledged write is already on
/// disk (WAL, synchronous=FULL).
///
/// It runs on its own thread, not a task: a stop is slow precisely when the
/// cooperative pool is busy or blocked in C calls (espeak-ng, ALSA).
public final class StopWatchdog: Sendable {
    private let limit: Duration
    private let logger: Logger
    private let exit: @Sendable (Int32) -> Void
    /// Names what still runs when the limit is reached (``ServiceTrace``).
    private let stillRunning: @Sendable () -> [String]
    private let state = Mutex<(armed: Bool, disarmed: Bool)>((false, false))
    /// Signalled by `disarm`: the thread stops waiting.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when the thread has ended (for tests: no timing needed).
    private let ended = DispatchSemaphore(value: 0)

    /// `exit` is `_exit` in the product (no atexit handlers or destructors
    /// racing threads still running); tests pass a recorder.
    public init(limit: Duration, logger: Logger, stillRunning: @escaping @Sendable () -> [String] = { [] },
                exit: @escaping @Sendable (Int32) -> Void = { Glibc._exit($0) }) {
        self.limit = limit
        self.logger = logger
        self.stillRunning = stillRunning
        self.exit = exit
    }

    /// Starts counting; a second call does nothing.
    public func arm() {
        let first = state.withLock { s -> Bool in
            defer { s.armed = true }
            return !s.armed && !s.disarmed
        }
        guard first else { return }
        let thread = Thread { [self] in
            defer { ended.signal() }
            let (seconds, attoseconds) = limit.components
            let timeout = DispatchTime.now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
            if wake.wait(timeout: timeout) == .success { return }
            guard state.withLock({ !$0.disarmed }) else { return }
            logger.error(
                "stop took longer than \(limit); exiting now without waiting for the rest (state is already on disk)",
                metadata: ["still-running": "\(stillRunning().joined(separator: ","))"])
            exit(0)
        }
        thread.name = "parley-stop-watchdog"
        thread.start()
    }

    /// The stop finished in time.
    public func disarm() {
        let wasArmed = state.withLock { s -> Bool in
            defer { s.disarmed = true }
            return s.armed && !s.disarmed
        }
        if wasArmed { wake.signal() }
    }

    /// Waits until the thread of an armed watchdog has ended (tests).
    func waitUntilEnded() { ended.wait() }
}

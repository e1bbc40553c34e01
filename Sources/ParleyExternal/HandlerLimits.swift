import Foundation

/// Everything a handler is allowed before Parley stops it. The defaults suit
/// a speaker: answers are small, a person waits a few seconds at most.
public struct HandlerLimits: Sendable, Hashable {
    /// The longest line a handler may write to standard output, in bytes.
    public var maximumLineBytes: Int = 64 * 1024
    /// Lines read but not yet handled; more means the handler floods its output.
    public var maximumQueuedLines: Int = 256
    /// Lines that answer no request in flight, since the last request; more is a flood.
    public var maximumUnsolicitedLines: Int = 32
    /// Standard-error lines are cut to this many bytes in the log.
    public var maximumLogLineBytes: Int = 1000
    /// At most this many standard-error lines are logged per window; the rest are counted.
    public var logLinesPerWindow: Int = 50
    public var logWindow: Duration = .seconds(10)
    /// How long resolve, options and confirmation may take (perform has the intent's own limit).
    public var stepTimeLimit: Duration = .seconds(3)
    /// Added to the step limit of each request (not to a perform, which has
    /// the intent's own limit) until the handler has answered
    /// once since it was started: an interpreter starting (Python, a shell
    /// running jq) on a loaded Pi 3 at boot, or on a busy test machine, can
    /// take seconds before it reads its first line, and the first request
    /// is usually the `options` call that fills the phrases' values.
    public var startupAllowance: Duration = .seconds(10)
    /// How long a handler may take to exit after `shutdown` before it is killed.
    public var shutdownGrace: Duration = .milliseconds(500)
    /// Waits before each restart after a failure; the last repeats.
    public var restartDelays: [Duration] = [.milliseconds(100), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30)]
    /// At most one `options-changed` notification per interval recompiles
    /// the phrases; those in between are folded into one at its end.
    public var optionsChangeInterval: Duration = .seconds(2)
    /// A handler that ran this long before failing starts the back-off again.
    public var stableRun: Duration = .seconds(60)
    /// The memory a handler (and each process it starts) may allocate
    /// (RLIMIT_DATA, set as it starts): past it an allocation fails (Python
    /// raises MemoryError) instead of the speaker running out. nil: no cap.
    /// The apps that come with Parley use under 50 MiB.
    public var memoryBytes: Int? = 256 * 1024 * 1024
    /// The handler sandbox's socket (`parley-app.socket`, see
    /// ParleySandbox.SandboxWire): when set, every handler is started by the
    /// runner systemd starts for each connection there, as the system user
    /// `parley-app` in a cgroup of its own with the unit's MemoryMax,
    /// TasksMax and CPUQuota. nil: the daemon starts handlers itself (a
    /// development machine, tests, a system without the units).
    public var sandbox: String? = nil

    public init() {}
}

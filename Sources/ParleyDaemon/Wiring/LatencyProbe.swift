import Foundation
import Synchronization

/// Latency from the end of a spoken command (its last captured sample) to
/// the engine taking it (logged by the listener as `latency-ms`) and to the
/// first sample of the spoken answer queued for playback (logged by the
/// speaker as `answer-latency-ms`). scripts/bench-daemon.sh reads both.
public final class LatencyProbe: Sendable {
    private let pending = Mutex<ContinuousClock.Instant?>(nil)

    public init() {}

    func commandEnded(at instant: ContinuousClock.Instant) {
        pending.withLock { $0 = instant }
    }

    /// The time since the last command ended, once per command.
    func answerStarted() -> Duration? {
        pending.withLock { value in
            defer { value = nil }
            return value.map { ContinuousClock.now - $0 }
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

import Foundation
import Synchronization

/// A point on the engine's monotonic time line, in seconds from an arbitrary
/// origin (the clock's start). It never jumps: a board without a real-time
/// clock sets its wall clock when NTP syncs, often years after boot, and
/// deadlines measured on the wall clock would then fire at once or never.
public struct ParleyInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: Double
    public init(seconds: Double) { self.seconds = seconds }

    public static func < (a: ParleyInstant, b: ParleyInstant) -> Bool { a.seconds < b.seconds }
    public static func + (a: ParleyInstant, interval: TimeInterval) -> ParleyInstant { ParleyInstant(seconds: a.seconds + interval) }
    public static func - (a: ParleyInstant, b: ParleyInstant) -> TimeInterval { a.seconds - b.seconds }
    public var description: String { "t+\(seconds)s" }
}

/// The time sources of the engine, injectable so conversations can be tested
/// (and typed at the console) without waiting.
///
/// Two clocks, for two jobs: `instant` (monotonic) measures every deadline,
/// time-out, timer and window; `now` (wall clock) only dates donations and
/// serves habits and other time-of-day things.
public protocol ParleyClock: Sendable {
    /// Wall-clock time. May jump (NTP, a person setting the date).
    var now: Date { get }
    /// Monotonic time. Never jumps.
    var instant: ParleyInstant { get }
    /// Returns at `instant` on the monotonic time line (or throws when the task is cancelled).
    func sleep(until instant: ParleyInstant) async throws
}

extension ParleyClock {
    /// Where a wall-clock date an app asked for ("the timer ends at 08:10")
    /// lies on the monotonic line, reckoned from the two clocks now: the
    /// interval counts, so a later jump of the wall clock does not move it.
    public func instant(at date: Date) -> ParleyInstant { instant + date.timeIntervalSince(now) }

    /// The wall-clock date of a monotonic instant, reckoned with the wall clock now.
    public func date(at instant: ParleyInstant) -> Date { now + (instant - self.instant) }
}

/// The system's clocks, for the daemon: `Date()` and `ContinuousClock`.
public struct SystemClock: ParleyClock {
    private let origin = ContinuousClock.now
    public init() {}
    public var now: Date { Date() }
    public var instant: ParleyInstant {
        let elapsed = origin.duration(to: ContinuousClock.now)
        return ParleyInstant(seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    public func sleep(until instant: ParleyInstant) async throws {
        let interval = instant - self.instant
        if interval > 0 { try await Task.sleep(for: .seconds(interval)) }
    }
}

/// Time that moves only when told to: the console's `:wait N`, and tests
/// (ParleyTestKit's `ManualClock` is this clock). Starts at the real time
/// (or `start`) so time-of-day suggestions make sense. `advance(by:)` moves
/// both clocks; `jumpWallClock(by:)` moves the wall clock alone, as NTP does.
public final class SteppedClock: ParleyClock {
    private struct Sleeper {
        var until: ParleyInstant
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Date
        var instant = ParleyInstant(seconds: 0)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }
    private let state: Mutex<State>

    public init(start: Date = Date()) { state = Mutex(State(now: start)) }

    public var now: Date { state.withLock { $0.now } }
    public var instant: ParleyInstant { state.withLock { $0.instant } }

    /// Number of tasks sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves time forward (both clocks) and wakes every sleeper that is due.
    public func advance(by seconds: TimeInterval) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += seconds
            state.instant = state.instant + seconds
            let instant = state.instant
            let ids = state.sleepers.filter { $0.value.until <= instant }.map(\.key)
            return ids.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        due.forEach { $0.resume() }
    }

    /// Sets the wall clock forwards or backwards without time passing: no
    /// sleeper wakes, because sleepers wait on the monotonic line.
    public func jumpWallClock(by seconds: TimeInterval) {
        state.withLock { $0.now += seconds }
    }

    public func sleep(until instant: ParleyInstant) async throws {
        let id = state.withLock { state -> UInt64 in state.nextID += 1; return state.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before the sleeper was registered: onCancel found nothing to wake.
                let cancelled = Task.isCancelled
                let resumeNow = state.withLock { state -> Bool in
                    if cancelled || state.instant >= instant { return true }
                    state.sleepers[id] = Sleeper(until: instant, continuation: continuation)
                    return false
                }
                if resumeNow {
                    if cancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}

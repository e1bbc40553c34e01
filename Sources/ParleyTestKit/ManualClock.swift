import Foundation
import ParleyCore
import Synchronization

/// A clock tests move by hand, so timed behaviour runs instantly and
/// deterministically (as swift-nio's embedded event loop clock).
public final class ManualClock: ParleyClock {
    private struct Sleeper { var until: Date; var continuation: CheckedContinuation<Void, any Error> }
    private let state: Mutex<(now: Date, sleepers: [UInt64: Sleeper], next: UInt64)>

    /// Starts at a fixed, known instant (a Monday, 08:00 UTC) unless told otherwise.
    public init(start: Date = Date(timeIntervalSince1970: 1_763_971_200)) {
        state = Mutex((start, [:], 0))
    }

    public var now: Date { state.withLock { $0.now } }

    /// Number of tasks sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func advance(by seconds: TimeInterval) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += seconds
            let now = state.now
            let ids = state.sleepers.filter { $0.value.until <= now }.map(\.key)
            return ids.compactMap { state.sleepers.removeValue(forKey: $0)?.continuation }
        }
        due.forEach { $0.resume() }
    }

    /// Waits (on real time, briefly) until `count` tasks sleep on the clock.
    public func waitForSleepers(_ count: Int = 1) async {
        while sleeperCount < count { await Task.yield(); try? await Task.sleep(for: .milliseconds(1)) }
    }

    public func sleep(until date: Date) async throws {
        let id = state.withLock { state -> UInt64 in state.next += 1; return state.next }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate = state.withLock { state -> Bool in
                    if state.now >= date { return true }
                    state.sleepers[id] = Sleeper(until: date, continuation: continuation)
                    return false
                }
                if immediate { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}

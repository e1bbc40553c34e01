import Foundation
import Synchronization

/// The time source of the engine, injectable so conversations can be tested
/// (and typed at the console) without waiting.
public protocol ParleyClock: Sendable {
    var now: Date { get }
    /// Returns at `date` (or when the task is cancelled).
    func sleep(until date: Date) async throws
}

/// Wall-clock time, for the daemon.
public struct SystemClock: ParleyClock {
    public init() {}
    public var now: Date { Date() }
    public func sleep(until date: Date) async throws {
        let interval = date.timeIntervalSinceNow
        if interval > 0 { try await Task.sleep(for: .seconds(interval)) }
    }
}

/// Time that moves only when told to: the console's `:wait N`. Starts at the
/// real time so time-of-day suggestions make sense.
public final class SteppedClock: ParleyClock {
    private struct State {
        var now: Date
        var sleepers: [(id: UInt64, until: Date, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }
    private let state: Mutex<State>

    public init(start: Date = Date()) { state = Mutex(State(now: start)) }

    public var now: Date { state.withLock { $0.now } }

    /// Moves time forward and wakes every sleeper that is due.
    public func advance(by seconds: TimeInterval) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += seconds
            let now = state.now
            let due = state.sleepers.filter { $0.until <= now }
            state.sleepers.removeAll { $0.until <= now }
            return due.map(\.continuation)
        }
        due.forEach { $0.resume() }
    }

    public func sleep(until date: Date) async throws {
        if now >= date { return }
        let id = state.withLock { state -> UInt64 in state.nextID += 1; return state.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.now >= date || Task.isCancelled { return true }
                    state.sleepers.append((id, date, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }
}

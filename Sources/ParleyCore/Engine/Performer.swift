import Foundation
import Synchronization

/// Runs an intent's perform against its time limit, and lets the engine stop
/// it ("cancel" while it works). Whichever ends first settles the outcome;
/// both tasks are then cancelled, including one that was only added after
/// the outcome was settled, so no sleeper or perform is left running.
final class PerformRace: Sendable {
    enum Outcome: Sendable {
        case success(IntentResult)
        case failure(any Error)
        case timedOut
        case cancelled
    }

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var settled: Outcome?
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// Runs `intent.perform` with a limit of `limit` seconds on `clock`'s monotonic line.
    func run(_ intent: any AppIntent, context: IntentContext, clock: any ParleyClock, limit: TimeInterval) async -> Outcome {
        let deadline = clock.instant + limit
        return await withCheckedContinuation { continuation in
            let early = state.withLock { state -> Outcome? in
                if let settled = state.settled { return settled }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(returning: early); return }
            add(Task.detached { [self] in
                do { finish(.success(try await intent.perform(context: context))) } catch { finish(.failure(error)) }
            })
            guard limit.isFinite else { return }
            add(Task.detached { [self] in
                do {
                    try await clock.sleep(until: deadline)
                    finish(.timedOut)
                } catch {}
            })
        }
    }

    /// Stops the perform: the outcome is `.cancelled` unless one came first.
    func cancel() { finish(.cancelled) }

    private func add(_ task: Task<Void, Never>) {
        let over = state.withLock { state -> Bool in
            if state.settled != nil { return true }
            state.tasks.append(task)
            return false
        }
        if over { task.cancel() }
    }

    private func finish(_ outcome: Outcome) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, [Task<Void, Never>]) in
            guard state.settled == nil else { return (nil, []) }
            state.settled = outcome
            defer { state.continuation = nil; state.tasks = [] }
            return (state.continuation, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        continuation?.resume(returning: outcome)
    }
}

import Dispatch
import Synchronization

/// Async work run from a connection's own thread (a control or Wyoming
/// peer), which waits for its answer.
///
/// The work runs on that waiting thread itself, as its task executor: it
/// never waits for a thread of Swift's shared pool. A connection used to
/// start a plain `Task` and block on a semaphore; when the pool's threads
/// were all held by blocking work (seen under the test suite's load on two
/// cores), a Wyoming `handled` answer came after the peer's 30 s timeout.
/// Actors without an executor of their own (the engine's) run here too;
/// code isolated elsewhere hops there and back as it would anyway.
package enum ConnectionThread {
    package static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let executor = WaitingThreadExecutor()
        let result = ResultBox<T>()
        Task(executorPreference: executor) {
            let value = await body()
            result.value.withLock { $0 = value }
            executor.finish()
        }
        executor.runUntilFinished()
        return result.value.withLock { $0! }
    }
}

/// Runs the jobs enqueued on it on the one thread in `runUntilFinished`.
private final class WaitingThreadExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let state = Mutex(State())
    private let ready = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    func finish() {
        state.withLock { $0.finished = true }
        ready.signal()
    }

    /// Runs jobs as they come until the work has finished and none is left.
    func runUntilFinished() {
        while true {
            ready.wait()
            let (jobs, finished) = state.withLock { state in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.finished)
            }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if finished, jobs.isEmpty, state.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}

private final class ResultBox<T: Sendable>: Sendable {
    let value = Mutex<T?>(nil)
}

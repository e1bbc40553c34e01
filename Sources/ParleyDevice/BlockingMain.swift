import Dispatch

/// The entry point of Parley's executables: runs the async command on the
/// concurrency runtime's threads while the main thread waits for it.
///
/// Why not Swift's async `main`: on Linux it ends the main thread in
/// `dispatch_main()` (the main thread exits and the process lives on in
/// libdispatch's signal thread), and valgrind (3.19 and 3.24) dies on that
/// before the first line of Parley runs. With a synchronous main the
/// daemon and the tools run under callgrind, which is how instructions per
/// second of audio are counted on machines without hardware counters
/// (BENCHMARKS.md, "Idle listening cost"). Nothing in Parley uses the main
/// queue or the main actor, so nothing needs the main thread to run them.
public enum BlockingMain {
    /// Runs `body` to its end, then returns (the caller's `main` returns and
    /// the process exits 0; ArgumentParser's `main()` exits by itself on
    /// errors with their codes).
    public static func run(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await body()
            done.signal()
        }
        done.wait()
    }
}

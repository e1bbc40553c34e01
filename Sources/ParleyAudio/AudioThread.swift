import CParleyShims
import Glibc

/// A dedicated, named POSIX thread (`pthread_create`/`pthread_join`) for
/// blocking audio work that must stay off Swift's cooperative pool.
final class AudioThread: @unchecked Sendable {
    // @unchecked: `thread` is written once in `start` and read in `join` by the owner.
    private var thread: pthread_t?

    private final class Box {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept).
    init(name: String, body: @escaping @Sendable () -> Void) throws(AudioError) {
        let box = Unmanaged.passRetained(Box(name: name, body: body))
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            _ = parley_set_thread_name(box.name)
            box.body()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            throw .invalidConfiguration("cannot create thread \(name): errno \(rc)")
        }
        thread = handle
    }

    /// Waits for the thread to finish. Call once.
    func join() {
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }

    /// Asks for SCHED_FIFO at `priority` for the calling thread; returns the
    /// errno (0 on success; EPERM without CAP_SYS_NICE or an rtprio limit).
    static func requestRealtime(priority: Int32) -> Int32 {
        var param = sched_param()
        param.sched_priority = priority
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
    }

    /// CPU time consumed by the calling thread, in nanoseconds.
    static func threadCPUTimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// An eventfd(2) another thread writes to wake an audio thread out of poll(2).
final class WakeSignal: Sendable {
    let fd: Int32

    init() throws(AudioError) {
        let fd = parley_eventfd_create()
        guard fd >= 0 else { throw .invalidConfiguration("eventfd failed: errno \(errno)") }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Wakes the waiting thread (the counter stays readable until `consume`).
    func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Clears pending wake-ups.
    func consume() {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }
}

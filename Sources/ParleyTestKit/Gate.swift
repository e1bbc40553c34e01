import Synchronization

/// A gate an app's perform waits at until the test opens it, whatever
/// happens meanwhile: it ignores cancellation, as an app that does not check
/// for it would.
public final class Gate: Sendable {
    private let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])
    private let opened = Atomic<Int>(0)
    public init() {}

    /// Performs that reached the gate so far (waiting or let through).
    public var waiting: Int { waiters.withLock { $0.count } + opened.load(ordering: .relaxed) }

    public func wait() async {
        await withCheckedContinuation { continuation in waiters.withLock { $0.append(continuation) } }
    }

    /// Lets the earliest waiter through.
    public func openFirst() {
        let first = waiters.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        if first != nil { opened.add(1, ordering: .relaxed) }
        first?.resume()
    }

    /// Waits (on real time, briefly) until `count` performs reached the gate.
    public func waitForArrivals(_ count: Int) async {
        while waiting < count { await Task.yield(); try? await Task.sleep(for: .milliseconds(1)) }
    }
}


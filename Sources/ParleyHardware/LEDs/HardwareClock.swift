import Dispatch
import Synchronization

/// The LED timer's clock: what time it is, and "call me at". Injected so tests
/// drive the LED state machine with a manual clock and no sleeping.
public protocol HardwareClock: Sendable {
    /// Now, on the monotonic clock the kernel stamps GPIO events with.
    func now() -> Timestamp
    /// Calls `action` once, at or after `deadline`, unless cancelled first.
    func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledAction
}

/// A pending `HardwareClock.schedule` call.
public protocol ScheduledAction: Sendable {
    func cancel()
}

/// CLOCK_MONOTONIC and a serial dispatch queue: the product's clock.
public final class SystemHardwareClock: HardwareClock {
    private let queue: DispatchQueue
    private let functions: GPIODFunctions

    public convenience init(label: String = "parley.leds") {
        self.init(label: label, functions: .system)
    }

    init(label: String, functions: GPIODFunctions) {
        queue = DispatchQueue(label: label, qos: .userInteractive)
        self.functions = functions
    }

    public func now() -> Timestamp { functions.monotonicNow() }

    public func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledAction {
        let token = DispatchScheduled(action)
        let delay = max(0, deadline.nanoseconds(since: now()))
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay))) { token.run() }
        return token
    }
}

private final class DispatchScheduled: ScheduledAction {
    private let action: Mutex<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) { self.action = Mutex(action) }

    func run() {
        let pending = action.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        pending?()
    }

    func cancel() { action.withLock { $0 = nil } }
}

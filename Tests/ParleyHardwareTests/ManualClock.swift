import Synchronization

@testable import ParleyHardware

/// A clock the test moves by hand: scheduled actions run synchronously, in
/// deadline order, on the test's thread when `advance(to:)` passes them, each
/// seeing `now()` equal to its own deadline. (Test-only; it would move to
/// ParleyTestKit if another module needed it.)
final class ManualClock: HardwareClock {
    private struct Pending {
        let id: Int
        let deadline: Timestamp
        let action: @Sendable () -> Void
    }

    private struct State {
        var now: Timestamp
        var pending: [Pending] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    init(now: Timestamp = .milliseconds(0)) { state = Mutex(State(now: now)) }

    func now() -> Timestamp { state.withLock { $0.now } }

    var pendingCount: Int { state.withLock { $0.pending.count } }

    func schedule(at deadline: Timestamp, _ action: @escaping @Sendable () -> Void) -> any ScheduledAction {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.pending.append(Pending(id: s.nextID, deadline: deadline, action: action))
            return s.nextID
        }
        return Token(clock: self, id: id)
    }

    func advance(to target: Timestamp) {
        while true {
            let due = state.withLock { s -> Pending? in
                guard let index = s.pending.indices.filter({ s.pending[$0].deadline <= target })
                    .min(by: { s.pending[$0].deadline < s.pending[$1].deadline })
                else { return nil }
                let item = s.pending.remove(at: index)
                s.now = max(s.now, item.deadline)
                return item
            }
            guard let due else { break }
            due.action()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    func advance(byMilliseconds ms: Int) { advance(to: now().adding(milliseconds: ms)) }

    fileprivate func cancel(_ id: Int) { state.withLock { $0.pending.removeAll { $0.id == id } } }

    private struct Token: ScheduledAction {
        let clock: ManualClock
        let id: Int
        func cancel() { clock.cancel(id) }
    }
}

/// Records every LED write.
final class LEDRecorder: Sendable {
    private let writes = Mutex<[(led: Int, lit: Bool, at: Timestamp)]>([])
    let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    var output: LEDController.Output {
        { [self] led, lit in
            let now = clock.now()
            writes.withLock { $0.append((led, lit, now)) }
        }
    }

    var count: Int { writes.withLock { $0.count } }

    /// Times at which `led` changed, with its new level.
    func changes(of led: Int) -> [(lit: Bool, at: Timestamp)] {
        writes.withLock { $0.filter { $0.led == led }.map { ($0.lit, $0.at) } }
    }
}

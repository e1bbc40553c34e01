import Foundation
import ParleyCore

/// A clock tests move by hand, so timed behaviour runs instantly and
/// deterministically (as swift-nio's embedded event loop clock). It is the
/// console's `SteppedClock` with a fixed start and a way to wait for sleepers.
public final class ManualClock: ParleyClock {
    private let stepped: SteppedClock

    /// Starts at a fixed, known instant (a Monday, 08:00 UTC) unless told otherwise.
    public init(start: Date = Date(timeIntervalSince1970: 1_763_971_200)) {
        stepped = SteppedClock(start: start)
    }

    public var now: Date { stepped.now }
    public var instant: ParleyInstant { stepped.instant }

    /// Number of tasks sleeping on this clock.
    public var sleeperCount: Int { stepped.sleeperCount }

    /// Moves both clocks forward and wakes the sleepers that are due.
    public func advance(by seconds: TimeInterval) { stepped.advance(by: seconds) }

    /// Sets the wall clock alone forwards or backwards (NTP after boot).
    public func jumpWallClock(by seconds: TimeInterval) { stepped.jumpWallClock(by: seconds) }

    /// Waits (on real time, briefly) until `count` tasks sleep on the clock.
    public func waitForSleepers(_ count: Int = 1) async {
        while sleeperCount < count { await Task.yield(); try? await Task.sleep(for: .milliseconds(1)) }
    }

    public func sleep(until instant: ParleyInstant) async throws { try await stepped.sleep(until: instant) }
}

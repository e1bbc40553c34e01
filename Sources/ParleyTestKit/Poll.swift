import Foundation

/// Waiting for something another thread or process makes true: the
/// condition is asked a bounded number of times (a bound for a broken build,
/// never a timed assertion: on a loaded machine a test may take minutes),
/// and every wait says what it waits for. `until` and `value` fail the test
/// with that reason (``NeverHappened``); `holds` answers whether it
/// happened, for a test that must clean up (stop a pipeline, a daemon)
/// before it asserts. The `Blocking` forms are for plain threads (blocking
/// socket clients, audio threads' tests), never the cooperative pool.
public enum Poll {
    /// The condition never held: names what was waited for and how often it was asked.
    public struct NeverHappened: Error, CustomStringConvertible {
        public let reason: String
        public let polls: Int
        public var description: String { "never happened (asked \(polls) times): \(reason)" }
    }

    /// Whether `condition` came to hold, asked at most `polls` times `every` apart.
    public static func holds(
        _ reason: String, polls: Int = 6_000, every interval: Duration = .milliseconds(20),
        _ condition: () async throws -> Bool
    ) async throws -> Bool {
        for poll in 0..<polls {
            if try await condition() { return true }
            if poll < polls - 1 { try await Task.sleep(for: interval) }
        }
        return false
    }

    /// Returns once `condition` holds; ``NeverHappened`` naming `reason` if it never does.
    public static func until(
        _ reason: String, polls: Int = 6_000, every interval: Duration = .milliseconds(20),
        _ condition: () async throws -> Bool
    ) async throws {
        guard try await holds(reason, polls: polls, every: interval, condition) else {
            throw NeverHappened(reason: reason, polls: polls)
        }
    }

    /// The first value `attempt` gives that is not nil.
    public static func value<T>(
        _ reason: String, polls: Int = 6_000, every interval: Duration = .milliseconds(20),
        _ attempt: () async throws -> T?
    ) async throws -> T {
        var found: T?
        try await until(reason, polls: polls, every: interval) {
            found = try await attempt()
            return found != nil
        }
        return found!  // until returned: the last attempt gave a value
    }

    /// ``holds(_:polls:every:_:)`` on a plain thread (sleeps with usleep).
    public static func holdsBlocking(
        _ reason: String, polls: Int = 20_000, every interval: Duration = .microseconds(500),
        _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let c = interval.components
        let micros = useconds_t(max(0, c.seconds * 1_000_000 + c.attoseconds / 1_000_000_000_000))
        for poll in 0..<polls {
            if try condition() { return true }
            if poll < polls - 1 { usleep(micros) }
        }
        return false
    }

    /// ``until(_:polls:every:_:)`` on a plain thread.
    public static func untilBlocking(
        _ reason: String, polls: Int = 20_000, every interval: Duration = .microseconds(500),
        _ condition: () throws -> Bool
    ) throws {
        guard try holdsBlocking(reason, polls: polls, every: interval, condition) else {
            throw NeverHappened(reason: reason, polls: polls)
        }
    }

    /// ``value(_:polls:every:_:)`` on a plain thread.
    public static func valueBlocking<T>(
        _ reason: String, polls: Int = 20_000, every interval: Duration = .microseconds(500),
        _ attempt: () throws -> T?
    ) throws -> T {
        var found: T?
        try untilBlocking(reason, polls: polls, every: interval) {
            found = try attempt()
            return found != nil
        }
        return found!  // untilBlocking returned: the last attempt gave a value
    }
}

import Foundation
import ParleyCore
import Synchronization

/// The time zone parleyd's clock times are in: `time_zone` from parley.yaml,
/// else the system's. The engine plans "at 7:00" triggers and says times in
/// it, and the nightly adaptation waits for its hour in it; the page changes
/// it without a restart (`change`).
public final class LocalTime: Sendable {
    private let zone: Mutex<TimeZone>
    private let engine: ConversationEngine?

    public init(name: String?, engine: ConversationEngine? = nil) {
        zone = Mutex(name.flatMap(TimeZone.init(identifier:)) ?? .current)
        self.engine = engine
    }

    public var timeZone: TimeZone { zone.withLock { $0 } }

    /// A Gregorian calendar in the zone.
    public var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// From now on, clock times are in `zone` (the engine's time triggers are planned again).
    public func change(to zone: TimeZone) async {
        self.zone.withLock { $0 = zone }
        await engine?.setTimeZone(zone)
    }
}

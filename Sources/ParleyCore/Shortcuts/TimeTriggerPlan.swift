import Foundation

/// When each time trigger fires next, by the wall clock and the local
/// calendar. Pure: the runner asks it what is due and re-plans it when the
/// wall clock jumps (a clock set at boot, a time-zone or daylight-saving
/// change) so a trigger never fires for a time that was jumped over, and
/// never twice on one day after a jump back.
public struct TimeTriggerPlan: Sendable {
    public struct Entry: Sendable, Hashable {
        public var shortcut: String
        public var time: TimeOfDay
        public var days: Set<Weekday>
        /// The next time it fires, or nil when it has no day.
        public var next: Date?
        /// The day (year, month, day) it last fired on: never twice on one day.
        var lastFired: DateComponents?
    }

    public private(set) var entries: [Entry]
    public var calendar: Calendar

    /// Plans every time trigger of `shortcuts` from `now`.
    public init(shortcuts: [Shortcut], now: Date, calendar: Calendar = .current) {
        self.calendar = calendar
        entries = shortcuts.flatMap { shortcut in
            shortcut.triggers.compactMap { located -> Entry? in
                guard case .time(let time, let days) = located.trigger else { return nil }
                return Entry(shortcut: shortcut.name, time: time, days: days, next: nil, lastFired: nil)
            }
        }
        replan(now: now)
    }

    /// The earliest time anything fires.
    public var nextDeadline: Date? { entries.compactMap(\.next).min() }

    /// Plans every entry from `now` again: the first occurrence after `now`
    /// (or at it), skipping a day it already fired on.
    public mutating func replan(now: Date) {
        for index in entries.indices { entries[index].next = occurrence(of: entries[index], from: now) }
    }

    /// The shortcuts due at `now`, each once, in plan order; their entries
    /// move to their next occurrence.
    public mutating func due(now: Date) -> [String] {
        var names: [String] = []
        for index in entries.indices {
            guard let next = entries[index].next, next <= now else { continue }
            names.append(entries[index].shortcut)
            entries[index].lastFired = calendar.dateComponents([.year, .month, .day], from: next)
            entries[index].next = occurrence(of: entries[index], from: next.addingTimeInterval(1))
        }
        return names
    }

    /// The first time at or after `start` on a listed day not already fired on.
    func occurrence(of entry: Entry, from start: Date) -> Date? {
        guard !entry.days.isEmpty else { return nil }
        let startOfDay = calendar.startOfDay(for: start)
        for offset in 0...8 {
            guard let day = calendar.date(byAdding: .day, value: offset, to: startOfDay) else { continue }
            guard let weekday = Weekday(rawValue: calendar.component(.weekday, from: day)), entry.days.contains(weekday) else { continue }
            if let last = entry.lastFired, calendar.dateComponents([.year, .month, .day], from: day) == last { continue }
            // A time skipped by a daylight-saving change falls on the next valid time of that day.
            guard let time = calendar.date(bySettingHour: entry.time.hour, minute: entry.time.minute, second: 0, of: day,
                                           matchingPolicy: .nextTime, repeatedTimePolicy: .first, direction: .forward),
                  time >= start else { continue }
            return time
        }
        return nil
    }
}

/// Notices wall-clock jumps: the wall clock and a monotonic clock should
/// move together; when they differ by more than `tolerance` since the last
/// look, the wall clock was set (or the zone changed) and plans made by it
/// are stale.
public struct WallClockJumpDetector: Sendable {
    public var tolerance: TimeInterval
    private var lastWall: Date
    private var lastMonotonic: TimeInterval

    public init(wall: Date, monotonic: TimeInterval, tolerance: TimeInterval = 2) {
        lastWall = wall
        lastMonotonic = monotonic
        self.tolerance = tolerance
    }

    /// The jump in seconds since the last look (positive: the wall clock
    /// moved forward more than time passed), or nil when there was none.
    public mutating func jump(wall: Date, monotonic: TimeInterval) -> TimeInterval? {
        let drift = wall.timeIntervalSince(lastWall) - (monotonic - lastMonotonic)
        lastWall = wall
        lastMonotonic = monotonic
        return abs(drift) > tolerance ? drift : nil
    }
}

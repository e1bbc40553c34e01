import Foundation

/// Announcements apps scheduled ("the ten minute timer is done"), due on the
/// monotonic time line: an app names a wall-clock date, which is turned into
/// an interval from now when it is scheduled, so a jump of the wall clock
/// (NTP after boot) neither rings a timer early nor holds it back.
struct Announcements: Sendable {
    struct Entry: Sendable {
        var app: String
        var id: String
        var due: ParleyInstant
        var text: String
    }
    private var entries: [Entry] = []

    mutating func schedule(_ entry: Entry) {
        cancel(app: entry.app, id: entry.id)
        entries.append(entry)
    }

    mutating func cancel(app: String, id: String) {
        entries.removeAll { $0.app == app && $0.id == id }
    }

    /// When an announcement is due, if it is scheduled.
    func due(app: String, id: String) -> ParleyInstant? {
        entries.first { $0.app == app && $0.id == id }?.due
    }

    /// Removes and returns the announcements due at `instant`, earliest first.
    mutating func takeDue(at instant: ParleyInstant) -> [Entry] {
        let due = entries.filter { $0.due <= instant }.sorted { $0.due < $1.due }
        entries.removeAll { $0.due <= instant }
        return due
    }
}

/// Notices the wall clock moving against the monotonic one (NTP setting a
/// board's clock years forwards, a person setting it back), so what is
/// planned by the time of day can be planned again.
struct WallClockWatch: Sendable {
    /// Wall seconds minus monotonic seconds when last checked.
    private var offset: TimeInterval

    init(now: Date, instant: ParleyInstant) { offset = Self.offset(now: now, instant: instant) }

    private static func offset(now: Date, instant: ParleyInstant) -> TimeInterval {
        now.timeIntervalSinceReferenceDate - instant.seconds
    }
    /// Drift below this is noise (scheduling, slow ticks), not a jump.
    static let tolerance: TimeInterval = 2

    /// The jump in seconds since the last check, or nil when there was none.
    mutating func jump(now: Date, instant: ParleyInstant) -> TimeInterval? {
        let current = Self.offset(now: now, instant: instant)
        defer { offset = current }
        guard abs(current - offset) > Self.tolerance else { return nil }
        return current - offset
    }
}

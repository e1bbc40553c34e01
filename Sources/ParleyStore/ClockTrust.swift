import Foundation

/// Whether the system clock can be believed, asked before donations are
/// deleted by age.
///
/// A Raspberry Pi has no real-time clock: it boots at the time timesyncd
/// last saved (or 1970), and the time jumps when systemd-timesyncd reaches a
/// server. Deleting by age against such a clock loses history: set back,
/// every new donation looks older than the rest; set forward past
/// `donations.keep`, everything before goes. So age pruning runs only while
/// this says the clock is synchronised, and only over donations recorded
/// while it did (`StateStore.prune`); the count limit bounds the table
/// either way.
public struct ClockTrust: Sendable {
    private let check: @Sendable () -> Bool

    /// `isSynchronised` is asked once per recorded donation.
    public init(isSynchronised: @escaping @Sendable () -> Bool) {
        check = isSynchronised
    }

    /// True while the clock is believed synchronised.
    public var isSynchronised: Bool { check() }

    /// The flag file systemd-timesyncd creates once it has set the clock from
    /// a server (it lives in /run, so each boot starts without it).
    public static let timesyncFlag = "/run/systemd/timesync/synchronized"

    /// systemd-timesyncd's flag: synchronised while `path` exists. On a
    /// machine without timesyncd the file never exists and age pruning never
    /// runs.
    public static func systemdTimesync(flag path: String = timesyncFlag) -> ClockTrust {
        ClockTrust { FileManager.default.fileExists(atPath: path) }
    }

    /// A clock always believed (tests, and tools that prune on purpose).
    public static let synchronised = ClockTrust { true }
    /// A clock never believed: only the count limit applies.
    public static let unsynchronised = ClockTrust { false }
}

import Foundation

/// How long donations are kept and how many at most (`donations:` in
/// parley.yaml). Donations feed suggestions and "the usual", which only look
/// at recent habits; a speaker that runs for years must not let the table
/// (and the file) grow with every command ever spoken.
public struct DonationRetention: Sendable, Hashable {
    /// Donations older than this (by their own date, counted back from the
    /// newest) are deleted, while the clock is synchronised (`ClockTrust`).
    public var maximumAge: Duration
    /// Past this many, the earliest recorded are deleted.
    public var maximumCount: Int

    public init(maximumAge: Duration = .seconds(90 * 86_400), maximumCount: Int = 10_000) {
        precondition(maximumAge > .zero && maximumCount > 0)
        self.maximumAge = maximumAge
        self.maximumCount = maximumCount
    }

    var maximumAgeSeconds: TimeInterval {
        TimeInterval(maximumAge.components.seconds) + TimeInterval(maximumAge.components.attoseconds) / 1e18
    }
}

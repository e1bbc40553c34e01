import Foundation

/// When to ask apps again for parameter values they could not give while the
/// phrases were compiled: 5 s after the first failure, doubling while the
/// failures go on, at most every 5 minutes (a handler that is broken for good
/// is not asked in a loop). Pure, so the schedule is tested without a clock.
struct VocabularyRetry: Equatable, Sendable {
    static let firstInterval: TimeInterval = 5
    static let longestInterval: TimeInterval = 300

    var interval: TimeInterval
    var due: ParleyInstant
}

extension Optional where Wrapped == VocabularyRetry {
    /// The schedule after a compile at `now` that missed `unavailable`: none
    /// once nothing is missing, backing off while something still is.
    func next(unavailable: [String: String], at now: ParleyInstant) -> VocabularyRetry? {
        guard !unavailable.isEmpty else { return nil }
        let interval = self.map { Swift.min($0.interval * 2, VocabularyRetry.longestInterval) } ?? VocabularyRetry.firstInterval
        return VocabularyRetry(interval: interval, due: now + interval)
    }
}

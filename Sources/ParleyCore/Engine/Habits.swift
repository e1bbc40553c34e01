import Foundation

/// Habits learned from donations (docs/spec.md §7). Timestamps are not part of the
/// pattern: identical parameter sets group together.
public enum Habits {
    /// The usual value of one parameter given the values already chosen:
    /// at least `minimumCount` past runs agreeing with them, and one value
    /// used in at least `minimumShare` of those runs.
    public static func usualValue(of parameter: String, given fixed: [String: String], in donations: [Donation],
                                  minimumCount: Int = 3, minimumShare: Double = 0.6) -> String? {
        let consistent = donations.filter { donation in
            fixed.allSatisfy { donation.parameters[$0.key] == $0.value }
        }
        let values = consistent.compactMap { $0.parameters[parameter] }
        guard values.count >= minimumCount else { return nil }
        let counts = Dictionary(values.map { ($0, 1) }, uniquingKeysWith: +)
        guard let top = counts.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }) else { return nil }
        return Double(top.value) / Double(values.count) >= minimumShare ? top.key : nil
    }

    /// The most likely intent with its usual values for this time of day and
    /// day of week: donations within `window` hours of now's time of day count
    /// once, twice when on the same weekday. Needs at least `minimumCount`.
    public static func suggestion(at now: Date, from donations: [Donation], calendar: Calendar = .current,
                                  window: Double = 2, minimumCount: Int = 2) -> Donation? {
        func hours(_ date: Date) -> Double {
            let c = calendar.dateComponents([.hour, .minute], from: date)
            return Double(c.hour ?? 0) + Double(c.minute ?? 0) / 60
        }
        let nowHours = hours(now)
        let weekday = calendar.component(.weekday, from: now)
        struct Key: Hashable { var app: String; var intent: String; var parameters: [String: String] }
        var scores: [Key: (score: Int, count: Int, example: Donation)] = [:]
        for donation in donations {
            var distance = abs(hours(donation.date) - nowHours)
            distance = min(distance, 24 - distance)
            guard distance <= window else { continue }
            let key = Key(app: donation.app, intent: donation.intent, parameters: donation.parameters)
            let weight = calendar.component(.weekday, from: donation.date) == weekday ? 2 : 1
            let entry = scores[key] ?? (0, 0, donation)
            scores[key] = (entry.score + weight, entry.count + 1, entry.example)
        }
        let best = scores.values.filter { $0.count >= minimumCount }
            .max { $0.score < $1.score || ($0.score == $1.score && $0.example.date < $1.example.date) }
        return best?.example
    }

    /// How often each intent was used, for ordering "what can I say".
    public static func usageCounts(_ donations: [Donation]) -> [String: Int] {
        Dictionary(donations.map { ("\($0.app).\($0.intent)", 1) }, uniquingKeysWith: +)
    }
}

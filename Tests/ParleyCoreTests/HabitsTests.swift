import Foundation
import ParleyCore
import Testing

@Suite struct HabitsTests {
    let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
    // Monday 2025-11-24 12:00 UTC.
    let noon = Date(timeIntervalSince1970: 1_763_985_600)

    func donation(_ soup: String, hoursFromNoon: Double = 0, daysAgo: Double = 7) -> Donation {
        Donation(app: "SoupChef", intent: "OrderSoup", parameters: ["soup": soup],
                 date: noon - daysAgo * 86400 + hoursFromNoon * 3600, trigger: "voice")
    }

    @Test func theUsualNeedsEnoughAgreeingRuns() {
        let three = [donation("tomato"), donation("tomato"), donation("tomato")]
        #expect(Habits.usualValue(of: "soup", given: [:], in: three) == "tomato")
        #expect(Habits.usualValue(of: "soup", given: [:], in: Array(three.prefix(2))) == nil)
        let mixed = three + [donation("clamChowder"), donation("chickenNoodle")]
        #expect(Habits.usualValue(of: "soup", given: [:], in: mixed) == "tomato") // 3 of 5 = 60 %
        #expect(Habits.usualValue(of: "soup", given: [:], in: mixed + [donation("clamChowder")]) == nil)
        #expect(Habits.usualValue(of: "soup", given: ["store": "lewis"], in: three) == nil)
    }

    @Test func suggestionsFollowTheTimeOfDayAndWeekday() {
        let lunch = [donation("tomato", hoursFromNoon: 0.5), donation("tomato", hoursFromNoon: -1)]
        let evening = [donation("clamChowder", hoursFromNoon: 7), donation("clamChowder", hoursFromNoon: 7.5), donation("clamChowder", hoursFromNoon: 8)]
        #expect(Habits.suggestion(at: noon, from: lunch + evening, calendar: utc)?.parameters == ["soup": "tomato"])
        #expect(Habits.suggestion(at: noon + 7 * 3600, from: lunch + evening, calendar: utc)?.parameters == ["soup": "clamChowder"])
        #expect(Habits.suggestion(at: noon, from: Array(lunch.prefix(1)), calendar: utc) == nil)
        // The same weekday counts double.
        let otherDay = [donation("chickenNoodle", daysAgo: 1), donation("chickenNoodle", daysAgo: 2)]
        let sameDay = [donation("tomato", daysAgo: 7), donation("tomato", daysAgo: 14)]
        #expect(Habits.suggestion(at: noon, from: otherDay + sameDay + [donation("chickenNoodle", daysAgo: 3)], calendar: utc)?.parameters == ["soup": "tomato"])
    }

    @Test func theConsoleClockMovesOnlyWhenAdvanced() async throws {
        let clock = SteppedClock(start: noon)
        #expect(clock.now == noon)
        let wakeAt = clock.instant(at: noon + 5)
        let sleeper = Task { try await clock.sleep(until: wakeAt) }
        clock.advance(by: 2)
        #expect(clock.now == noon + 2)
        clock.advance(by: 3)
        try await sleeper.value
        #expect(clock.now == noon + 5)
    }
}

import Foundation
import ParleyCore
import Testing

/// The pure parts of running shortcuts: variables in text, `if` comparisons,
/// time-trigger plans and wall-clock jumps.
@Suite struct ShortcutRuntimeTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// 2026-11-23 is a Monday.
    static func date(_ day: Int, _ hour: Int, _ minute: Int, _ second: Int = 0) -> Date {
        utc.date(from: DateComponents(year: 2026, month: 11, day: day, hour: hour, minute: minute, second: second))!
    }

    func shortcut(_ yaml: String) throws -> Shortcut { try ShortcutLoader.parse(yaml: yaml, file: "t.yaml") }

    @Test func variablesAndPropertiesReadAsText() {
        var variables = ShortcutVariables(calendar: Self.utc)
        variables["place"] = .text("Lewis Avenue")
        variables["order"] = .output(spoken: "Ordered.", properties: [
            "total": .number(6.5), "count": .number(2), "readyTime": .date(Self.date(23, 12, 5)), "wait": .duration(90),
        ])
        let at = SourceLocation(file: "t.yaml", line: 1, column: 1)
        func ref(_ name: String, _ property: String? = nil) -> TextTemplate.Part { .variable(VariableReference(name: name, property: property, location: at)) }
        let template = TextTemplate(parts: [.text("At "), ref("place"), .text(": "), ref("order", "total"), .text(", "), ref("order", "count"),
                                            .text(" soups at "), ref("order", "readyTime"), .text(" in "), ref("order", "wait"), .text("; "),
                                            ref("order"), ref("order", "missing"), ref("unset")])
        #expect(variables.render(template) == "At Lewis Avenue: 6.50, 2 soups at 12:05 in one minute and thirty seconds; Ordered.")
        #expect(variables.canonical(TextTemplate(parts: [ref("order", "wait")])) == "90")
        #expect(variables.canonical(TextTemplate(parts: [ref("order", "count")])) == "2")
    }

    @Test func comparisonsOnNumbersWordsAndText() {
        var variables = ShortcutVariables(calendar: Self.utc)
        variables["n"] = .text("twelve")
        variables["yes"] = .text("Yes")
        variables["no"] = .text("no")
        variables["zero"] = .text("0")
        variables["note"] = .text("buy milk and bread")
        let at = SourceLocation(file: "t.yaml", line: 1, column: 1)
        func ref(_ name: String) -> VariableReference { VariableReference(name: name, location: at) }
        func t(_ text: String) -> TextTemplate { TextTemplate(literal: text) }
        #expect(variables.holds(ref("n"), .above(t("10"))))
        #expect(!variables.holds(ref("n"), .below(t("10"))))
        #expect(variables.holds(ref("n"), .equals(t("12"))))
        #expect(variables.holds(ref("n"), .atLeast(t("12"))) && variables.holds(ref("n"), .atMost(t("12"))))
        #expect(variables.holds(ref("yes"), .isTrue))
        #expect(!variables.holds(ref("no"), .isTrue) && !variables.holds(ref("zero"), .isTrue) && !variables.holds(ref("unset"), .isTrue))
        #expect(variables.holds(ref("yes"), .equals(t("yes"))) && variables.holds(ref("yes"), .notEquals(t("no"))))
        #expect(variables.holds(ref("note"), .contains(t("Milk"))) && !variables.holds(ref("note"), .contains(t("milk bread"))))
        #expect(!variables.holds(ref("note"), .above(t("3"))))  // not a number: never above
    }

    @Test func aTimeTriggerFiresOnceOnItsDays() throws {
        let weekdays = try shortcut("name: Lunch\ntriggers:\n  - time: \"12:00\"\n    days: [mon, wed]\nactions: [{speak: hi}]\n")
        var plan = TimeTriggerPlan(shortcuts: [weekdays], now: Self.date(23, 11, 0), calendar: Self.utc)
        #expect(plan.nextDeadline == Self.date(23, 12, 0))
        let early = plan.due(now: Self.date(23, 11, 59)), onTime = plan.due(now: Self.date(23, 12, 0)), after = plan.due(now: Self.date(23, 12, 1))
        #expect(early.isEmpty)
        #expect(onTime == ["Lunch"])
        #expect(after.isEmpty)
        // Tuesday is not listed: next is Wednesday.
        #expect(plan.nextDeadline == Self.date(25, 12, 0))
    }

    @Test func aJumpForwardOverTheTimeDoesNotFireAndAJumpBackDoesNotFireTwice() throws {
        let daily = try shortcut("name: Tea\ntriggers:\n  - time: \"07:30\"\nactions: [{speak: hi}]\n")
        var plan = TimeTriggerPlan(shortcuts: [daily], now: Self.date(23, 7, 0), calendar: Self.utc)
        var detector = WallClockJumpDetector(wall: Self.date(23, 7, 0), monotonic: 100)
        // Ten real seconds pass, but the wall clock says 09:00: the clock was set.
        let jumped = Self.date(23, 9, 0)
        let forward = detector.jump(wall: jumped, monotonic: 110)
        #expect(forward == 7190)
        plan.replan(now: jumped)
        let skipped = plan.due(now: jumped)
        #expect(skipped.isEmpty)
        #expect(plan.nextDeadline == Self.date(24, 7, 30))
        // Normal time passing is no jump.
        let none = detector.jump(wall: Self.date(23, 9, 1), monotonic: 171)
        #expect(none == nil)
        // It fires the next morning, then the clock goes back an hour: not again that day.
        let morning = plan.due(now: Self.date(24, 7, 30))
        #expect(morning == ["Tea"])
        // From 09:01 to 06:45 next day the wall clock shows 78,240 s; an hour more really passed.
        let back = detector.jump(wall: Self.date(24, 6, 45), monotonic: 171 + 78_240 + 3_600)
        #expect(back == -3_600)
        plan.replan(now: Self.date(24, 6, 45))
        let again = plan.due(now: Self.date(24, 7, 30))
        #expect(again.isEmpty)
        #expect(plan.nextDeadline == Self.date(25, 7, 30))
    }
}

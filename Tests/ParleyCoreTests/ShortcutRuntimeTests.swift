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

/// The shortcut step machine, without an engine: every built-in action,
/// variables passed along, nested shortcuts.
@Suite struct ShortcutExecutionTests {
    func execution(_ yaml: String, others: [String] = []) throws -> ShortcutExecution {
        let shortcut = try ShortcutLoader.parse(yaml: yaml, file: "t.yaml")
        let library = try others.enumerated().map { try ShortcutLoader.parse(yaml: $1, file: "o\($0).yaml") }
        return ShortcutExecution(shortcut, trigger: "shortcut", library: [shortcut] + library, calendar: ShortcutRuntimeTests.utc)
    }

    @Test func builtInActionsRunInOrderWithVariables() throws {
        var run = try execution("""
            name: Morning
            actions:
              - led: listening
              - sound: chime
              - ask: How many cups?
                as: cups
                type: number
              - if: cups
                above: 1
                then:
                  - set: word
                    to: cups
                else:
                  - set: word
                    to: cup
              - repeat: 2
                do:
                  - speak: "Pour {index} of {cups} {word}."
              - wait: 5
              - choose: Milk?
                options: [oat, none]
                as: milk
              - run: CoffeeMaker.orderDrink
                with: { coffeeDrink: latte, size: ask, milkAmount: "{milk}", roast: { ask: "Which roast?" } }
                as: order
              - speak: "That was {order.total}."
              - shortcut: Bye
            """, others: ["name: Bye\nactions: [{speak: Bye.}]\n"])
        #expect(run.next() == .led(.listening))
        #expect(run.next() == .sound("chime"))
        #expect(run.next() == .ask(question: "How many cups?", type: .number, options: nil))
        #expect(run.isAwaitingReport)
        run.answered("2")
        #expect(run.next() == .speak("Pour 1 of 2 cups."))
        #expect(run.next() == .speak("Pour 2 of 2 cups."))
        #expect(run.next() == .wait(seconds: 5))
        #expect(run.next() == .ask(question: "Milk?", type: .text, options: ["oat", "none"]))
        run.answered("oat")
        #expect(run.next() == .run(app: "CoffeeMaker", intent: "orderDrink", values: ["coffeeDrink": "latte", "milkAmount": "oat"],
                                   askEachTime: ["size": nil, "roast": "Which roast?"]))
        run.ran(spoken: "Ordered.", output: ["total": .number(4.25)], summary: "order a large latte")
        #expect(run.next() == .speak("That was 4.25."))
        #expect(run.next() == .speak("Bye."))
        #expect(run.next() == .finished)
        #expect(run.stoppedLine == "Stopped Morning. Already done: order a large latte.")
    }

    @Test func nestedRepeatsKeepTheirOwnIndexAndNothingDoneIsSaid() throws {
        var run = try execution("""
            name: Grid
            actions:
              - repeat: 2
                do:
                  - repeat: 2
                    do: [{ speak: "inner {index}" }]
                  - speak: "outer {index}"
            """)
        var lines: [String] = []
        while case .speak(let line) = run.next() { lines.append(line) }
        #expect(lines == ["inner 1", "inner 2", "outer 1", "inner 1", "inner 2", "outer 2"])
        #expect(run.stoppedLine == "Stopped Grid. Nothing was done.")
    }
}

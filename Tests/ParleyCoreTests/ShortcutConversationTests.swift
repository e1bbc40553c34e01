import Foundation
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

/// Shortcuts run by the engine: every built-in action, variables and
/// properties, Ask Each Time, each trigger kind, cancel in the middle, an
/// order inside an automation with and without the press, a clock jump.
@Suite struct ShortcutConversationTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// An engine with the bundled apps (no primary app) and these shortcut files loaded.
    func harness(_ files: [String]) async throws -> EngineHarness {
        var configuration = EngineConfiguration()
        configuration.calendar = Self.utc
        configuration.tipsEnabled = false
        let h = try EngineHarness(apps: BundledApps.all, configuration: configuration)
        let registry = try AppRegistry(apps: BundledApps.all)
        let parsed = try files.enumerated().map { index, yaml -> (file: String, result: Result<Shortcut, ShortcutFileError>) in
            ("s\(index).yaml", .success(try ShortcutLoader.parse(yaml: yaml, file: "s\(index).yaml")))
        }
        let library = ShortcutLibrary.check(parsed, environment: ShortcutEnvironment(registry: registry, inputNames: ["door"]))
        #expect(library.problems.isEmpty, "\(library.problems)")
        await h.engine.setShortcuts(library)
        return h
    }

    static let lunch = """
        name: Lunch
        phrases: [lunch time]
        actions:
          - set: place
            to: lewis
          - run: SoupChef.OrderSoup
            with: { soup: ask, quantity: 2, orderType: pickup, store: "{place}" }
            as: order
          - speak: "Total {order.total}."
        """

    @Test func aPhraseRunsTheShortcutAskEachTimeAndAnOrderStillNeedsTheButton() async throws {
        let h = try await harness([Self.lunch])
        #expect(await h.say("lunch time") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        #expect(await h.say("tomato") == ["Two tomato soups for pickup from Lewis Avenue, six dollars fifty. Press the button to order, or say cancel."])
        #expect(await h.say("yes") == ["A spoken yes can't place an order. Press the button to order, or say cancel."])
        #expect(await h.press() == ["Ordered. Your two tomato soups will be ready at Lewis Avenue in twelve minutes, total six dollars fifty.",
                                    "Total 6.50."])
        let performed = try #require(await h.sink.performed.first)
        #expect(performed.parameters == ["soup": "tomato", "quantity": "2", "orderType": "pickup", "store": "lewis"])
        #expect(performed.trigger == "shortcut")
        #expect(await h.donations.rows.map(\.trigger) == ["shortcut"])
        #expect(await !h.engine.isRunningShortcut)
    }

    @Test func askWithAnotherQuestionChooseIfRepeatSetWaitLedAndSound() async throws {
        let h = try await harness(["""
            name: Tea
            phrases: [tea time]
            actions:
              - led: listening
              - sound: chime
              - ask: How many cups?
                as: cups
                type: number
              - choose: Which tea?
                options: [green, black]
                as: tea
              - if: cups
                above: 1
                then:
                  - set: cupWord
                    to: cups
                else:
                  - set: cupWord
                    to: cup
              - repeat: 2
                do:
                  - speak: "Steep {index}."
              - wait: 30
              - speak: "{cups} {cupWord} of {tea} tea are ready."
              - run: Timer.StartTimer
                with: { duration: { ask: "How long should it steep?" } }
            """])
        #expect(await h.say("tea time") == ["How many cups?"])
        #expect(await h.sink.sounds == ["chime"])
        #expect(await h.say("three") == ["Which tea? Green or black?"])
        #expect(await h.say("black") == ["Steep 1.", "Steep 2."])
        #expect(await h.wait(29).isEmpty)
        #expect(await h.wait(1) == ["3 cups of black tea are ready.", "How long should it steep?"])
        #expect(await h.say("five minutes") == ["Five minutes, starting now."])
        #expect(await h.sink.performed.first?.parameters == ["duration": "300"])
        #expect(await h.sink.performed.first?.trigger == "shortcut")
    }

    @Test func oneShortcutRunsAnotherAndAnOpenAnswerIsTaken() async throws {
        let h = try await harness([
            "name: Greeting\nactions:\n  - ask: What is your name?\n    as: who\n  - shortcut: Welcome\n  - speak: \"Bye {who}.\"\n",
            "name: Welcome\nactions:\n  - speak: Welcome home.\n",
        ])
        #expect(await h.engine.runShortcut(named: "greeting"))
        #expect(await h.say("Ada Lovelace") == ["Welcome home.", "Bye Ada Lovelace."])
    }

    @Test func whatDoesAShortcutDo() async throws {
        let h = try await harness([Self.lunch])
        #expect(await h.say("what does lunch time do") == [
            "Lunch: Set place to \"lewis\", then order two soup for pick up, asking which soup, then say \"Total the order total.\".",
        ])
    }

    @Test func cancelInTheMiddleSaysWhatWasAlreadyDone() async throws {
        let h = try await harness(["""
            name: Evening
            phrases: [evening routine]
            actions:
              - run: Timer.StartTimer
                with: { duration: 600 }
              - ask: Which note?
                as: note
              - speak: never said
            """])
        #expect(await h.say("evening routine") == ["Ten minutes, starting now.", "Which note?"])
        #expect(await h.say("cancel") == ["Cancelled.", "Stopped Evening. Already done: start a ten minutes timer."])
        #expect(await !h.engine.isRunningShortcut)
        // A long press stops it as well.
        #expect(await h.say("evening routine") == ["Ten minutes, starting now.", "Which note?"])
        #expect(await h.press(.longPress) == ["Cancelled.", "Stopped Evening. Already done: start a ten minutes timer."])
    }

    @Test func buttonTriggersRunTheirShortcutsWhenNothingIsOpen() async throws {
        let h = try await harness([
            "name: Double\ntriggers: [{button: double-press}]\nactions: [{speak: Double.}]\n",
            "name: Long\ntriggers: [{button: long-press}]\nactions: [{speak: Long.}]\n",
            "name: Short\ntriggers: [{button: press}]\nactions: [{speak: Short.}]\n",
        ])
        #expect(await h.press(.doublePress) == ["Double."])
        #expect(await h.press(.longPress) == ["Long."])
        #expect(await h.press() == ["Short."])
    }

    @Test func anInputTriggerRunsOnItsEdgeOnly() async throws {
        let h = try await harness(["name: Door\ntriggers: [{input: door, edge: rising}]\nactions: [{speak: Welcome.}]\n"])
        // Loading shortcuts tells the recogniser to rebuild its grammar.
        #expect(await h.sink.events.contains(.listening(.commands)))
        _ = await h.sink.drain()
        await h.engine.input("door", active: false)
        #expect(await h.sink.spoken.isEmpty)
        await h.engine.input("door", active: true)
        #expect(await h.sink.spoken == ["Welcome."])
    }

    static let morning = """
        name: Morning soup
        triggers:
          - time: "08:30"
            days: [mon]
        actions:
          - run: SoupChef.OrderSoup
            with: { soup: tomato, quantity: 1, orderType: pickup, store: lewis }
        """

    @Test func aTimeTriggerFiresAndAnAutomationsOrderWaitsForThePress() async throws {
        // The harness clock starts on a Monday at 08:00 UTC.
        let h = try await harness([Self.morning])
        #expect(await h.wait(29 * 60).isEmpty)
        #expect(await h.wait(60) == ["One tomato soup for pickup from Lewis Avenue, three dollars twenty five. Press the button to order, or say cancel."])
        #expect(await h.press() == ["Ordered. Your tomato soup will be ready at Lewis Avenue in ten minutes, total three dollars twenty five."])
        #expect(await h.sink.performed.first?.trigger == "automation")
        #expect(await h.donations.rows.map(\.trigger) == ["automation"])
    }

    @Test func aNewTimeZoneMovesATimeTriggerToItsClock() async throws {
        // Monday 08:00 UTC; 08:30 at UTC-1 (Etc/GMT+1, POSIX's inverted sign) is 09:30 UTC.
        let h = try await harness([Self.morning])
        await h.engine.setTimeZone(TimeZone(identifier: "Etc/GMT+1")!)
        #expect(await h.engine.configuration.calendar.timeZone.identifier == "Etc/GMT+1")
        #expect(await h.wait(30 * 60).isEmpty)
        #expect(await h.wait(59 * 60).isEmpty)
        #expect(await h.wait(60).first?.hasPrefix("One tomato soup") == true)
    }

    @Test func anAutomationGivesUpPolitelyWhenNobodyPresses() async throws {
        let h = try await harness([Self.morning])
        await h.wait(30 * 60)
        let window = EngineConfiguration().confirmationTimeout
        #expect(await h.wait(window).first?.hasPrefix("One tomato soup") == true)  // asked once more
        #expect(await h.wait(window) == ["Nobody pressed the button, so nothing was ordered.", "Stopped Morning soup. Nothing was done."])
        #expect(await h.sink.performed.isEmpty)
        #expect(await !h.engine.isRunningShortcut)
    }

    @Test func aWallClockJumpOverTheTimeDoesNotFireAndTheNextDayDoes() async throws {
        let h = try await harness([Self.morning])
        // NTP sets the clock an hour forward at 08:10: 08:30 was never reached.
        await h.wait(10 * 60)
        #expect(await h.jumpWallClock(by: 3600).isEmpty)
        #expect(await h.wait(3600).isEmpty)
        // Monday only: the next one is a week later.
        #expect(await h.wait(7 * 24 * 3600 - 100 * 60).first?.hasPrefix("One tomato soup") == true)
    }
}

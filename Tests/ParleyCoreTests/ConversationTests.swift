import Foundation
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

/// Every conversation path of docs/spec.md §5, through the engine `parley chat` uses.
@Suite struct ConversationTests {
    func harness(_ configuration: EngineConfiguration = EngineConfiguration(), donations: [Donation] = []) throws -> EngineHarness {
        try EngineHarness(apps: BundledApps.all + [ChiliApp()], primaryApp: "Coffee Maker",
                          configuration: configuration, donations: donations)
    }

    let soupConfirmation = "One clam chowder for pickup from Lewis Avenue, three dollars seventy five. Press the button to order, or say cancel."

    @Test func aMissingValueIsAskedAsAShortListAndAnOrderNeedsTheButton() async throws {
        let h = try harness()
        #expect(await h.say("Order a latte with Barista.") == ["Which size? Small, medium or large?"])
        #expect(await h.say("Large.") == ["A large latte from the corner café, four dollars twenty five. Press the button to order, or say cancel."])
        #expect(await h.sink.leds.last == .awaitingConfirmation)
        #expect(await h.say("yes") == ["A spoken yes can't place an order. Press the button to order, or say cancel."])
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.press() == ["Ordered. It will be ready in eleven minutes. Your large latte, four dollars twenty five."])
        let performed = try #require(await h.sink.performed.first)
        #expect(performed.app == "CoffeeMaker")
        #expect(performed.intent == "orderDrink")
        #expect(performed.parameters == ["coffeeDrink": "latte", "size": "large"])
        #expect(await h.sink.leds == [.thinking, .speaking, .success, .idle])
    }

    @Test func aWholeOrderIsUnderstoodFromOneSentence() async throws {
        let h = try harness()
        let lines = await h.say("can I get a twelve ounce dark roast double shot americano with a bit of cream")
        #expect(lines == ["A twelve ounce dark roast double shot americano with a bit of cream from the corner café, four dollars. Press the button to order, or say cancel."])
        await h.press()
        #expect(await h.sink.performed.first?.parameters == ["size": "twelve ounce", "roast": "dark roast", "numberOfShots": "double shot",
                                                             "coffeeDrink": "americano", "milkAmount": "a bit of cream"])
    }

    @Test func soupWithAnOrdinalAStoreDisambiguationAndATip() async throws {
        let h = try harness()
        #expect(await h.say("Hey, order soup with Soup Chef.") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        // Quantity is asked when it was not said (the seeds' Soup Chef).
        #expect(await h.say("The first one.") == ["How many soups do you want?"])
        #expect(await h.say("one") == ["There are two stores near you. Which one: Sheridan Boulevard or Lewis Avenue?"])
        #expect(await h.say("Lewis.") == [soupConfirmation])
        let done = await h.press()
        #expect(done == ["Ordered. Your clam chowder will be ready at Lewis Avenue in ten minutes, total three dollars seventy five.",
                         "Next time, just say: order clam chowder with Soup Chef."])  // spares the soup question
        #expect(await h.sink.performed.first?.parameters == ["soup": "clamChowder", "quantity": "1", "orderType": "pickup", "store": "lewis"])
        // The tip is given once.
        await h.say("order soup with soup chef")
        await h.say("chowder")
        await h.say("one")
        await h.say("the second one")
        #expect(await h.press().count == 1)
    }

    @Test func synonymsAndDistinctiveWordsAreAccepted() async throws {
        let h = try harness()
        await h.say("order soup with soup chef")
        #expect(await h.say("chicken soup please") == ["How many soups do you want?"])
        #expect(await h.say("two") == ["There are two stores near you. Which one: Sheridan Boulevard or Lewis Avenue?"])
        await h.say("sheridan")
        await h.press()
        #expect(await h.sink.performed.first?.parameters["soup"] == "chickenNoodle")
        #expect(await h.sink.performed.first?.parameters["store"] == "sheridan")
    }

    @Test func disambiguationNamesOnlyWhatDiffers() async throws {
        let h = try harness()
        #expect(await h.say("serve chili with chili shack") == ["Which chili? Beef or veggie?"])
        #expect(await h.say("the second one") == ["Served. One bowl of veggie chili."])
        await h.say("serve chili with chili shack")
        #expect(await h.say("beef") == ["Served. One bowl of beef chili."])
        #expect(await h.sink.performed.first?.parameters == ["pot": "beef"])
    }

    @Test func customResolutionConfirmsSkipsAndRefusesValues() async throws {
        let h = try harness()
        #expect(await h.say("pour chili with chili shack") == ["Beef chili, right?"])
        #expect(await h.say("yes") == ["Which topping? Cheese or onions?"])
        #expect(await h.say("onion") == ["How many bowls?"])
        #expect(await h.say("three") == ["Only two bowls are clean.", "How many bowls?"])
        // No tip: the only phrase is the one just said, which spares no question.
        #expect(await h.say("two") == ["Poured two of beef chili with onions."])
        #expect(await h.sink.performed.first?.parameters == ["pot": "beef", "topping": "onions", "bowls": "2"])
        await h.say("pour chili with chili shack")
        #expect(await h.say("no") == ["Which chili? Beef chili or veggie chili?"])
        #expect(await h.say("veggie") == ["How many bowls?"]) // no topping for veggie
        #expect(await h.say("one") == ["Poured one of veggie chili."])
    }

    @Test func anUnsupportedValueGivesTheReasonAndAsksAgain() async throws {
        let h = try harness()
        try await h.engine.addCustomPhrase("soup for the team", app: "SoupChef", intent: "OrderSoup", parameters: ["soup": "tomato", "quantity": "12"])
        #expect(await h.say("soup for the team") == ["Only ten soups can be ordered at once.", "How many soups do you want?"])
        #expect(await h.say("eleven") == ["Only ten soups can be ordered at once.", "How many soups do you want?"])
        #expect(await h.say("two") == ["There are two stores near you. Which one: Sheridan Boulevard or Lewis Avenue?"])
        await h.say("lewis")
        await h.press()
        #expect(await h.sink.performed.first?.parameters["quantity"] == "2")
    }

    @Test func childParametersAreAskedOnlyWhenTheirParentCallsForThem() async throws {
        let h = try harness()
        #expect(await h.say("order soup for delivery with soup chef") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        #expect(await h.say("tomato") == ["How many soups do you want?"])
        #expect(await h.say("one") == ["What is the delivery address?"])
        #expect(await h.say("12 Main Street") == ["One tomato soup for delivery to 12 Main Street, five dollars twenty five. Press the button to order, or say cancel."])
        await h.press()
        #expect(await h.sink.performed.first?.parameters == ["soup": "tomato", "quantity": "1", "orderType": "delivery", "deliveryAddress": "12 Main Street"])
    }

    @Test func aTipNeverSuggestsAPhraseThatWouldOrderSomethingElse() async throws {
        let h = try harness()
        await h.say("order soup for delivery with soup chef")
        await h.say("tomato")
        await h.say("one")
        await h.say("12 Main Street")
        // "Order tomato with Soup Chef" would order for pickup, and the only
        // delivery phrase spares no question: no tip.
        #expect(await h.press() == ["Ordered. Your tomato soup will be delivered in thirty minutes, total five dollars twenty five."])
        #expect(await h.sink.performed.first?.parameters["orderType"] == "delivery")
        // A pickup order still gets its tip, once.
        await h.say("order soup with soup chef")
        await h.say("tomato")
        await h.say("one")
        await h.say("lewis")
        #expect(await h.press().last == "Next time, just say: order tomato with Soup Chef.")
    }

    @Test func theUsualIsProposedAsAParameterConfirmation() async throws {
        let past = (1...3).map { day in
            Donation(app: "SoupChef", intent: "OrderSoup", parameters: ["soup": "tomato", "quantity": "1", "orderType": "pickup", "store": "lewis"],
                     date: Date(timeIntervalSince1970: 1_700_000_000 + Double(day) * 3600), trigger: "voice")
        }
        let h = try harness(donations: past)
        #expect(await h.say("order soup with soup chef") == ["Tomato, as usual?"])
        let quantity = await h.say("yes")
        #expect(quantity == ["One, as usual?"])  // the usual quantity too
        #expect(await h.say("yes") == ["There are two stores near you. Which one: Lewis Avenue or Sheridan Boulevard?"])
        await h.say("lewis")
        await h.press()
        #expect(await h.sink.performed.first?.parameters["soup"] == "tomato")

        let other = try harness(donations: past)
        await other.say("order soup with soup chef")
        #expect(await other.say("no") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
    }

    @Test func cancelWorksAtEveryStep() async throws {
        let h = try harness()
        for (setup, stopper) in [(["order soup with soup chef"], "cancel"),
                                 (["order soup with soup chef", "tomato"], "never mind"),
                                 (["order soup with soup chef", "tomato", "lewis"], "stop"),
                                 (["order a latte with barista"], ":long-press"),
                                 (["give me a large latte"], ":long-press")] {
            for line in setup { await h.say(line) }
            let reply = stopper == ":long-press" ? await h.press(.longPress) : await h.say(stopper)
            #expect(reply == ["Cancelled."], "\(setup) then \(stopper)")
            #expect(await h.sink.leds.last == .idle)
            #expect(await h.engine.isConversationOpen == false)
        }
        await h.press() // a press afterwards orders nothing
        #expect(await h.donations.rows.isEmpty)
    }

    @Test func theAnswerWindowStartsWhenTheDeviceStopsSpeaking() async throws {
        var configuration = EngineConfiguration()
        configuration.confirmationTimeout = 2
        let h = try harness(configuration)
        await h.say("give me a large latte")
        // The confirmation line takes longer to say than the whole window.
        for _ in 0..<30 { #expect(await h.wait(0.2, deviceSpeaking: true).isEmpty) }
        #expect(await h.wait(1.9).isEmpty)  // the window runs only from the end of the line
        #expect(await h.press() == ["Ordered. It will be ready in eleven minutes. Your large latte, four dollars twenty five."])
        // Without the voice playing, the same window does run out.
        await h.say("give me a large latte")
        #expect(await h.wait(2.1).count == 1)
    }

    @Test func repeatSaysTheLastLineAgain() async throws {
        let h = try harness()
        await h.say("order soup with soup chef")
        #expect(await h.say("repeat that") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        await h.say("tomato"); await h.say("one"); await h.say("lewis")
        #expect(await h.say("say that again") == ["One tomato soup for pickup from Lewis Avenue, three dollars twenty five. Press the button to order, or say cancel."])
    }

    @Test func silenceIsAskedAboutOnceThenThePoliteEnd() async throws {
        let h = try harness()
        await h.say("order soup with soup chef")
        #expect(await h.wait(3).isEmpty)
        #expect(await h.wait(5) == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        #expect(await h.wait(8) == ["No answer heard, so nothing was done."])
        #expect(await h.sink.leds.last == .idle)
        #expect(await h.engine.isConversationOpen == false)
        // The same at the order confirmation.
        await h.say("give me a large latte")
        #expect(await h.wait(20).count == 1)
        #expect(await h.wait(20) == ["No answer heard, so nothing was done."])
        #expect(await h.donations.rows.isEmpty)
    }

    @Test func aThrowingOrCrashingAppGivesASpokenErrorAndTheDeviceKeepsWorking() async throws {
        let h = try harness()
        #expect(await h.say("burn chili with chili shack") == ["That didn't work. The stove is off."])
        #expect(await h.sink.leds.suffix(2) == [.error, .idle])
        #expect(await h.say("crash chili with chili shack") == ["That didn't work because of a problem in the app. Nothing was done."])
        #expect(await h.say("serve chili with chili shack") == ["Which chili? Beef or veggie?"])
    }

    @Test func aSlowAppIsStoppedAtItsTimeLimit() async throws {
        let h = try harness()
        let running = Task { await h.engine.hear("slow chili with chili shack") }
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: 10)
        await running.value
        #expect(await h.sink.spoken == ["That took too long and was stopped. Please try again later."])
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.say("serve chili with chili shack") == ["Which chili? Beef or veggie?"])
    }

    @Test func theDevicesPerformLimitCapsAnAppsOwnLimit() async throws {
        var configuration = EngineConfiguration()
        configuration.performTimeLimit = 2
        let h = try harness(configuration)
        let running = Task { await h.engine.hear("slow chili with chili shack") }
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: 1.9)
        #expect(await h.sink.spoken.isEmpty)
        h.clock.advance(by: 0.1)  // 2 s: the device's limit, before the app's 10 s
        await running.value
        #expect(await h.sink.spoken == ["That took too long and was stopped. Please try again later."])
        #expect(await h.sink.performed.isEmpty)
    }

    @Test func everyPerformedIntentIsDonated() async throws {
        let h = try harness()
        await h.say("start a ten minute timer")
        await h.say("give me a large latte")
        await h.press()
        let rows = await h.donations.rows
        #expect(rows.map(\.intent) == ["StartTimer", "orderDrink"])
        #expect(rows[0].parameters == ["duration": "600"])
        #expect(rows[1].parameters == ["size": "large", "coffeeDrink": "latte"])
        #expect(rows.allSatisfy { $0.trigger == "voice" && $0.date == h.clock.now })
        // A failed donation write does not stop the action.
        await h.donations.setFailWrites(true)
        #expect(await h.say("how much time is left on the timer") == ["Ten minutes left. The ten minute timer ends then."])
    }

    @Test func aPressWhenIdleSuggestsTheUsualAndASecondPressOrders() async throws {
        let clock = ManualClock()
        let usual = ["soup": "tomato", "quantity": "1", "orderType": "pickup", "store": "lewis"]
        let past = (1...2).map { week in
            Donation(app: "SoupChef", intent: "OrderSoup", parameters: usual, date: clock.now - Double(week) * 7 * 86400, trigger: "voice")
        }
        let h = try EngineHarness(apps: BundledApps.all, primaryApp: "Coffee Maker", donations: past, clock: clock)
        let suggestion = await h.press()
        #expect(suggestion == ["Your usual at this time: one tomato soup for pickup from Lewis Avenue, three dollars twenty five. Press again to order."])
        #expect(await h.sink.leds.last == .awaitingConfirmation)
        await h.press()
        let performed = try #require(await h.sink.performed.first)
        #expect(performed.parameters == usual)
        #expect(performed.trigger == "button")
    }

    @Test func aPushToTalkBoardOpensAWindowInsteadOfSuggesting() async throws {
        let clock = ManualClock()
        let usual = ["soup": "tomato", "quantity": "1", "orderType": "pickup", "store": "lewis"]
        let past = (1...2).map { week in
            Donation(app: "SoupChef", intent: "OrderSoup", parameters: usual, date: clock.now - Double(week) * 7 * 86400, trigger: "voice")
        }
        var configuration = EngineConfiguration()
        configuration.suggestsOnIdlePress = false
        let h = try EngineHarness(apps: BundledApps.all, primaryApp: "Coffee Maker", configuration: configuration,
                                  donations: past, clock: clock)
        #expect(await h.press() == [])
        #expect(await h.engine.listeningMode == .window)
        #expect(await h.sink.leds.last == .listening)
        #expect(await h.say("start a ten minute timer") == ["Ten minutes, starting now."])
        #expect(await h.sink.performed.map(\.intent) == ["StartTimer"])
    }

    @Test func aUsualMissingARequiredValueIsNotSuggested() async throws {
        let clock = ManualClock()
        let past = (1...2).map { week in
            Donation(app: "SoupChef", intent: "OrderSoup", parameters: ["quantity": "1"], date: clock.now - Double(week) * 7 * 86400, trigger: "voice")
        }
        let h = try EngineHarness(apps: BundledApps.all, donations: past, clock: clock)
        #expect(await h.press().isEmpty)
        #expect(await h.sink.leds == [.listening])
        #expect(await h.press().isEmpty)
        #expect(await h.sink.performed.isEmpty)
    }

    @Test func aPressWhenIdleWithNoHabitOpensAListeningWindow() async throws {
        let h = try harness()
        #expect(await h.press().isEmpty)
        #expect(await h.sink.leds == [.listening])
        #expect(await h.wait(10).isEmpty)
        #expect(await h.sink.leds == [.idle])
    }

    @Test func whatCanISayListsTheMostUsedFirst() async throws {
        let past = (1...3).map { _ in Donation(app: "Timer", intent: "TimeLeft", parameters: [:], date: .distantPast, trigger: "voice") }
        let h = try harness(donations: past)
        let lines = await h.say("what can I say?")
        #expect(lines == ["You can say: how much time is left on the timer, order a latte, order soup with Soup Chef, start a one minute timer or cancel the timer."])
        #expect(await h.say("what can soup chef do") == ["Soup Chef can order soup. For example, say: order soup with Soup Chef."])
        #expect(await h.say("what can the timer do") == ["Timer can start a timer, tell the time left and cancel the timer. For example, say: how much time is left on the timer."])
    }

    @Test func aTimerChimesWhenItEnds() async throws {
        let h = try harness()
        #expect(await h.say("Hey, start a ten minute timer.") == ["Ten minutes, starting now."])
        #expect(await h.wait(300).isEmpty)
        #expect(await h.say("how much time is left on the timer") == ["Five minutes left. The ten minute timer ends then."])
        #expect(await h.wait(300) == ["The ten minute timer is done."])
        #expect(await h.sink.sounds == ["chime"])
        await h.say("start a timer")
        #expect(await h.sink.spoken == ["For how long?"])
        #expect(await h.say("an hour and a half") == ["One hour and thirty minutes, starting now."])
        #expect(await h.say("cancel the timer") == ["Timer cancelled. The one and a half hour timer will not ring."])
        #expect(await h.wait(5400).isEmpty)
    }

    @Test func notesAreCreatedFoundAndDeletedWithConfirmation() async throws {
        let h = try harness()
        #expect(await h.say("add a note with notes") == ["What should the note say?"])
        #expect(await h.say("buy oat milk") == ["Noted. The note says: buy oat milk."])
        #expect(await h.say("read my notes with notes") == ["There is one note. The latest: buy oat milk."])
        await h.say("find a note in notes")
        #expect(await h.say("milk") == ["One note: buy oat milk."])
        #expect(await h.say("delete a note from notes") == ["Which note? Buy oat milk?"])
        #expect(await h.say("the first one") == ["The note \"buy oat milk\" will be deleted for good. Say yes or press the button to delete it, or say cancel."])
        #expect(await h.say("yes") == ["Deleted. The note \"buy oat milk\" is gone."])
        #expect(await h.say("read my notes") == ["There are no notes."])
        #expect(await h.say("delete a note from notes") == ["That didn't work. There are no notes to delete."])
    }

    @Test func longListsAreAskedOpenlyAndMatchedBySpokenText() async throws {
        let h = try harness()
        for note in ["call the plumber", "buy eggs", "water the plants", "book the dentist", "pay the rent", "fix the bike"] {
            await h.say("add a note with notes")
            await h.say(note)
            await h.wait(1) // distinct creation times, newest last
        }
        #expect(await h.say("delete a note from notes") == ["Which note?"])
        #expect(await h.say("plumber") == ["The note \"call the plumber\" will be deleted for good. Say yes or press the button to delete it, or say cancel."])
        #expect(await h.say("no") == ["Cancelled."])
        await h.say("delete a note from notes")
        #expect(await h.say("the bicycle") == ["Sorry? Which note?"])
        #expect(await h.say("fix the bike") == ["The note \"fix the bike\" will be deleted for good. Say yes or press the button to delete it, or say cancel."])
        #expect(await h.say("yes") == ["Deleted. The note \"fix the bike\" is gone."])
        #expect(try await h.engine.deleteCustomPhrase("no such phrase") == false)
    }

    @Test func voiceConfirmationFollowsTheConfiguration() async throws {
        let h = try harness(EngineConfiguration(voiceConfirmableCategories: []))
        await h.say("add a note with notes")
        await h.say("call the plumber")
        await h.say("delete a note from notes")
        #expect(await h.say("plumber") == ["The note \"call the plumber\" will be deleted for good. Press the button to delete it, or say cancel."])
        #expect(await h.say("yes") == ["A spoken yes can't confirm this. Press the button to delete it, or say cancel."])
        #expect(await h.press() == ["Deleted. The note \"call the plumber\" is gone."])
        // Orders can never be voice-confirmed, whatever the configuration says.
        #expect(EngineConfiguration(voiceConfirmableCategories: [.order, .payment, .delete]).voiceConfirmableCategories == [.delete])
    }

    @Test func withoutAWorkingButtonAnOrderIsRefusedAloudAndVoiceConfirmationStillWorks() async throws {
        var configuration = EngineConfiguration()
        configuration.buttonAvailable = false
        let h = try harness(configuration)
        // The order is refused at once, not left waiting for a press that cannot come.
        #expect(await h.say("give me a large latte") == ["This order needs the button, which is not working, so nothing was ordered."])
        #expect(await h.sink.leds.suffix(2) == [.error, .idle])
        #expect(await h.engine.isConversationOpen == false)
        #expect(await h.wait(60).isEmpty)
        #expect(await h.press().isEmpty)  // a press arriving anyway (`parley press`) orders nothing
        #expect(await h.sink.performed.isEmpty)
        // A category the configuration lets a voice confirm does not mention the button.
        await h.say("add a note with notes")
        await h.say("call the plumber")
        await h.say("delete a note from notes")
        #expect(await h.say("plumber") == ["The note \"call the plumber\" will be deleted for good. Say yes to delete it, or say cancel."])
        #expect(await h.say("yes") == ["Deleted. The note \"call the plumber\" is gone."])
        // Forgetting the history is confirmed by the button only.
        #expect(await h.say("forget my history") == ["Forgetting the history needs the button, which is not working, so nothing was deleted."])
        #expect(try await h.engine.stores.donations.donations(app: nil, intent: nil, limit: nil).count == 2)  // the note's create and delete
    }

    @Test func withoutAWorkingButtonACategoryNotVoiceConfirmableIsRefused() async throws {
        var configuration = EngineConfiguration(voiceConfirmableCategories: [])
        configuration.buttonAvailable = false
        let h = try harness(configuration)
        await h.say("add a note with notes")
        await h.say("call the plumber")
        await h.say("delete a note from notes")
        #expect(await h.say("plumber") == ["This needs the button to delete it, and the button is not working, so nothing was done."])
        #expect(await h.say("read my notes") == ["There is one note. The latest: call the plumber."])
    }

    @Test func dialogFollowsThePlatformRules() async throws {
        let h = try harness()
        var lines: [String] = []
        for line in ["order soup with soup chef", "tomato", "one", "lewis", ":press", "order a latte with barista", "medium", "cancel",
                     "serve chili with chili shack", "veggie", "add a note with notes", "hello", "start a timer", "ten minutes"] {
            lines += line == ":press" ? await h.press() : await h.say(line)
        }
        let names = ["Soup Chef", "Coffee Maker", "Barista", "Chili Shack", "Notes", "Timer"]
        for line in lines {
            let words = line.split(whereSeparator: { !$0.isLetter && $0 != "'" }).map(String.init)
            #expect(!words.contains("I") && !words.contains("we") && !words.contains("We"), "\(line)")
            #expect(!line.lowercased().contains("confirm"), "\(line)")
        }
        let questions = lines.filter { $0.hasSuffix("?") }
        #expect(questions.count == 7)  // with Soup Chef's quantity
        for question in questions { #expect(!names.contains { question.contains($0) }, "\(question)") }
        for confirmation in lines where confirmation.contains("Press the button") {
            #expect(confirmation.contains("Press the button to order") && confirmation.contains("dollars"))
        }
    }

    @Test func mutedAndUnsureSpeechIsIgnoredButTheButtonWorks() async throws {
        let h = try harness()
        await h.engine.hear("order soup with soup chef", confidence: 0.2)
        #expect(await h.sink.spoken.isEmpty)
        await h.engine.setMuted(true)
        #expect(await h.say("order soup with soup chef").isEmpty)
        #expect(await h.sink.leds == [])
        await h.engine.setMuted(false)
        #expect(await h.say("order soup with soup chef").count == 1)
        #expect(await h.press(.longPress) == ["Cancelled."])
        #expect(await h.say("the weather is nice").isEmpty)
        #expect(await h.sink.leds.isEmpty)
    }

    @Test func customPhrasesThatClashAreRefused() async throws {
        let h = try harness()
        await #expect(throws: IntentError.self) {
            try await h.engine.addCustomPhrase("Order soup with Soup Chef!", app: "SoupChef", intent: "OrderSoup", parameters: [:])
        }
        await #expect(throws: IntentError.self) {
            try await h.engine.addCustomPhrase("lunch", app: "SoupChef", intent: "Nothing", parameters: [:])
        }
        try await h.engine.addCustomPhrase("coffee time", app: "CoffeeMaker", intent: "orderDrink",
                                           parameters: ["coffeeDrink": "latte", "size": "large", "roast": "light roast", "milkAmount": "a bit of soy milk"])
        #expect(await h.say("Hey, coffee time.") == ["A large light roast latte with a bit of soy milk from the corner café, four dollars fifty. Press the button to order, or say cancel."])
        #expect(await h.press() == ["Ordered. It will be ready in eleven minutes. Your large light roast latte with a bit of soy milk, four dollars fifty."])
    }

    @Test func customPhraseTargetsAreTakenAsPeopleWriteThemAndStoredCanonically() async throws {
        let h = try harness()
        try await h.engine.addCustomPhrase("soup o clock", app: "soup chef", intent: "ordersoup", parameters: ["soup": "Tomato"])
        let stored = try await h.engine.customPhrases()
        #expect(stored.map(\.app) == ["SoupChef"] && stored.map(\.intent) == ["OrderSoup"])
        #expect(stored.first?.parameters == ["soup": "tomato"])
        // The fixed soup is used: the next question is the quantity.
        #expect(await h.say("soup o clock") == ["How many soups do you want?"])

        func refusal(app: String, intent: String, parameters: [String: String]) async -> String? {
            do {
                try await h.engine.addCustomPhrase("lunch time", app: app, intent: intent, parameters: parameters)
                return nil
            } catch { return "\(error)" }
        }
        #expect(await refusal(app: "Pizza Palace", intent: "OrderSoup", parameters: [:])?.contains("no app 'Pizza Palace'; installed: ") == true)
        #expect(await refusal(app: "SoupChef", intent: "Fly", parameters: [:])?.contains("it has: OrderSoup") == true)
        #expect(await refusal(app: "SoupChef", intent: "OrderSoup", parameters: ["flavour": "x"])?
            .contains("'flavour' is not a parameter of Soup Chef.OrderSoup") == true)
        #expect(await refusal(app: "SoupChef", intent: "OrderSoup", parameters: ["soup": "gazpacho"])?
            .contains("'gazpacho' is not a value of soup; expected one of: ") == true)
    }

    @Test func appsDonateExplicitlyWithIdentifiersAndGroups() async throws {
        let h = try harness()
        #expect(await h.say("taste chili with chili shack") == ["Tasty."])
        let rows = await h.donations.rows
        #expect(rows.count == 2)
        #expect(rows[0].identifier == "taste-1" && rows[0].groupIdentifier == "tastings" && rows[0].trigger == "app")
        #expect(rows[0].app == "Chili" && rows[0].intent == "ServeChili" && rows[0].parameters == ["pot": "beef"])
        #expect(rows[1].identifier == "taste-run" && rows[1].groupIdentifier == "tastings" && rows[1].intent == "TasteChili")
        #expect(try await h.donations.delete(.group("tastings")) == 2)
    }

    @Test func tipsCanBeTurnedOffAndDoublePressRunsItsPhrase() async throws {
        var configuration = EngineConfiguration()
        configuration.tipsEnabled = false
        configuration.doublePress = .run(phrase: "start a ten minute timer")
        let h = try harness(configuration)
        await h.say("order soup with soup chef")
        await h.say("tomato")
        await h.say("one")
        await h.say("lewis")
        #expect(await h.press() == ["Ordered. Your tomato soup will be ready at Lewis Avenue in ten minutes, total three dollars twenty five."])
        #expect(await h.press(.doublePress) == ["Ten minutes, starting now."])
        #expect(await h.sink.performed.first?.trigger == "button")
    }

    @Test func ledStatesHaveTheDocumentedNames() {
        #expect(DeviceState.allCases.map(\.rawValue) == ["idle", "listening", "thinking", "speaking", "awaiting-confirmation", "success", "error", "muted"])
    }

    @Test func forgetMyHistoryDeletesEveryDonationOnlyAfterThePress() async throws {
        let h = try harness()
        #expect(await h.say("forget my history") == ["There is no history to forget."])
        #expect(await h.say("start a ten minute timer") == ["Ten minutes, starting now."])
        #expect(await h.say("how much time is left on the timer") == ["Ten minutes left. The ten minute timer ends then."])
        let ask = "Forget the history of two past actions, and the suggestions learned from it? Press the button to forget it, or say cancel."
        #expect(await h.say("Please forget my history.") == [ask])
        #expect(await h.sink.leds.last == .awaitingConfirmation)
        #expect(await h.say("yes") == ["A spoken yes can't delete your history. Press the button to forget it, or say cancel."])
        #expect(try await h.engine.stores.donations.donations(app: nil, intent: nil, limit: nil).count == 2)
        // Cancelled: nothing deleted.
        #expect(await h.say("never mind") == ["Cancelled."])
        #expect(try await h.engine.stores.donations.donations(app: nil, intent: nil, limit: nil).count == 2)
        // Unanswered: asked twice, then given up.
        _ = await h.say("forget my history")
        #expect(await h.wait(21) == [ask])
        #expect(await h.wait(21) == ["No answer heard, so nothing was done."])
        #expect(try await h.engine.stores.donations.donations(app: nil, intent: nil, limit: nil).count == 2)
        // Pressed: all gone.
        _ = await h.say("clear my history")
        #expect(await h.press() == ["Forgotten. Two past actions were deleted."])
        #expect(try await h.engine.stores.donations.donations(app: nil, intent: nil, limit: nil).isEmpty)
    }

    @Test func anUnsureCommandIsAskedBackAndRunsOnYes() async throws {
        let h = try harness()
        #expect(await h.sayUnsure("serve chili with chili shack") == ["Did you say: serve chili with chili shack?"])
        #expect(await h.sink.performed.isEmpty)
        guard case .followUp = await h.engine.listeningMode else { Issue.record("expected the yes/no grammar"); return }
        #expect(await h.say("yes") == ["Which chili? Beef or veggie?"])
        #expect(await h.say("beef") == ["Served. One bowl of beef chili."])
        #expect(await h.sink.performed.first?.parameters == ["pot": "beef"])
        // A press answers yes too.
        await h.sayUnsure("serve chili with chili shack")
        #expect(await h.press() == ["Which chili? Beef or veggie?"])
    }

    @Test func anUnsureCommandAnsweredNoDoesNothingAndListensAgainWithoutTheWakeWord() async throws {
        let h = try harness()
        #expect(await h.sayUnsure("serve chili with chili shack") == ["Did you say: serve chili with chili shack?"])
        #expect(await h.say("no") == ["Okay. Say it again."])
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.donations.rows.isEmpty)
        #expect(await h.engine.listeningMode == .window)
        #expect(await h.say("give me a large latte").first?.hasPrefix("A large latte") == true)
        // "cancel" ends it as anywhere else; silence is asked once, then nothing is done.
        await h.press(.longPress)
        await h.sayUnsure("serve chili with chili shack")
        #expect(await h.say("cancel") == ["Cancelled."])
        #expect(await h.engine.listeningMode == .commands)
        await h.sayUnsure("serve chili with chili shack")
        #expect(await h.wait(8) == ["Did you say: serve chili with chili shack?"])
        #expect(await h.wait(8) == ["No answer heard, so nothing was done."])
        #expect(await h.sink.performed.isEmpty)
    }

    @Test func anUnsureCancelOrRepeatOrAnswerIsNotAskedBack() async throws {
        let h = try harness()
        #expect(await h.sayUnsure("what can i say") == ["Did you say: what can i say?"])
        #expect(await h.say("no") == ["Okay. Say it again."])
        #expect(await h.sayUnsure("repeat that") == ["Okay. Say it again."], "said again at once")
        await h.sayUnsure("serve chili with chili shack")
        // An answer to a question is never asked back, even when unsure.
        #expect(await h.sayUnsure("yes") == ["Which chili? Beef or veggie?"])
        #expect(await h.sayUnsure("veggie") == ["Served. One bowl of veggie chili."])
    }

    @Test func anUnsureOrderIsCheckedByItsReadBackAlone() async throws {
        let h = try harness()
        // No "Did you say" first: the order's own read-back is the check.
        #expect(await h.sayUnsure("order soup with soup chef") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        #expect(await h.say("tomato") == ["How many soups do you want?"])
        #expect(await h.say("one") == ["There are two stores near you. Which one: Sheridan Boulevard or Lewis Avenue?"])
        let readBack = await h.say("lewis")
        #expect(readBack.count == 1 && readBack[0].hasPrefix("One tomato soup for pickup from Lewis Avenue,")
            && readBack[0].hasSuffix("Press the button to order, or say cancel."), "\(readBack)")
        #expect(await h.sink.performed.isEmpty)
        await h.press()
        #expect(await h.sink.performed.first?.parameters["soup"] == "tomato")
        // Not confirmed before it runs: still asked back.
        #expect(await h.sayUnsure("serve chili with chili shack") == ["Did you say: serve chili with chili shack?"])
    }

    @Test func theNamedWakeOpensAWindowForACommandWithoutTheWakeWord() async throws {
        let h = try harness()
        await h.engine.woken(window: 4)
        #expect(await h.engine.listeningMode == .window)
        #expect(await h.sink.sounds == ["wake"])
        #expect(await h.sink.leds.last == .listening)
        // The window closes by itself.
        _ = await h.wait(5)
        #expect(await h.engine.listeningMode == .commands)
        #expect(await h.sink.leds.last == .idle)
        // Within the window a command is heard as usual.
        await h.engine.woken(window: 4)
        #expect(await h.say("order soup with soup chef") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        guard case .followUp = await h.engine.listeningMode else { Issue.record("expected a question"); return }
        // A wake during a conversation changes nothing.
        await h.engine.woken(window: 4)
        guard case .followUp = await h.engine.listeningMode else { Issue.record("the question was dropped"); return }
        #expect(await h.sink.sounds.isEmpty)  // no chime for an ignored wake (the sink was drained by say)
    }

    @Test func theRecogniserIsToldWhatAnswersToExpect() async throws {
        let h = try harness()
        #expect(await h.engine.listeningMode == .commands)
        await h.say("order soup with soup chef")
        guard case .followUp(let model) = await h.engine.listeningMode else {
            Issue.record("expected a follow-up grammar"); return
        }
        #expect(model.words.isSuperset(of: ["clam", "chowder", "tomato", "first", "cancel", "repeat"]))
        #expect(!model.words.contains("latte"))
    }
}

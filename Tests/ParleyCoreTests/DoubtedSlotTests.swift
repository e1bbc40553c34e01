import Foundation
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

/// A chili with a topping named in the phrase: an intent that is not
/// confirmed before it runs, with a slot that can be in doubt.
struct TopChili: AppIntent {
    static let title = "Top chili"
    static let category = IntentCategory.generic
    @Parameter(title: "Topping", prompt: "Which topping?") var topping: Topping
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        IntentResult(dialog: "Topped with \(topping.rawValue).")
    }
}

struct ToppingApp: ParleyApp {
    let identifier = "Toppings"
    let name = "Topping Bar"
    var intents: [any AppIntent.Type] { [TopChili.self] }
    var shortcuts: [AppShortcut] {
        [AppShortcut(intent: TopChili.self, phrases: ["top my chili with {topping} at {app}"], shortTitle: "Top chili")]
    }
}

/// Issue 49: only the slot the recogniser doubts is asked back.
@Suite struct DoubtedSlotTests {
    func harness() throws -> EngineHarness {
        try EngineHarness(apps: BundledApps.all + [ToppingApp()], primaryApp: "Coffee Maker")
    }

    let latteReadBack = "A large latte from the corner café, four dollars twenty five. Press the button to order, or say cancel."

    @Test func anOrderNamesTheDoubtedValueFirstInItsReadBackAndANoAsksForItAgain() async throws {
        let h = try harness()
        #expect(await h.sayUnsure("give me a large latte", doubted: ["large"]) == ["Large, did I hear that right? " + latteReadBack])
        #expect(await h.sink.performed.isEmpty)
        // "No": the size alone is asked again; the drink is kept.
        #expect(await h.say("no") == ["Which size? Small, medium or large?"])
        // Read back again, the doubt settled: no question before it.
        #expect(await h.say("medium") == ["A medium latte from the corner café, three dollars seventy five. Press the button to order, or say cancel."])
        await h.press()
        #expect(await h.sink.performed.first?.parameters["size"] == "medium")
        #expect(await h.sink.performed.first?.parameters["coffeeDrink"] == "latte")
    }

    @Test func cancelOnADoubtedReadBackEndsTheOrder() async throws {
        let h = try harness()
        await h.sayUnsure("give me a large latte", doubted: ["large"])
        #expect(await h.say("cancel") == ["Cancelled."])
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.engine.isConversationOpen == false)
    }

    @Test func anOrderWithoutADoubtedSlotIsReadBackAsBefore() async throws {
        let h = try harness()
        // No doubted word, a word of no value ("give"), or words of two values: no slot is named.
        #expect(await h.sayUnsure("give me a large latte") == [latteReadBack])
        await h.press(.longPress)
        #expect(await h.sayUnsure("give me a large latte", doubted: ["give"]) == [latteReadBack])
        await h.press(.longPress)
        #expect(await h.sayUnsure("give me a large latte", doubted: ["large", "latte"]) == [latteReadBack])
        // A "no" to a read-back without a doubted slot drops the order, as before.
        #expect(await h.say("no") == ["Cancelled."])
    }

    @Test func aDoubtedValueOfACommandRunAtOnceIsAskedAloneAndANoAsksForIt() async throws {
        let h = try harness()
        #expect(await h.sayUnsure("top my chili with cheese at topping bar", doubted: ["cheese"])
            == ["Cheese, did I hear that right?"])
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.say("no") == ["Which topping? Cheese or onions?"])
        #expect(await h.say("onions") == ["Topped with onions."])
        #expect(await h.sink.performed.first?.parameters == ["topping": "onions"])
        // "Yes" (or a press) runs it as heard.
        await h.sayUnsure("top my chili with cheese at topping bar", doubted: ["cheese"])
        #expect(await h.say("yes") == ["Topped with cheese."])
        // A doubt on the command's own words asks the whole of it.
        #expect(await h.sayUnsure("top my chili with cheese at topping bar", doubted: ["chili"])
            == ["Did you say: top my chili with cheese at topping bar?"])
    }

    @Test func doubtedWordsBelongToOneSlotOrToNone() {
        let values = ["size": "large", "coffeeDrink": "flat white", "roast": "dark roast"]
        #expect(ConversationEngine.doubtedSlot(values, doubted: ["large"]) == "size")
        #expect(ConversationEngine.doubtedSlot(values, doubted: ["flat", "white"]) == "coffeeDrink")
        #expect(ConversationEngine.doubtedSlot(values, doubted: ["Dark"]) == "roast")
        #expect(ConversationEngine.doubtedSlot(values, doubted: ["large", "white"]) == nil)
        #expect(ConversationEngine.doubtedSlot(values, doubted: ["me"]) == nil)
        #expect(ConversationEngine.doubtedSlot(values, doubted: []) == nil)
    }
}

import Foundation
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing
import Yams

/// The coffee maker's domain must be exactly the benchmark's grammar.yaml (Tests/Fixtures/coffee-maker).
@Suite struct CoffeeGrammarTests {
    struct Grammar {
        var templates: [String]
        var slots: [String: [String]]
    }

    func loadGrammar() throws -> Grammar {
        let text = try String(contentsOf: Fixtures.require(Fixtures.coffeeGrammar), encoding: .utf8)
        let root = try #require(try Yams.load(yaml: text) as? [String: Any], "grammar.yaml: expected a mapping at the top")
        let context = try #require(root["context"] as? [String: Any], "grammar.yaml: expected 'context'")
        let expressions = try #require(context["expressions"] as? [String: Any], "grammar.yaml: expected 'context.expressions'")
        #expect(Array(expressions.keys) == ["orderDrink"])
        let templates = try #require(expressions["orderDrink"] as? [String], "grammar.yaml: expected a list at 'context.expressions.orderDrink'")
        let slots = try #require(context["slots"] as? [String: [String]], "grammar.yaml: expected lists of strings at 'context.slots'")
        return Grammar(templates: templates, slots: slots)
    }

    @Test func theTemplatesAreExactlyThoseOfGrammarYaml() throws {
        let grammar = try loadGrammar()
        #expect(grammar.templates.count == CoffeeGrammar.templates.count)
        #expect(CoffeeGrammar.templates == grammar.templates)
        let appTemplates = CoffeeMakerApp().templates.map(\.pattern)
        #expect(appTemplates == grammar.templates)
        #expect(CoffeeMakerApp().templates.allSatisfy { $0.intent.identifier == "orderDrink" })
    }

    @Test func theSlotListsAreExactlyThoseOfGrammarYaml() throws {
        let grammar = try loadGrammar()
        #expect(Set(grammar.slots.keys) == Set(CoffeeGrammar.slots.map(\.name)))
        for (name, values) in CoffeeGrammar.slots {
            #expect(values == grammar.slots[name], "slot list \(name)")
        }
        // The intent's parameters report the same canonical values.
        let descriptor = IntentDescriptor(OrderDrink.self)
        #expect(descriptor.parameters.map(\.name).sorted() == grammar.slots.keys.sorted())
        for parameter in descriptor.parameters {
            #expect(parameter.staticOptions?.map(\.id) == grammar.slots[parameter.name], "parameter \(parameter.name)")
        }
    }

    /// Every labelled order of the development recordings, said as the
    /// grammar allows, resolves to exactly its labels.
    @Test func everyLabelledOrderResolvesToItsLabels() throws {
        let data = try Data(contentsOf: Fixtures.require(Fixtures.coffeeLabels))
        let labels = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        let resolver = Resolver(model: PhraseCompiler.compile(try AppRegistry(apps: BundledApps.all, primaryApp: "CoffeeMaker")))
        #expect(labels.count > 100)
        for (file, label) in labels.sorted(by: { $0.key < $1.key }) {
            let raw = try #require(label["slots"] as? [String: String], "\(file): slots")
            let slots = raw.mapValues { $0.trimmingCharacters(in: .whitespaces) }
            var words = ["can i get a"]
            for name in ["size", "roast", "numberOfShots", "coffeeDrink"] { if let value = slots[name] { words.append(value) } }
            let additions = ["milkAmount", "sugarAmount"].compactMap { slots[$0] }
            if !additions.isEmpty { words.append("with " + additions.joined(separator: " and ")) }
            let sentence = words.joined(separator: " ")
            let resolution = resolver.resolve(sentence)
            #expect(resolution?.intent == label["intent"] as? String, "\(file): \(sentence)")
            #expect(resolution?.values == slots, "\(file): \(sentence)")
        }
    }
}

@Suite struct BundledAppTests {
    func context() -> IntentContext {
        return IntentContext(app: "Test", now: Date(timeIntervalSince1970: 0), appData: InMemoryAppDataStore(), services: NoServices())
    }

    struct NoServices: IntentServices {
        func donate(app: String, _ request: DonationRequest) async throws {}
        func schedule(app: String, id: String, at date: Date, announcement: String) async {}
        func cancelScheduled(app: String, id: String) async {}
        func scheduledDate(app: String, id: String) async -> Date? { nil }
        func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String] { [] }
    }

    func assign(_ intent: any AppIntent, _ values: [String: String]) async throws {
        for (name, parameter) in IntentReflection.parameters(of: intent) {
            #expect(try await parameter.assign(canonical: values[name], context: context()), "\(name)")
        }
    }

    @Test func theBundledAppsRegisterAndFitTheLimits() throws {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        #expect(registry.primaryApp == "CoffeeMaker")
        for app in BundledApps.all { #expect(app.shortcuts.count <= 10) }
        #expect(throws: RegistrationError.self) { try AppRegistry(apps: BundledApps.all, primaryApp: "Toaster") }
    }

    @Test func coffeeOrdersStateThePriceAndReadyTime() async throws {
        let order = OrderDrink()
        try await assign(order, ["coffeeDrink": "latte", "size": "large", "roast": "light roast", "milkAmount": "a bit of soy milk"])
        #expect(try await order.confirmationDialog(context: context()) == "A large light roast latte with a bit of soy milk from the corner café, four dollars fifty.")
        let result = try await order.perform(context: context())
        #expect(result.dialog == "Ordered.")
        #expect(result.detail == "It will be ready in eleven minutes. Your large light roast latte with a bit of soy milk, four dollars fifty.")
        #expect(result.output["total"] == .number(4.5))
        #expect(result.output["readyTime"] == .date(Date(timeIntervalSince1970: 660)))
        let espresso = OrderDrink()
        try await assign(espresso, ["coffeeDrink": "espresso", "size": "eight ounce"])
        #expect(try await espresso.confirmationDialog(context: context()) == "An eight ounce espresso from the corner café, two dollars.")
    }

    @Test func soupOrdersReportTotalAndReadyTimeAsOutputs() async throws {
        let order = OrderSoup()
        try await assign(order, ["soup": "clamChowder", "quantity": "2", "orderType": "pickup", "store": "lewis"])
        let result = try await order.perform(context: context())
        #expect(result.spoken == "Ordered. Your two clam chowders will be ready at Lewis Avenue in twelve minutes, total seven dollars fifty.")
        #expect(result.output["total"] == .number(7.5))
        #expect(result.output["readyTime"] == .date(Date(timeIntervalSince1970: 720)))
        #expect(result.donationGroup == "soup-orders")
        let definitions = IntentDescriptor(OrderSoup.self).parameters
        // `portion` ("two tomato soups") comes first so soup and quantity can be read from it.
        #expect(definitions.map(\.name) == ["portion", "soup", "quantity", "orderType", "store", "deliveryAddress"])
        #expect(definitions[4].parent == ParentCondition("orderType", in: ["pickup"]))
        #expect(definitions[5].parent == ParentCondition("orderType", in: ["delivery"]))
        #expect(definitions[2].bounds?.violation(11) == "Only ten soups can be ordered at once.")
        #expect(definitions[2].defaultValue == nil)  // asked when not said
        #expect(SoupPortion(rawValue: "2-tomato")?.quantity == 2)
        #expect(SoupPortion.staticOptions?.first { $0.id == "2-tomato" }?.allForms == ["two tomato soups", "two tomato"])
        #expect(SoupPortion.staticOptions?.first { $0.id == "1-clamChowder" }?.allForms == ["one clam chowder", "one clam chowder", "a clam chowder"])
        #expect(Soup.staticOptions?.first?.synonyms.contains("chowder") == true)
        #expect(SoupOrderType.staticOptions?.first?.spokenForm == "pick up")
    }
}

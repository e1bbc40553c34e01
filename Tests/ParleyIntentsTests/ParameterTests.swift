import Foundation
import ParleyIntents
import ParleyTestKit
import Testing

struct Services: IntentServices {
    func donate(app: String, _ request: DonationRequest) async throws {}
    func schedule(app: String, id: String, at date: Date, announcement: String) async {}
    func cancelScheduled(app: String, id: String) async {}
    func scheduledDate(app: String, id: String) async -> Date? { nil }
    func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String] { [] }
}

let testContext = IntentContext(app: "Test", now: Date(timeIntervalSince1970: 0), appData: InMemoryAppDataStore(), services: Services())

struct Delivery: AppIntent {
    static let title = "Deliver"
    static let category = IntentCategory.order
    @Parameter(title: "Kind", prompt: "Pickup or delivery?", default: .vanilla) var kind: Flavour
    @Parameter(title: "Quantity", prompt: "How many?",
               bounds: ParameterBounds(minimum: 1, maximum: 10, belowMinimum: "Too few.", aboveMaximum: "Only ten at once."))
    var quantity: Int
    @Parameter(title: "Address", parent: ParentCondition("kind", in: ["chocolate"])) var address: String?
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { IntentResult(dialog: "Done \(quantity).") }
}

@Suite struct ParameterTests {
    @Test func parametersAreDiscoveredInDeclarationOrderByReflection() {
        let definitions = IntentReflection.definitions(of: Delivery.self)
        #expect(definitions.map(\.name) == ["kind", "quantity", "address"])
        #expect(definitions[0].prompt == "Pickup or delivery?")
        #expect(definitions[0].defaultValue == "vanilla")
        #expect(definitions[0].kind == .enumeration)
        #expect(definitions[0].staticOptions?.map(\.id) == ["vanilla", "chocolate"])
        #expect(definitions[1].kind == .integer)
        #expect(definitions[1].isOptional == false)
        #expect(definitions[1].bounds?.violation(11) == "Only ten at once.")
        #expect(definitions[1].bounds?.violation(0) == "Too few.")
        #expect(definitions[1].bounds?.violation(5) == nil)
        #expect(definitions[2].isOptional)
        #expect(definitions[2].parent == ParentCondition("kind", in: ["chocolate"]))
        #expect(definitions[2].prompt == "Which address?")
    }

    @Test func valuesAssignedThroughReflectionReachTheIntent() async throws {
        let intent = Delivery()
        for (name, parameter) in IntentReflection.parameters(of: intent) {
            let value: String? = ["kind": "chocolate", "quantity": "3"][name]
            #expect(try await parameter.assign(canonical: value, context: testContext))
        }
        #expect(intent.kind == .chocolate)
        #expect(intent.quantity == 3)
        #expect(intent.address == nil)
        let result = try await intent.perform(context: testContext)
        #expect(result.dialog == "Done 3.")
        let quantity = try #require(IntentReflection.parameters(of: intent).first { $0.name == "quantity" })
        #expect(try await quantity.parameter.assign(canonical: "many", context: testContext) == false)
    }

    @Test func enumOptionsCarrySynonymsAndSpokenForms() {
        let options = Flavour.staticOptions ?? []
        #expect(options[1] == ParameterOption(id: "chocolate", title: "chocolate", synonyms: ["choc"]))
        let option = ParameterOption(id: "philz", title: "Philz", spokenForm: "fills")
        #expect(option.spoken == "fills")
        #expect(option.allForms == ["Philz", "fills"])
    }

    @Test func numbersAreSpokenAndParsed() {
        #expect(SpokenNumber.words(0) == "zero")
        #expect(SpokenNumber.words(25) == "twenty five")
        #expect(SpokenNumber.words(105) == "one hundred five")
        #expect(SpokenNumber.words(2000) == "two thousand")
        #expect(SpokenNumber.parse("twenty five") == 25)
        #expect(SpokenNumber.parse("a hundred and five") == 105)
        #expect(SpokenNumber.parse("12") == 12)
        #expect(SpokenNumber.parse("twelve ounce") == nil)
        #expect(SpokenNumber.money(cents: 450) == "four dollars fifty")
        #expect(SpokenNumber.money(cents: 100) == "one dollar")
        #expect(SpokenNumber.minutes(1) == "one minute")
    }

    @Test func durationsAreAFiniteSpokenList() {
        #expect(SpokenDuration.parse(spoken: "ten minutes")?.seconds == 600)
        #expect(SpokenDuration.parse(spoken: "ten minute")?.seconds == 600)
        #expect(SpokenDuration.parse(spoken: "an hour and a half")?.seconds == 5400)
        #expect(SpokenDuration.parse(spoken: "half an hour")?.seconds == 1800)
        #expect(SpokenDuration.parse(spoken: "a minute and a half")?.seconds == 90)
        #expect(SpokenDuration.parse(spoken: "forever") == nil)
        #expect(SpokenDuration.parse(spoken: "ninety seconds")?.seconds == 90)
        #expect(SpokenDuration.parse(spoken: "one minute and thirty seconds")?.seconds == 90)
        #expect(SpokenDuration.parse(spoken: "one hour thirty minutes")?.seconds == 5400)  // the parts without "and"
        #expect(SpokenDuration.describe(5400) == "one hour and thirty minutes")
        #expect(SpokenDuration.describe(3599) == "fifty nine minutes and fifty nine seconds")
        #expect(SpokenDuration.describe(3661) == "one hour one minute and one second")
        #expect(SpokenDuration.adjective(600) == "ten minute")
        let ids = SpokenDuration.allOptions.map(\.id)
        #expect(Set(ids).count == ids.count)
    }

    @Test func textIsNormalisedForMatching() {
        #expect(PhraseText.normalise("Hey, can I get a 12 oz LATTE?") == ["hey", "can", "i", "get", "a", "twelve", "oz", "latte"])
        #expect(PhraseText.normalise("I'd like the 2nd one — café") == ["i'd", "like", "the", "second", "one", "cafe"])
        #expect(PhraseText.normalise("salt & pepper") == ["salt", "and", "pepper"])
        #expect(PhraseToken.tokens(of: "Order {soup} with {app}!") == [.word("order"), .parameter("soup"), .word("with"), .appName])
    }

    @Test func categoriesDecideConfirmationAndTheVerb() {
        #expect(IntentCategory.order.requiresConfirmation)
        #expect(IntentCategory.delete.requiresConfirmation)
        #expect(!IntentCategory.create.requiresConfirmation)
        #expect(IntentCategory.order.confirmationVerb == "order")
        #expect(Delivery.requiresConfirmation)
        #expect(Delivery.identifier == "Delivery")
    }
}

struct Shop: AppEntity {
    let id: String
    let displayName: String
    var synonyms: [String] = []
    static let typeDisplayName = "Shop"
    static let defaultQuery = ShopQuery()
}

struct ShopQuery: EntityQuery {
    static let shops = [Shop(id: "main", displayName: "Main Street", synonyms: ["the big one"]), Shop(id: "harbor", displayName: "Harbor Road")]
    func entities(for identifiers: [String], context: IntentContext) async throws -> [Shop] { Self.shops.filter { identifiers.contains($0.id) } }
    func suggestedEntities(context: IntentContext) async throws -> [Shop] { Self.shops }
    func defaultResult(context: IntentContext) async throws -> Shop? { Self.shops[1] }
}

@Suite struct EntityTests {
    @Test func entitiesAreListedLookedUpAndDefaulted() async throws {
        #expect(try await Shop.options(context: testContext)?.map(\.id) == ["main", "harbor"])
        #expect(try await Shop.lookup("harbor", context: testContext).map(\.id) == ["harbor"])
        #expect(try await Shop.lookup("big one", context: testContext).map(\.id) == ["main"])
        #expect(try await Shop.lookup("airport", context: testContext).isEmpty)
        #expect(try await Shop.defaultOption(context: testContext)?.id == "harbor")
        #expect(try await Shop.value(canonical: "main", context: testContext)?.displayName == "Main Street")
        #expect(Shop.parameterKind == .entity)
        #expect(Shop.parameterKind.isOpen == false)
    }
}

import ParleyIntents
import Testing

// Small apps, each broken in one way, to check every registration error.

enum Flavour: String, AppEnum {
    case vanilla, chocolate
    static let typeDisplayName = "Flavour"
    static let caseDisplays: [Flavour: CaseDisplay] = [.vanilla: CaseDisplay("vanilla"), .chocolate: CaseDisplay("chocolate", synonyms: ["choc"])]
}

struct OrderIceCream: AppIntent {
    static let title = "Order ice cream"
    static let category = IntentCategory.order
    @Parameter(title: "Flavour", prompt: "Which flavour?") var flavour: Flavour
    @Parameter(title: "Scoops", prompt: "How many scoops?", default: 1) var scoops: Int
    @Parameter(title: "Note") var note: String?
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { IntentResult(dialog: "Ordered.") }
}

/// A date as an app declares one: ParleyIntents has no built-in date type,
/// so an app's own value type reports the `.date` kind.
struct PickupDay: IntentParameterValue {
    var isoDate: String
    static var parameterKind: ParameterKind { .date }
    var canonicalValue: String { isoDate }
    static func value(canonical: String, context: IntentContext) async throws -> PickupDay? { PickupDay(isoDate: canonical) }
}

/// The same with a few suggested days to read aloud; still a date, so still open.
struct SuggestedPickupDay: IntentParameterValue {
    var isoDate: String
    static var parameterKind: ParameterKind { .date }
    var canonicalValue: String { isoDate }
    static var staticOptions: [ParameterOption]? { [ParameterOption(id: "today", title: "today"), ParameterOption(id: "tomorrow", title: "tomorrow")] }
    static func value(canonical: String, context: IntentContext) async throws -> SuggestedPickupDay? { SuggestedPickupDay(isoDate: canonical) }
}

struct PreOrderIceCream: AppIntent {
    static let title = "Pre-order ice cream"
    static let category = IntentCategory.order
    @Parameter(title: "Day", prompt: "For which day?") var day: PickupDay
    @Parameter(title: "Suggested day", prompt: "For which day?") var suggestedDay: SuggestedPickupDay
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { IntentResult(dialog: "Pre-ordered.") }
}

struct BrokenChild: AppIntent {
    static let title = "Broken child"
    static let category = IntentCategory.generic
    @Parameter(title: "Address", parent: ParentCondition("deliveryKind", in: ["home"])) var address: String?
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { IntentResult(dialog: "Done.") }
}

struct TestApp: ParleyApp {
    var identifier = "IceCream"
    var name = "Ice Cream Shop"
    var synonyms = ["Scoops"]
    var intents: [any AppIntent.Type] = [OrderIceCream.self]
    var phrases = ["order {flavour} with {app}"]
    var shortcutCount = 1
    var extraShortcuts: [AppShortcut] = []
    var shortcuts: [AppShortcut] {
        (0..<shortcutCount).map { _ in AppShortcut(intent: OrderIceCream.self, phrases: phrases, shortTitle: "Order ice cream") } + extraShortcuts
    }
}

@Suite struct RegistrationTests {
    func problems(_ apps: [any ParleyApp], primary: String? = nil) -> [RegistrationProblem] {
        do {
            try RegistrationValidator.validate(apps, primaryApp: primary)
            return []
        } catch let error as RegistrationError {
            return error.problems
        } catch {
            Issue.record("unexpected error \(error)")
            return []
        }
    }

    @Test func aWellFormedAppRegisters() {
        #expect(problems([TestApp()]).isEmpty)
    }

    @Test func aPhraseWithoutTheAppNameIsRefused() throws {
        let found = problems([TestApp(phrases: ["order {flavour} please"])])
        let problem = try #require(found.first)
        #expect(found.count == 1)
        #expect(problem.kind == .phraseWithoutAppName)
        #expect(problem.description == "app 'Ice Cream Shop', intent 'OrderIceCream', phrase 'order {flavour} please': does not contain the app's name or a synonym (Ice Cream Shop, Scoops); write {app} or the name")
    }

    @Test func aPhraseNamingTheAppBySynonymInWordsIsAccepted() {
        #expect(problems([TestApp(phrases: ["order {flavour} from scoops"])]).isEmpty)
    }

    @Test func thePrimaryAppNeedNotBeNamed() {
        #expect(problems([TestApp(phrases: ["order {flavour} please"])], primary: "IceCream").isEmpty)
    }

    @Test func twoParametersInOnePhraseAreRefused() throws {
        let problem = try #require(problems([TestApp(phrases: ["order {flavour} {scoops} with {app}"])]).first { $0.kind == .twoParametersInPhrase })
        #expect(problem.app == "Ice Cream Shop")
        #expect(problem.intent == "OrderIceCream")
        #expect(problem.phrase == "order {flavour} {scoops} with {app}")
        #expect(problem.message.contains("{flavour}, {scoops}"))
    }

    @Test func anOpenTypedParameterInAPhraseIsRefused() throws {
        let integer = try #require(problems([TestApp(phrases: ["order {scoops} scoops with {app}"])]).first)
        #expect(integer.kind == .openParameterInPhrase)
        #expect(integer.message.contains("'scoops' is of the open type integer"))
        let text = try #require(problems([TestApp(phrases: ["note {note} with {app}"])]).first)
        #expect(text.kind == .openParameterInPhrase)
        #expect(text.phrase == "note {note} with {app}")
    }

    @Test func aDateParameterInAPhraseIsRefusedEvenWithSuggestedDays() throws {
        func preOrder(_ phrase: String) -> TestApp {
            var app = TestApp(intents: [OrderIceCream.self, PreOrderIceCream.self])
            app.extraShortcuts = [AppShortcut(intent: PreOrderIceCream.self, phrases: [phrase], shortTitle: "Pre-order")]
            return app
        }
        let date = try #require(problems([preOrder("pre-order for {day} with {app}")]).first)
        #expect(date.kind == .openParameterInPhrase)
        #expect(date.intent == "PreOrderIceCream")
        #expect(date.phrase == "pre-order for {day} with {app}")
        #expect(date.message.contains("'day' is of the open type date"))
        // A few suggestions to read aloud do not make a date a finite list.
        let suggested = try #require(problems([preOrder("pre-order for {suggestedDay} with {app}")]).first)
        #expect(suggested.kind == .openParameterInPhrase)
        #expect(suggested.message.contains("'suggestedDay' is of the open type date"))
        #expect(problems([preOrder("pre-order with {app}")]).isEmpty)
    }

    @Test func moreThanTenShortcutsAreRefused() throws {
        #expect(problems([TestApp(shortcutCount: 10)]).isEmpty)
        let problem = try #require(problems([TestApp(shortcutCount: 11)]).first)
        #expect(problem.kind == .tooManyShortcuts)
        #expect(problem.description == "app 'Ice Cream Shop': declares 11 App Shortcuts; at most 10 are allowed")
    }

    @Test func duplicatePhrasesAcrossAppsAreRefused() throws {
        let first = TestApp(phrases: ["order {flavour} from scoops"])
        var second = TestApp(identifier: "Other", name: "Gelato", synonyms: ["scoops"])
        second.phrases = ["order {flavour} from {app}"]
        let problem = try #require(problems([first, second]).first)
        #expect(problem.kind == .duplicatePhrase)
        #expect(problem.app == "Gelato")
        #expect(problem.phrase == "order {flavour} from {app}")
        #expect(problem.message == "is the same as the phrase 'order {flavour} from scoops' of app 'Ice Cream Shop'")
    }

    @Test func aChildParameterWithAnUnknownParentIsRefused() throws {
        let app = TestApp(intents: [OrderIceCream.self, BrokenChild.self])
        let problem = try #require(problems([app]).first)
        #expect(problem.kind == .unknownParent)
        #expect(problem.description == "app 'Ice Cream Shop', intent 'BrokenChild': parameter 'address' depends on 'deliveryKind', which is not a parameter of this intent")
    }

    @Test func aPhraseWithAnUnknownParameterIsRefused() throws {
        let problem = try #require(problems([TestApp(phrases: ["order {topping} with {app}"])]).first)
        #expect(problem.kind == .unknownParameterInPhrase)
    }

    @Test func everyProblemIsReportedTogether() {
        let found = problems([TestApp(phrases: ["order {flavour} {scoops}"], shortcutCount: 11)])
        let kinds = Set(found.map(\.kind))
        #expect(kinds == [.tooManyShortcuts, .twoParametersInPhrase, .openParameterInPhrase, .phraseWithoutAppName])
    }
}

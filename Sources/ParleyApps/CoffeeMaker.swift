import Foundation
import ParleyIntents

/// A list of spoken values from Tests/Fixtures/coffee-maker/grammar.yaml (the benchmark's domain).
/// The canonical value of each is the phrase itself, as the grammar spells it.
public protocol CoffeeSlotKind: Sendable {
    /// The list's name in grammar.yaml (also the intent parameter's name).
    static var listName: String { get }
    static var phrases: [String] { get }
    /// The values read aloud when asking (all by default).
    static var suggested: [String] { get }
}

extension CoffeeSlotKind {
    public static var suggested: [String] { phrases }
}

/// A value of one coffee-maker slot list.
public struct CoffeeSlot<Kind: CoffeeSlotKind>: IntentParameterValue, Hashable {
    public let phrase: String
    public init?(_ phrase: String) {
        guard Kind.phrases.contains(phrase) else { return nil }
        self.phrase = phrase
    }
    public static var parameterKind: ParameterKind { .enumeration }
    public var canonicalValue: String { phrase }
    public var spokenValue: String { phrase }
    public static var staticOptions: [ParameterOption]? { Kind.phrases.map { ParameterOption(id: $0, title: $0) } }
    public static var suggestedOptions: [ParameterOption]? { Kind.suggested.map { ParameterOption(id: $0, title: $0) } }
    public static func value(canonical: String, context: IntentContext) async throws -> Self? { Self(canonical) }
}

/// The six slot lists of grammar.yaml, generated from their patterns.
public enum CoffeeGrammar {
    public enum Size: CoffeeSlotKind {
        public static let listName = "size"
        public static let phrases = ["small", "medium", "large"] + ["eight", "twelve", "sixteen", "twenty"].map { "\($0) ounce" }
        public static let suggested = ["small", "medium", "large"]
    }
    public enum Roast: CoffeeSlotKind {
        public static let listName = "roast"
        public static let phrases = ["light", "medium", "dark"].map { "\($0) roast" }
    }
    public enum Shots: CoffeeSlotKind {
        public static let listName = "numberOfShots"
        public static let phrases = ["single", "double", "triple"].map { "\($0) shot" }
    }
    public enum Drink: CoffeeSlotKind {
        public static let listName = "coffeeDrink"
        public static let phrases = ["americano", "cappuccino", "espresso", "iced mocha", "latte", "mocha",
                                     "coffee", "drip coffee", "house coffee", "iced coffee"]
        public static let suggested = ["latte", "cappuccino", "americano", "espresso", "mocha"]
    }
    static let amounts = ["a little bit of", "a bit of", "some", "a lot of", "lots of"]
    static func withAmounts(_ kinds: [String]) -> [String] {
        kinds.flatMap { kind in [kind] + amounts.map { "\($0) \(kind)" } }
    }
    public enum Milk: CoffeeSlotKind {
        public static let listName = "milkAmount"
        public static let phrases = withAmounts(["milk", "skim milk", "whole milk", "soy milk", "almond milk", "cream"])
    }
    public enum Sugar: CoffeeSlotKind {
        public static let listName = "sugarAmount"
        public static let phrases = withAmounts(["sugar", "brown sugar", "sweetener"])
    }

    /// The slot lists in grammar.yaml's order.
    public static let slots: [(name: String, values: [String])] = [
        (Size.listName, Size.phrases), (Roast.listName, Roast.phrases), (Shots.listName, Shots.phrases),
        (Drink.listName, Drink.phrases), (Milk.listName, Milk.phrases), (Sugar.listName, Sugar.phrases),
    ]

    /// Every sentence template of grammar.yaml, in its order: for each subset
    /// of the modifiers (size, roast, shots; included before excluded), each
    /// ordering of it, with the additions "milk and sugar" in both orders,
    /// then milk alone, sugar alone, and none.
    public static let templates: [String] = {
        let prefix = "[brew, can I get, can I have, I want, get me, give me, I'd like, make me, may I have] [a, an]"
        let modifiers = [Size.listName, Roast.listName, Shots.listName]
        func slot(_ name: String) -> String { "$\(name):\(name)" }
        func subsets(_ items: ArraySlice<String>) -> [[String]] {
            guard let first = items.first else { return [[]] }
            let rest = subsets(items.dropFirst())
            return rest.map { [first] + $0 } + rest
        }
        func permutations(_ items: [String]) -> [[String]] {
            guard items.count > 1 else { return [items] }
            return items.indices.flatMap { i in
                permutations(Array(items[..<i] + items[(i + 1)...])).map { [items[i]] + $0 }
            }
        }
        let milk = Milk.listName, sugar = Sugar.listName
        var result: [String] = []
        for subset in subsets(modifiers[...]) {
            let orders = permutations(subset)
            func add(_ order: [String], _ additions: [String]) {
                var text = ([prefix] + order.map(slot) + [slot(Drink.listName)]).joined(separator: " ")
                if !additions.isEmpty { text += " with " + additions.map(slot).joined(separator: " and ") }
                result.append(text)
            }
            for order in orders { add(order, [milk, sugar]); add(order, [sugar, milk]) }
            for additions in [[milk], [sugar], []] { for order in orders { add(order, additions) } }
        }
        return result
    }()
}

/// Orders a drink from the coffee maker (intent `orderDrink` of grammar.yaml).
public struct OrderDrink: AppIntent {
    public static let identifier = "orderDrink"
    public static let title = "Order a drink"
    public static let description = "Orders a coffee drink from the corner café."
    public static let category = IntentCategory.order
    public static let parameterSummary = "Order a {size} {coffeeDrink}"
    public static let outputProperties: [String]? = ["total", "readyTime", "drink"]

    @Parameter(title: "Drink", prompt: "Which drink?") public var coffeeDrink: CoffeeSlot<CoffeeGrammar.Drink>
    @Parameter(title: "Size", prompt: "Which size?") public var size: CoffeeSlot<CoffeeGrammar.Size>
    @Parameter(title: "Roast") public var roast: CoffeeSlot<CoffeeGrammar.Roast>?
    @Parameter(title: "Shots") public var numberOfShots: CoffeeSlot<CoffeeGrammar.Shots>?
    @Parameter(title: "Milk") public var milkAmount: CoffeeSlot<CoffeeGrammar.Milk>?
    @Parameter(title: "Sugar") public var sugarAmount: CoffeeSlot<CoffeeGrammar.Sugar>?

    public init() {}

    static let cafe = "the corner café"

    /// "large light roast latte with a bit of soy milk"
    var drinkDescription: String {
        var words = [size.phrase, roast?.phrase, numberOfShots?.phrase, coffeeDrink.phrase].compactMap { $0 }.joined(separator: " ")
        let additions = [milkAmount?.phrase, sugarAmount?.phrase].compactMap { $0 }
        if !additions.isEmpty { words += " with " + additions.joined(separator: " and ") }
        return words
    }

    /// Price in cents: drink base, size, extra shots, milk.
    var priceCents: Int {
        let base = ["espresso": 250, "americano": 300, "coffee": 250, "drip coffee": 250, "house coffee": 275,
                    "iced coffee": 325, "cappuccino": 375, "latte": 375, "mocha": 400, "iced mocha": 425][coffeeDrink.phrase] ?? 350
        let sizeExtra = ["small": -50, "medium": 0, "large": 50, "eight ounce": -50, "twelve ounce": 0,
                         "sixteen ounce": 50, "twenty ounce": 100][size.phrase] ?? 0
        let shotExtra = ["single shot": 0, "double shot": 75, "triple shot": 150][numberOfShots?.phrase ?? ""] ?? 0
        let milkExtra = (milkAmount?.phrase).map { milk in ["soy", "almond", "cream"].contains { milk.contains($0) } ? 25 : 0 } ?? 0
        return base + sizeExtra + shotExtra + milkExtra
    }

    /// Minutes until ready.
    var readyMinutes: Int {
        let base = ["espresso": 4, "americano": 5, "coffee": 3, "drip coffee": 3, "house coffee": 3, "iced coffee": 4,
                    "cappuccino": 8, "latte": 9, "mocha": 9, "iced mocha": 10][coffeeDrink.phrase] ?? 6
        return base + (["large", "sixteen ounce", "twenty ounce"].contains(size.phrase) ? 2 : 0) + (numberOfShots == nil ? 0 : 1)
    }

    public func confirmationDialog(context: IntentContext) async throws -> String? {
        "\(capitalisedFirst(Article.indefinite(drinkDescription))) from \(Self.cafe), \(SpokenNumber.money(cents: priceCents))."
    }

    public func perform(context: IntentContext) async throws -> IntentResult {
        let minutes = readyMinutes
        return IntentResult(
            dialog: "Ordered.",
            detail: "It will be ready in \(SpokenNumber.minutes(minutes)). Your \(drinkDescription), \(SpokenNumber.money(cents: priceCents)).",
            output: ["total": .number(Double(priceCents) / 100), "readyTime": .date(context.now + Double(minutes * 60)),
                     "drink": .text(drinkDescription)])
    }
}

/// "a latte", "an americano", "an eight ounce latte".
enum Article {
    static func indefinite(_ phrase: String) -> String {
        let vowelSound = phrase.first.map { "aeio".contains($0) } ?? false
        return (vowelSound ? "an " : "a ") + phrase
    }
}

/// The coffee maker's own app; as the device's primary app its phrases need
/// not name it and its grammar.yaml templates fill a whole order at once.
public struct CoffeeMakerApp: ParleyApp {
    public init() {}
    public let identifier = "CoffeeMaker"
    public let name = "Coffee Maker"
    public let synonyms = ["Barista", "the coffee maker"]
    public var intents: [any AppIntent.Type] { [OrderDrink.self] }
    public var shortcuts: [AppShortcut] {
        [AppShortcut(intent: OrderDrink.self, phrases: [
            "order a {coffeeDrink} with {app}", "order an {coffeeDrink} with {app}", "order {coffeeDrink} with {app}",
            "order a {coffeeDrink} from {app}", "order a drink with {app}", "order coffee from {app}",
        ], shortTitle: "Order a drink")]
    }
    public var templates: [CommandTemplate] {
        CoffeeGrammar.templates.map { CommandTemplate(intent: OrderDrink.self, pattern: $0) }
    }
}

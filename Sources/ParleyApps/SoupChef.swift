import Foundation
import ParleyIntents

public enum Soup: String, AppEnum {
    case clamChowder, tomato, chickenNoodle
    public static let typeDisplayName = "Soup"
    public static let caseDisplays: [Soup: CaseDisplay] = [
        .clamChowder: CaseDisplay("clam chowder", synonyms: ["chowder", "clam soup", "new england clam chowder"]),
        .tomato: CaseDisplay("tomato", synonyms: ["tomato soup", "tomatoes"]),
        .chickenNoodle: CaseDisplay("chicken noodle", synonyms: ["chicken soup", "chicken noodle soup", "noodle soup"]),
    ]
    var priceCents: Int { [.clamChowder: 375, .tomato: 325, .chickenNoodle: 350][self]! }

    /// The dish as said in a sentence: "one tomato soup", "two clam chowders".
    func dish(_ quantity: Int) -> String {
        let singular = [.clamChowder: "clam chowder", .tomato: "tomato soup", .chickenNoodle: "chicken noodle soup"][self]!
        return quantity == 1 ? singular : singular + "s"
    }
}

public enum SoupOrderType: String, AppEnum {
    case pickup, delivery
    public static let typeDisplayName = "Order type"
    public static let caseDisplays: [SoupOrderType: CaseDisplay] = [
        .pickup: CaseDisplay("pickup", synonyms: ["collection", "to go", "take away"], spokenForm: "pick up"),
        .delivery: CaseDisplay("delivery", synonyms: ["deliver it", "delivered"]),
    ]
}

/// "two tomato soups": a number of one soup, as one finite list so an App
/// Shortcut phrase can carry it ("order {portion} with {app}"). A phrase may
/// hold one parameter from a finite list (docs/spec.md §4); a quantity is an open
/// number and "two tomato soups" names two values, so the pair is one value
/// here. Counts go to twenty: above ten the app's own reason is said and the
/// quantity asked again, as when "twelve" answers the quantity question.
public struct SoupPortion: AppEnum {
    public let soup: Soup
    public let quantity: Int

    public init?(rawValue: String) {
        let parts = rawValue.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, let quantity = Int(parts[0]), Self.counts.contains(quantity),
              let soup = Soup(rawValue: String(parts[1])) else { return nil }
        self.soup = soup
        self.quantity = quantity
    }

    init(_ quantity: Int, _ soup: Soup) {
        self.soup = soup
        self.quantity = quantity
    }

    /// "2-tomato".
    public var rawValue: String { "\(quantity)-\(soup.rawValue)" }
    static let counts = 1...20
    public static let allCases: [SoupPortion] = counts.flatMap { quantity in Soup.allCases.map { SoupPortion(quantity, $0) } }
    public static let typeDisplayName = "Soup order"

    /// "two tomato soups", also "two tomato" and, for one, "a tomato soup".
    public static let caseDisplays: [SoupPortion: CaseDisplay] = Dictionary(uniqueKeysWithValues: allCases.map { portion in
        let count = SpokenNumber.words(portion.quantity)
        let title = portion.soup.display.title
        var synonyms = ["\(count) \(title)"]
        if portion.quantity == 1 { synonyms.append("a \(portion.soup.dish(1))") }
        return (portion, CaseDisplay("\(count) \(portion.soup.dish(portion.quantity))", synonyms: synonyms))
    })
}

/// A Soup Chef store, found by its query.
public struct SoupStore: AppEntity, Hashable {
    public let id: String
    public let displayName: String
    public let synonyms: [String]
    public static let typeDisplayName = "Store"
    public static let defaultQuery = SoupStoreQuery()

    public static let all = [
        SoupStore(id: "sheridan", displayName: "Sheridan Boulevard", synonyms: ["sheridan"]),
        SoupStore(id: "lewis", displayName: "Lewis Avenue", synonyms: ["lewis"]),
    ]
}

/// Stores near the device, most recently used first.
public struct SoupStoreQuery: EntityQuery {
    public init() {}
    public func entities(for identifiers: [String], context: IntentContext) async throws -> [SoupStore] {
        SoupStore.all.filter { identifiers.contains($0.id) }
    }
    public func suggestedEntities(context: IntentContext) async throws -> [SoupStore] {
        let recent = await context.services.recentValues(app: context.app, intent: OrderSoup.identifier, parameter: "store", limit: 5)
        let declared = SoupStore.all.map(\.id)
        func rank(_ store: SoupStore) -> (Int, Int) {
            (recent.firstIndex(of: store.id) ?? Int.max, declared.firstIndex(of: store.id) ?? Int.max)
        }
        return SoupStore.all.sorted { rank($0) < rank($1) }
    }
}

/// Orders soup for pickup or delivery.
public struct OrderSoup: AppIntent {
    public static let title = "Order soup"
    public static let description = "Orders soup from Soup Chef for pickup or delivery."
    public static let category = IntentCategory.order
    public static let parameterSummary = "Order {quantity} {soup} for {orderType}"
    public static let outputProperties: [String]? = ["total", "readyTime"]

    /// Said in "order two tomato soups with Soup Chef": gives soup and
    /// quantity; never asked.
    @Parameter(title: "Soup order", prompt: "Which soup, and how many?") public var portion: SoupPortion?
    @Parameter(title: "Soup", prompt: "Which soup?") public var soup: Soup
    /// Asked when not said, as in the seeds' Soup Chef.
    @Parameter(title: "Quantity", prompt: "How many soups do you want?",
               bounds: OrderSoup.quantityBounds)
    public var quantity: Int
    @Parameter(title: "Order type", prompt: "Pickup or delivery?", default: .pickup) public var orderType: SoupOrderType
    @Parameter(title: "Store", prompt: "Which store?", parent: ParentCondition("orderType", in: ["pickup"]))
    public var store: SoupStore?
    @Parameter(title: "Delivery address", prompt: "What is the delivery address?",
               parent: ParentCondition("orderType", in: ["delivery"]))
    public var deliveryAddress: String?

    public init() {}

    public func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? {
        switch parameter {
        case "portion":
            return proposed.map(ParameterResolution.success) ?? .notRequired
        case "soup":
            if proposed == nil, let portion { return .success(portion.soup.rawValue) }
            return nil
        case "quantity":
            guard proposed == nil, let portion else { return nil }
            if let reason = Self.quantityBounds.violation(Double(portion.quantity)) { return .unsupported(reason: reason) }
            return .success(String(portion.quantity))
        case "store":
            if let proposed { return .success(proposed) }
            let stores = try await SoupStoreQuery().suggestedEntities(context: context)
            if stores.count == 1 { return .confirmation(stores[0].option, prompt: "\(stores[0].displayName), right?") }
            let count = stores.count <= 10 ? SpokenNumber.words(stores.count) : String(stores.count)
            return .disambiguation(stores.map(\.option), prompt: "There are \(count) stores near you. Which one:")
        case "deliveryAddress":
            // Required once delivery is chosen, although the type is optional for pickup.
            if let proposed, !proposed.isEmpty { return .success(proposed) }
            return .needsValue(prompt: nil)
        default:
            return nil
        }
    }

    static let quantityBounds = ParameterBounds(minimum: 1, maximum: 10, belowMinimum: "At least one soup has to be ordered.",
                                                aboveMaximum: "Only ten soups can be ordered at once.")

    var totalCents: Int { soup.priceCents * quantity + (orderType == .delivery ? 200 : 0) }
    var readyMinutes: Int { 8 + 2 * quantity + (orderType == .delivery ? 20 : 0) }

    var orderDescription: String {
        let what = "\(SpokenNumber.words(quantity)) \(soup.dish(quantity))"
        switch orderType {
        case .pickup: return "\(what) for pickup from \(store?.displayName ?? "the nearest store")"
        case .delivery: return "\(what) for delivery to \(deliveryAddress ?? "your address")"
        }
    }

    public func confirmationDialog(context: IntentContext) async throws -> String? {
        "\(capitalisedFirst(orderDescription)), \(SpokenNumber.money(cents: totalCents))."
    }

    public func perform(context: IntentContext) async throws -> IntentResult {
        let minutes = readyMinutes
        let soupName = quantity == 1 ? soup.dish(1) : "\(SpokenNumber.words(quantity)) \(soup.dish(quantity))"
        let place = orderType == .pickup ? "ready at \(store?.displayName ?? "the store")" : "delivered"
        return IntentResult(
            dialog: "Ordered.",
            detail: "Your \(soupName) will be \(place) in \(SpokenNumber.minutes(minutes)), total \(SpokenNumber.money(cents: totalCents)).",
            output: ["total": .number(Double(totalCents) / 100), "readyTime": .date(context.now + Double(minutes * 60))],
            donationGroup: "soup-orders")
    }
}

public struct SoupChefApp: ParleyApp {
    public init() {}
    public let identifier = "SoupChef"
    public let name = "Soup Chef"
    public let synonyms = ["the soup chef", "soup shop"]
    public var intents: [any AppIntent.Type] { [OrderSoup.self] }
    public var shortcuts: [AppShortcut] {
        [AppShortcut(intent: OrderSoup.self, phrases: [
            "order soup with {app}", "order {soup} with {app}", "order {soup} soup with {app}",
            "order soup for {orderType} with {app}", "get soup from {app}", "order {portion} with {app}",
        ], shortTitle: "Order soup")]
    }
}

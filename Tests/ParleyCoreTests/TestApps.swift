import Foundation
import ParleyCore
import ParleyTestKit
import Synchronization

/// A pot of chili: an entity whose options differ by one word, for
/// disambiguation that names only what differs.
struct ChiliPot: AppEntity, Hashable {
    let id: String
    let displayName: String
    static let typeDisplayName = "Chili"
    static let defaultQuery = ChiliQuery()
    static let all = [ChiliPot(id: "beef", displayName: "beef chili"), ChiliPot(id: "veggie", displayName: "veggie chili")]
}

struct ChiliQuery: EntityQuery {
    func entities(for identifiers: [String], context: IntentContext) async throws -> [ChiliPot] {
        ChiliPot.all.filter { identifiers.contains($0.id) }
    }
    func suggestedEntities(context: IntentContext) async throws -> [ChiliPot] { ChiliPot.all }
}

struct ServeChili: AppIntent {
    static let title = "Serve chili"
    static let category = IntentCategory.generic
    @Parameter(title: "Chili", prompt: "Which chili?") var pot: ChiliPot
    init() {}
    func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? {
        guard parameter == "pot", proposed == nil else { return nil }
        return .disambiguation(try await ChiliQuery().suggestedEntities(context: context).map(\.option), prompt: nil)
    }
    func perform(context: IntentContext) async throws -> IntentResult {
        IntentResult(dialog: "Served.", detail: "One bowl of \(pot.displayName).")
    }
}

struct BurnChili: AppIntent {
    static let title = "Burn chili"
    static let category = IntentCategory.generic
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { throw IntentError("The stove is off.") }
}

struct CrashChili: AppIntent {
    struct Crash: Error {}
    static let title = "Crash chili"
    static let category = IntentCategory.generic
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { throw Crash() }
}

struct SlowChili: AppIntent {
    static let title = "Slow chili"
    static let category = IntentCategory.generic
    static let timeLimit: TimeInterval = 10
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        try await Task.sleep(for: .seconds(3600))
        return IntentResult(dialog: "Finally.")
    }
}

/// Donates explicitly, with an identifier and a group, besides the automatic donation.
struct TasteChili: AppIntent {
    static let title = "Taste chili"
    static let category = IntentCategory.generic
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        try await context.donate(DonationRequest(intent: "ServeChili", parameters: ["pot": "beef"], identifier: "taste-1", groupIdentifier: "tastings"))
        return IntentResult(dialog: "Tasty.", donationIdentifier: "taste-run", donationGroup: "tastings")
    }
}

enum Topping: String, AppEnum {
    case cheese, onions
    static let typeDisplayName = "Topping"
    static let caseDisplays: [Topping: CaseDisplay] = [.cheese: CaseDisplay("cheese"), .onions: CaseDisplay("onions", synonyms: ["onion"])]
}

/// Custom resolution of every kind: a guessed value to confirm, an optional
/// parameter asked only for beef, an app-specific unsupported reason.
struct PourChili: AppIntent {
    static let title = "Pour chili"
    static let category = IntentCategory.generic
    @Parameter(title: "Chili", prompt: "Which chili?") var pot: ChiliPot
    @Parameter(title: "Topping", prompt: "Which topping?") var topping: Topping?
    @Parameter(title: "Bowls", prompt: "How many bowls?") var bowls: Int
    init() {}

    func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? {
        switch parameter {
        case "pot":
            return proposed.map { .success($0) } ?? .confirmation(ChiliPot.all[0].option, prompt: nil)
        case "topping":
            if pot.id == "veggie" { return .notRequired }
            return proposed.map { .success($0) } ?? .needsValue(prompt: nil)
        case "bowls":
            guard let proposed, let count = Int(proposed) else { return .needsValue(prompt: nil) }
            return count > 2 ? .unsupported(reason: "Only two bowls are clean.") : .success(proposed)
        default:
            return nil
        }
    }

    func perform(context: IntentContext) async throws -> IntentResult {
        let extra = topping.map { " with \($0.rawValue)" } ?? ""
        return IntentResult(dialog: "Poured \(SpokenNumber.words(bowls)) of \(pot.displayName)\(extra).")
    }
}

struct ChiliApp: ParleyApp {
    let identifier = "Chili"
    let name = "Chili Shack"
    var intents: [any AppIntent.Type] { [ServeChili.self, BurnChili.self, CrashChili.self, SlowChili.self, TasteChili.self, PourChili.self, LateChili.self, SimmerChili.self] }
    var shortcuts: [AppShortcut] {
        [
            AppShortcut(intent: ServeChili.self, phrases: ["serve chili with {app}"], shortTitle: "Serve chili"),
            AppShortcut(intent: BurnChili.self, phrases: ["burn chili with {app}"], shortTitle: "Burn chili"),
            AppShortcut(intent: CrashChili.self, phrases: ["crash chili with {app}"], shortTitle: "Crash chili"),
            AppShortcut(intent: SlowChili.self, phrases: ["slow chili with {app}"], shortTitle: "Slow chili"),
            AppShortcut(intent: TasteChili.self, phrases: ["taste chili with {app}"], shortTitle: "Taste chili"),
            AppShortcut(intent: PourChili.self, phrases: ["pour chili with {app}"], shortTitle: "Pour chili"),
            AppShortcut(intent: LateChili.self, phrases: ["late chili with {app}"], shortTitle: "Late chili"),
            AppShortcut(intent: SimmerChili.self, phrases: ["simmer chili with {app}"], shortTitle: "Simmer chili"),
        ]
    }
}

let lateGate = Gate()
/// How many times SimmerChili's perform was stopped by cancellation.
let simmerStops = Atomic<Int>(0)

/// Performs of LateChili that got past the gate and donated.
let lateFinished = Atomic<Int>(0)

/// Finishes only when `lateGate` opens, cancelled or not, and donates on its own then.
struct LateChili: AppIntent {
    static let title = "Late chili"
    static let category = IntentCategory.generic
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        await lateGate.wait()
        defer { lateFinished.add(1, ordering: .relaxed) }
        try await context.donate(DonationRequest(intent: "LateChili", parameters: [:], identifier: "late"))
        return IntentResult(dialog: "Done late.")
    }
}

/// Simmers for an hour unless stopped; counts the stops.
struct SimmerChili: AppIntent {
    static let title = "Simmer chili"
    static let category = IntentCategory.generic
    static let timeLimit: TimeInterval = 7200
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        do {
            try await Task.sleep(for: .seconds(3600))
        } catch {
            simmerStops.add(1, ordering: .relaxed)
            throw error
        }
        return IntentResult(dialog: "Simmered.")
    }
}

/// Orders of OrderFlour the app was asked to place.
let flourOrders = Atomic<Int>(0)

/// An order (confirmed with the button) that counts the times it was placed.
struct OrderFlour: AppIntent {
    static let title = "Order flour"
    static let category = IntentCategory.order
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        flourOrders.add(1, ordering: .relaxed)
        return IntentResult(dialog: "Flour ordered.")
    }
}

struct Pantry: ParleyApp {
    let identifier = "Pantry"
    let name = "Pantry"
    var intents: [any AppIntent.Type] { [OrderFlour.self] }
    var shortcuts: [AppShortcut] { [AppShortcut(intent: OrderFlour.self, phrases: ["order flour with {app}"], shortTitle: "Order flour")] }
}

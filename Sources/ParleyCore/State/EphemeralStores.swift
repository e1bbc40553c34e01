import Foundation

/// The three stores the engine uses, bundled so a factory can hand them over
/// (SQLite in the daemon, `EphemeralStores` in a console session).
public struct ParleyStores: Sendable {
    public var donations: any DonationStore
    public var customPhrases: any CustomPhraseStore
    public var appData: any AppDataStore

    public init(donations: any DonationStore, customPhrases: any CustomPhraseStore, appData: any AppDataStore) {
        self.donations = donations
        self.customPhrases = customPhrases
        self.appData = appData
    }
}

/// State for one console session only: kept in memory and gone when the
/// process ends. The daemon uses the SQLite stores of ParleyStore instead.
public enum EphemeralStores {
    public static func make() -> ParleyStores {
        ParleyStores(donations: EphemeralDonationStore(), customPhrases: EphemeralCustomPhraseStore(), appData: EphemeralAppDataStore())
    }
}

/// Donations of one console session, in memory.
public actor EphemeralDonationStore: DonationStore {
    private var rows: [Donation] = []
    private var nextID: Int64 = 1

    /// A store holding `rows` already, numbered in order.
    public init(_ rows: [Donation] = []) {
        for row in rows {
            var numbered = row
            numbered.rowID = nextID
            nextID += 1
            self.rows.append(numbered)
        }
    }

    public func record(_ donation: Donation) async throws -> Int64 {
        var row = donation
        row.rowID = nextID
        nextID += 1
        rows.append(row)
        return row.rowID!
    }

    public func donations(app: String?, intent: String?, limit: Int?) async throws -> [Donation] {
        let matching = rows.reversed().filter { (app == nil || $0.app == app) && (intent == nil || $0.intent == intent) }
        return limit.map { Array(matching.prefix($0)) } ?? Array(matching)
    }

    public func delete(_ scope: DonationScope) async throws -> Int {
        let before = rows.count
        rows.removeAll { $0.matches(scope) }
        return before - rows.count
    }
}

extension Donation {
    /// Whether this donation falls in a deletion scope.
    public func matches(_ scope: DonationScope) -> Bool {
        switch scope {
        case .identifier(let id): identifier == id
        case .group(let group): groupIdentifier == group
        case .app(let app): self.app == app
        case .all: true
        }
    }
}

/// Custom phrases of one console session, in memory.
public actor EphemeralCustomPhraseStore: CustomPhraseStore {
    private var phrases: [String: CustomPhrase] = [:]
    public init() {}
    public func customPhrases() async throws -> [CustomPhrase] { phrases.values.sorted { $0.created < $1.created } }
    public func save(_ phrase: CustomPhrase) async throws { phrases[PhraseText.normalised(phrase.phrase)] = phrase }
    public func deletePhrase(_ phrase: String) async throws -> Bool {
        phrases.removeValue(forKey: PhraseText.normalised(phrase)) != nil
    }
}

/// App data of one console session, in memory.
public actor EphemeralAppDataStore: AppDataStore {
    private var values: [String: [String: Data]] = [:]
    public init() {}
    public func value(app: String, key: String) async throws -> Data? { values[app]?[key] }
    public func setValue(_ value: Data, app: String, key: String) async throws { values[app, default: [:]][key] = value }
    public func removeValue(app: String, key: String) async throws { values[app]?[key] = nil }
    public func keys(app: String, prefix: String) async throws -> [String] {
        (values[app] ?? [:]).keys.filter { $0.hasPrefix(prefix) }.sorted()
    }
}

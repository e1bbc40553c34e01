import Foundation

/// The record made when a person performs an intent (docs/spec.md §7).
/// Parameters are stored as canonical strings so identical parameter sets
/// group together regardless of when they were used.
public struct Donation: Sendable, Hashable, Codable {
    /// Row identifier assigned by the store (nil before it is recorded).
    public var rowID: Int64?
    /// Optional identifier and group identifier given by the app.
    public var identifier: String?
    public var groupIdentifier: String?
    public var app: String
    public var intent: String
    public var parameters: [String: String]
    public var date: Date
    /// How it was started: "voice", "button", "shortcut", "automation", "console".
    public var trigger: String

    public init(
        rowID: Int64? = nil, identifier: String? = nil, groupIdentifier: String? = nil,
        app: String, intent: String, parameters: [String: String], date: Date, trigger: String
    ) {
        self.rowID = rowID
        self.identifier = identifier
        self.groupIdentifier = groupIdentifier
        self.app = app
        self.intent = intent
        self.parameters = parameters
        self.date = date
        self.trigger = trigger
    }
}

/// Which donations to forget.
public enum DonationScope: Sendable, Hashable {
    case identifier(String)
    case group(String)
    case app(String)
    case all
}

/// Where donations live. The daemon uses the SQLite store (ParleyStore);
/// a call that returns has made its write durable.
public protocol DonationStore: Sendable {
    @discardableResult
    func record(_ donation: Donation) async throws -> Int64
    /// Donations, newest first, optionally filtered by app and intent.
    func donations(app: String?, intent: String?, limit: Int?) async throws -> [Donation]
    /// Deletes the donations in scope and returns how many were deleted.
    @discardableResult
    func delete(_ scope: DonationScope) async throws -> Int
}

/// A person's own phrase ("Add to Siri") for an intent with fixed values,
/// or another phrase for one of their shortcuts (`app` is `shortcutApp` and
/// `intent` the shortcut's name: `parley phrases add "..." --shortcut NAME`).
public struct CustomPhrase: Sendable, Hashable, Codable {
    /// The `app` of a phrase that runs a shortcut.
    public static let shortcutApp = "shortcut"
    /// The shortcut this phrase runs, if it runs one.
    public var shortcut: String? { app == Self.shortcutApp ? intent : nil }

    public var phrase: String
    public var app: String
    public var intent: String
    public var parameters: [String: String]
    public var created: Date

    public init(phrase: String, app: String, intent: String, parameters: [String: String], created: Date) {
        self.phrase = phrase
        self.app = app
        self.intent = intent
        self.parameters = parameters
        self.created = created
    }
}

/// Where custom phrases live; the phrase text (normalised) is the key.
public protocol CustomPhraseStore: Sendable {
    func customPhrases() async throws -> [CustomPhrase]
    func save(_ phrase: CustomPhrase) async throws
    @discardableResult
    func deletePhrase(_ phrase: String) async throws -> Bool
}

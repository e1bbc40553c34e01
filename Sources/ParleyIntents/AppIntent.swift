import Foundation

/// An action an app offers (docs/spec.md §4). Parameters are `@Parameter` properties,
/// discovered by reflecting a default instance, so the type carries its own
/// metadata with no code generation (as swift-argument-parser's `@Option`).
public protocol AppIntent: Sendable {
    init()
    /// Stable identifier used in donations and `performed:` lines; the type name by default.
    static var identifier: String { get }
    static var title: String { get }
    static var description: String { get }
    static var category: IntentCategory { get }
    /// "Order {quantity} {soup} for {orderType}": parameter names in braces.
    static var parameterSummary: String { get }
    /// Whether the intent is confirmed before it runs; by category by default.
    static var requiresConfirmation: Bool { get }
    /// How long `perform` may take before the device gives up, in seconds.
    static var timeLimit: TimeInterval { get }
    /// Names of the properties of `IntentResult.output`, so a shortcut using
    /// `{order.total}` is checked when it is loaded. Nil: not declared (any
    /// name is accepted on load and a missing one reads as empty).
    static var outputProperties: [String]? { get }

    /// Custom resolution of one parameter. Earlier parameters are already set
    /// on `self`. Return nil for the default resolution.
    func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution?
    /// The stakes stated before a confirmation ("A large latte, four dollars fifty.").
    /// The engine adds the instruction naming the verb. Nil: the parameter summary.
    func confirmationDialog(context: IntentContext) async throws -> String?
    func perform(context: IntentContext) async throws -> IntentResult
}

extension AppIntent {
    public static var identifier: String { String(describing: Self.self) }
    public static var description: String { title }
    public static var parameterSummary: String { "" }
    public static var requiresConfirmation: Bool { category.requiresConfirmation }
    public static var timeLimit: TimeInterval { 10 }
    public static var outputProperties: [String]? { nil }
    public func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? { nil }
    public func confirmationDialog(context: IntentContext) async throws -> String? { nil }
}

/// The outcome of resolving one parameter (docs/spec.md §5).
public enum ParameterResolution: Sendable, Hashable {
    /// The value (canonical) is settled.
    case success(String)
    /// Ask for a value; nil prompt: the parameter's own question.
    case needsValue(prompt: String?)
    /// Let the person pick among a few options.
    case disambiguation([ParameterOption], prompt: String?)
    /// "Lewis Avenue, right?" about a guessed value.
    case confirmation(ParameterOption, prompt: String?)
    /// The value cannot be used; the reason is spoken, then the question asked again.
    case unsupported(reason: String)
    /// The parameter stays empty.
    case notRequired
}

/// A named property of an intent's output, usable by later shortcut actions.
public enum OutputValue: Sendable, Hashable, Codable {
    case text(String)
    case number(Double)
    case date(Date)
    case duration(TimeInterval)
}

/// What `perform` returns: a short line, the full spoken detail a screen
/// would have shown, and an optional output value with named properties.
public struct IntentResult: Sendable, Hashable {
    public var dialog: String
    public var detail: String?
    public var output: [String: OutputValue]
    /// Identifiers for the automatic donation of this run.
    public var donationIdentifier: String?
    public var donationGroup: String?

    public init(dialog: String, detail: String? = nil, output: [String: OutputValue] = [:],
                donationIdentifier: String? = nil, donationGroup: String? = nil) {
        self.dialog = dialog
        self.detail = detail
        self.output = output
        self.donationIdentifier = donationIdentifier
        self.donationGroup = donationGroup
    }

    /// What the device says: the short line followed by the detail.
    public var spoken: String { [dialog, detail].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ") }
}

/// An explicit donation made by an app (docs/spec.md §4: "apps may donate explicitly").
public struct DonationRequest: Sendable, Hashable {
    public var intent: String
    public var parameters: [String: String]
    public var identifier: String?
    public var groupIdentifier: String?

    public init(intent: String, parameters: [String: String], identifier: String? = nil, groupIdentifier: String? = nil) {
        self.intent = intent
        self.parameters = parameters
        self.identifier = identifier
        self.groupIdentifier = groupIdentifier
    }
}

/// What the runtime gives an app while it resolves and performs: the time,
/// its durable storage, timed announcements and explicit donations.
public protocol IntentServices: Sendable {
    func donate(app: String, _ request: DonationRequest) async throws
    /// Says `text` (after a chime) at `date`; replaces an earlier one with the same id.
    func schedule(app: String, id: String, at date: Date, announcement: String) async
    func cancelScheduled(app: String, id: String) async
    /// When a scheduled announcement will be made, as a wall-clock date
    /// reckoned now (nil: none scheduled). The runtime keeps the interval, not
    /// the date, so this follows the wall clock when it jumps.
    func scheduledDate(app: String, id: String) async -> Date?
    /// Past parameter values of an intent, newest first (for ordering suggestions).
    func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String]
}

/// Per-run context handed to resolution and `perform`.
public struct IntentContext: Sendable {
    public var app: String
    public var now: Date
    public var appData: any AppDataStore
    public var services: any IntentServices

    public init(app: String, now: Date, appData: any AppDataStore, services: any IntentServices) {
        self.app = app
        self.now = now
        self.appData = appData
        self.services = services
    }

    public func donate(_ request: DonationRequest) async throws { try await services.donate(app: app, request) }
    public func schedule(id: String, at date: Date, announcement: String) async {
        await services.schedule(app: app, id: id, at: date, announcement: announcement)
    }
    public func cancelScheduled(id: String) async { await services.cancelScheduled(app: app, id: id) }
    public func scheduledDate(id: String) async -> Date? { await services.scheduledDate(app: app, id: id) }
}

/// An error whose message is fit to be spoken.
public struct IntentError: Error, Sendable, Hashable, CustomStringConvertible {
    public var spokenMessage: String
    public init(_ spokenMessage: String) { self.spokenMessage = spokenMessage }
    public var description: String { spokenMessage }
}

/// How one enum case is shown and heard.
public struct CaseDisplay: Sendable, Hashable {
    public var title: String
    public var synonyms: [String]
    public var spokenForm: String?

    public init(_ title: String, synonyms: [String] = [], spokenForm: String? = nil) {
        self.title = title
        self.synonyms = synonyms
        self.spokenForm = spokenForm
    }
}

/// A fixed list of values (docs/spec.md §4): each case has a display name, synonyms
/// and a spoken form. The raw value is the canonical value.
public protocol AppEnum: IntentParameterValue, CaseIterable, Hashable, RawRepresentable
where RawValue == String, AllCases: Sendable {
    static var typeDisplayName: String { get }
    /// Display of each case; cases missing here are shown by raw value.
    static var caseDisplays: [Self: CaseDisplay] { get }
    /// The cases read aloud when the device asks (all by default): a size
    /// enum may list "small, medium or large" and still accept "twelve ounce".
    static var suggestedCases: [Self] { get }
}

extension AppEnum {
    public static var parameterKind: ParameterKind { .enumeration }
    public var canonicalValue: String { rawValue }
    public var display: CaseDisplay { Self.caseDisplays[self] ?? CaseDisplay(rawValue) }
    public var spokenValue: String { display.spokenForm ?? display.title }
    public static var staticOptions: [ParameterOption]? {
        allCases.map { value in
            let d = value.display
            return ParameterOption(id: value.rawValue, title: d.title, synonyms: d.synonyms, spokenForm: d.spokenForm)
        }
    }
    public static var suggestedCases: [Self] { Array(allCases) }
    public static var suggestedOptions: [ParameterOption]? {
        let suggested = Set(suggestedCases.map(\.rawValue))
        return staticOptions?.filter { suggested.contains($0.id) }
    }
    public static func value(canonical: String, context: IntentContext) async throws -> Self? {
        Self(rawValue: canonical)
    }
}

/// An app-defined thing found by a query (a store, a note, a past order).
public protocol AppEntity: IntentParameterValue, Identifiable where ID == String {
    associatedtype Query: EntityQuery where Query.Entity == Self
    static var typeDisplayName: String { get }
    static var defaultQuery: Query { get }
    var displayName: String { get }
    var synonyms: [String] { get }
    var spokenForm: String? { get }
}

extension AppEntity {
    public static var parameterKind: ParameterKind { .entity }
    public var canonicalValue: String { id }
    public var spokenValue: String { spokenForm ?? displayName }
    public var synonyms: [String] { [] }
    public var spokenForm: String? { nil }
    public var option: ParameterOption {
        ParameterOption(id: id, title: displayName, synonyms: synonyms, spokenForm: spokenForm)
    }
    public static func options(context: IntentContext) async throws -> [ParameterOption]? {
        try await defaultQuery.suggestedEntities(context: context).map(\.option)
    }
    public static func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption] {
        try await defaultQuery.entities(matching: text, context: context).map(\.option)
    }
    public static func defaultOption(context: IntentContext) async throws -> ParameterOption? {
        try await defaultQuery.defaultResult(context: context)?.option
    }
    public static func value(canonical: String, context: IntentContext) async throws -> Self? {
        try await defaultQuery.entities(for: [canonical], context: context).first
    }
}

/// Finds entities: suggestions (ordered by recency or frequency), lookup by
/// spoken text, lookup by identifier, and an optional default.
public protocol EntityQuery: Sendable {
    associatedtype Entity: AppEntity
    func entities(for identifiers: [String], context: IntentContext) async throws -> [Entity]
    func suggestedEntities(context: IntentContext) async throws -> [Entity]
    func entities(matching text: String, context: IntentContext) async throws -> [Entity]
    func defaultResult(context: IntentContext) async throws -> Entity?
}

extension EntityQuery {
    public func defaultResult(context: IntentContext) async throws -> Entity? { nil }
    /// Default lookup: suggested entities whose name or synonym contains every spoken word.
    public func entities(matching text: String, context: IntentContext) async throws -> [Entity] {
        let words = Set(text.lowercased().split(separator: " ").map(String.init))
        return try await suggestedEntities(context: context).filter { entity in
            ([entity.displayName] + entity.synonyms).contains { form in
                words.isSubset(of: Set(form.lowercased().split(separator: " ").map(String.init)))
            }
        }
    }
}

import Foundation
import Synchronization

/// What carries out an intent. Swift apps implement intents as types; an
/// external app's handler is a separate program. The registry and the engine
/// see only this, so both kinds of app take part in everything alike.
public protocol IntentImplementation: Sendable {
    /// A fresh object for one run: parameters are assigned to it one by one,
    /// then it is confirmed and performed.
    func makeRun() -> any IntentRun
}

/// One run of an intent, holding the values resolved so far.
public protocol IntentRun: Sendable {
    /// Sets a parameter from its canonical value (nil: left empty). False when
    /// the value cannot be decoded (an entity that no longer exists).
    func assign(_ parameter: String, canonical: String?, context: IntentContext) async throws -> Bool
    /// Custom resolution of one parameter; nil: the default resolution.
    func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution?
    /// The stakes stated before a confirmation; nil: the parameter summary.
    func confirmationDialog(context: IntentContext) async throws -> String?
    func perform(context: IntentContext) async throws -> IntentResult
}

/// Where a parameter's values come from beyond its static list: an entity's
/// query, or an external app's handler.
public protocol ParameterValueSource: Sendable {
    /// The options read aloud when asking (a subset of the static options).
    var suggestedOptions: [ParameterOption]? { get }
    /// Options that need the app (entities: the suggested values, in order).
    func options(context: IntentContext) async throws -> [ParameterOption]?
    /// Options matching a spoken text.
    func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption]
    /// The value used when none was said, if any.
    func defaultOption(context: IntentContext) async throws -> ParameterOption?
}

/// A Swift value type's hooks, as a value.
public struct TypeValueSource<Value: IntentParameterValue>: ParameterValueSource {
    public init() {}
    public var suggestedOptions: [ParameterOption]? { Value.suggestedOptions }
    public func options(context: IntentContext) async throws -> [ParameterOption]? { try await Value.options(context: context) }
    public func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption] {
        try await Value.lookup(text, context: context)
    }
    public func defaultOption(context: IntentContext) async throws -> ParameterOption? {
        try await Value.defaultOption(context: context)
    }
}

/// Intents compiled into Parley: a run is a default instance of the type,
/// its `@Parameter`s set through reflection.
public struct SwiftIntentImplementation: IntentImplementation {
    public let type: any AppIntent.Type
    public init(type: any AppIntent.Type) { self.type = type }
    public func makeRun() -> any IntentRun { SwiftIntentRun(type.init()) }
}

public struct SwiftIntentRun: IntentRun {
    public let intent: any AppIntent
    private let parameters: [String: any AnyIntentParameter]

    public init(_ intent: any AppIntent) {
        self.intent = intent
        parameters = Dictionary(IntentReflection.parameters(of: intent).map { ($0.name, $0.parameter) },
                                uniquingKeysWith: { first, _ in first })
    }

    public func assign(_ parameter: String, canonical: String?, context: IntentContext) async throws -> Bool {
        guard let storage = parameters[parameter] else { return false }
        return try await storage.assign(canonical: canonical, context: context)
    }

    public func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? {
        try await intent.resolve(parameter: parameter, proposed: proposed, context: context)
    }

    public func confirmationDialog(context: IntentContext) async throws -> String? {
        try await intent.confirmationDialog(context: context)
    }

    public func perform(context: IntentContext) async throws -> IntentResult { try await intent.perform(context: context) }
}

/// Options matched against a spoken text the way `EntityQuery` does by
/// default: every spoken word appears in the name or a synonym.
public enum OptionLookup {
    public static func matching(_ text: String, in options: [ParameterOption]) -> [ParameterOption] {
        let words = Set(PhraseText.normalise(text))
        guard !words.isEmpty else { return [] }
        return options.filter { option in
            option.allForms.contains { words.isSubset(of: Set(PhraseText.normalise($0))) }
        }
    }
}

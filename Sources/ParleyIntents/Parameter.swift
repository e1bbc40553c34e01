import Foundation
import Synchronization

/// Numeric limits of a parameter and what is said when they are broken.
public struct ParameterBounds: Sendable, Hashable {
    public var minimum: Double?
    public var maximum: Double?
    public var belowMinimum: String
    public var aboveMaximum: String

    public init(minimum: Double? = nil, maximum: Double? = nil, belowMinimum: String, aboveMaximum: String) {
        self.minimum = minimum
        self.maximum = maximum
        self.belowMinimum = belowMinimum
        self.aboveMaximum = aboveMaximum
    }

    /// The spoken reason a value is out of range, or nil when it fits.
    public func violation(_ value: Double) -> String? {
        if let minimum, value < minimum { return belowMinimum }
        if let maximum, value > maximum { return aboveMaximum }
        return nil
    }
}

/// A child parameter is only asked when its parent has one of these values.
public struct ParentCondition: Sendable, Hashable {
    public var parameter: String
    public var values: Set<String>
    public init(_ parameter: String, in values: Set<String>) {
        self.parameter = parameter
        self.values = values
    }
}

/// Everything the runtime knows about one parameter, without its value.
public struct ParameterDefinition: Sendable {
    /// The property name without the wrapper's underscore, e.g. "soup".
    public var name: String
    public var title: String
    /// The question asked when a value is needed ("Which soup?").
    public var prompt: String
    public var kind: ParameterKind
    public var isOptional: Bool
    /// Canonical default value, if any.
    public var defaultValue: String?
    public var bounds: ParameterBounds?
    public var parent: ParentCondition?
    /// Finite options known without the app (enums, booleans, durations).
    public var staticOptions: [ParameterOption]?
    /// Where the values come from beyond `staticOptions`: an entity's query,
    /// an external app's handler. A value, not a metatype, so an app that is
    /// not a Swift type can answer too.
    public var valueType: any ParameterValueSource

    public init(name: String, title: String, prompt: String, kind: ParameterKind, isOptional: Bool,
                defaultValue: String? = nil, bounds: ParameterBounds? = nil, parent: ParentCondition? = nil,
                staticOptions: [ParameterOption]? = nil, valueType: any ParameterValueSource) {
        self.name = name
        self.title = title
        self.prompt = prompt
        self.kind = kind
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.bounds = bounds
        self.parent = parent
        self.staticOptions = staticOptions
        self.valueType = valueType
    }

    /// True when the parameter's values form a finite list (may appear in a phrase).
    public var isFinite: Bool { kind == .entity || staticOptions != nil }
}

/// Type-erased view of an `@Parameter` found by reflection.
public protocol AnyIntentParameter: Sendable {
    func definition(named name: String) -> ParameterDefinition
    /// Sets the value from its canonical form; false when it cannot be decoded.
    func assign(canonical: String?, context: IntentContext) async throws -> Bool
    var isSet: Bool { get }
}

/// Shared storage behind a parameter, so values set on a reflected copy are
/// seen by the intent instance itself.
final class ParameterStorage<Value: Sendable>: Sendable {
    let value = Mutex<Value?>(nil)
}

/// A typed input of an intent (docs/spec.md §4), declared as
/// `@Parameter(title: "Soup", prompt: "Which soup?") var soup: Soup`.
@propertyWrapper
public struct Parameter<Value: IntentParameterValue>: AnyIntentParameter {
    let title: String
    let prompt: String?
    let defaultValue: Value?
    let bounds: ParameterBounds?
    let parent: ParentCondition?
    let storage = ParameterStorage<Value>()

    public init(title: String, prompt: String? = nil, default defaultValue: Value? = nil,
                bounds: ParameterBounds? = nil, parent: ParentCondition? = nil) {
        self.title = title
        self.prompt = prompt
        self.defaultValue = defaultValue
        self.bounds = bounds
        self.parent = parent
    }

    /// The resolved value. Reading a required parameter that was never
    /// resolved is a programming error in the runtime, not in the app.
    public var wrappedValue: Value {
        get {
            if let value = storage.value.withLock({ $0 }) { return value }
            if let defaultValue { return defaultValue }
            if Value.isOptionalType, let empty = Self.emptyOptional { return empty }
            fatalError("@Parameter '\(title)' read before it was resolved")
        }
        nonmutating set { storage.value.withLock { $0 = newValue } }
    }

    /// `nil` wrapped as the optional `Value`, when `Value` is an Optional.
    private static var emptyOptional: Value? {
        (Optional<Any>.none as Any) as? Value
    }

    public var isSet: Bool { storage.value.withLock { $0 != nil } }

    public func definition(named name: String) -> ParameterDefinition {
        ParameterDefinition(
            name: name, title: title,
            prompt: prompt ?? "Which \(title.lowercased())?",
            kind: Value.parameterKind, isOptional: Value.isOptionalType,
            defaultValue: defaultValue.map(\.canonicalValue).flatMap { $0.isEmpty ? nil : $0 },
            bounds: bounds, parent: parent, staticOptions: Value.staticOptions, valueType: TypeValueSource<Value>())
    }

    public func assign(canonical: String?, context: IntentContext) async throws -> Bool {
        guard let canonical else {
            if Value.isOptionalType, let empty = Self.emptyOptional {
                storage.value.withLock { $0 = empty }
                return true
            }
            return false
        }
        guard let value = try await Value.value(canonical: canonical, context: context) else { return false }
        storage.value.withLock { $0 = value }
        return true
    }
}

/// Reflection over an intent type: its parameters in declaration order.
public enum IntentReflection {
    /// The `@Parameter`s of an intent instance, in declaration order, with names.
    public static func parameters(of intent: any AppIntent) -> [(name: String, parameter: any AnyIntentParameter)] {
        Mirror(reflecting: intent).children.compactMap { child in
            guard let label = child.label, let parameter = child.value as? any AnyIntentParameter else { return nil }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            return (name, parameter)
        }
    }

    /// The definitions of an intent type's parameters, from a default instance.
    public static func definitions(of type: any AppIntent.Type) -> [ParameterDefinition] {
        parameters(of: type.init()).map { $0.parameter.definition(named: $0.name) }
    }
}

/// What the runtime knows about one intent, whatever implements it: a Swift
/// `AppIntent` type (found by reflection) or an external app's handler
/// (described by its manifest).
public struct IntentDescriptor: Sendable {
    public var identifier: String
    public var title: String
    public var description: String
    public var category: IntentCategory
    /// "Order {quantity} {soup}": parameter names in braces; empty: the title.
    public var parameterSummary: String
    public var requiresConfirmation: Bool
    /// How long `perform` may take, in seconds.
    public var timeLimit: TimeInterval
    public var parameters: [ParameterDefinition]
    /// The properties of the intent's output (`{order.total}` in a shortcut);
    /// nil when the intent does not declare them (any property is accepted).
    public var outputProperties: [String]?
    /// Makes the object one run resolves and performs.
    public var implementation: any IntentImplementation
    /// The Swift type, for intents compiled into Parley.
    public var swiftType: (any AppIntent.Type)?

    public init(_ type: any AppIntent.Type) {
        self.init(identifier: type.identifier, title: type.title, description: type.description, category: type.category,
                  parameterSummary: type.parameterSummary, requiresConfirmation: type.requiresConfirmation,
                  timeLimit: type.timeLimit, parameters: IntentReflection.definitions(of: type),
                  outputProperties: type.outputProperties, implementation: SwiftIntentImplementation(type: type))
        swiftType = type
    }

    public init(identifier: String, title: String, description: String? = nil, category: IntentCategory,
                parameterSummary: String = "", requiresConfirmation: Bool? = nil, timeLimit: TimeInterval = 10,
                parameters: [ParameterDefinition], outputProperties: [String]? = nil,
                implementation: any IntentImplementation) {
        self.identifier = identifier
        self.title = title
        self.description = description ?? title
        self.category = category
        self.parameterSummary = parameterSummary
        self.requiresConfirmation = requiresConfirmation ?? category.requiresConfirmation
        self.timeLimit = timeLimit
        self.parameters = parameters
        self.outputProperties = outputProperties
        self.implementation = implementation
    }

    public func parameter(_ name: String) -> ParameterDefinition? { parameters.first { $0.name == name } }

    /// The parameter summary with values filled in ("Order one clam chowder for pickup").
    public func summary(values: [String: String]) -> String {
        var text = parameterSummary.isEmpty ? title : parameterSummary
        for definition in parameters {
            let spoken = values[definition.name].map { value in
                if definition.kind == .integer, let number = Int(value), number >= 0, number < 1_000_000 {
                    return SpokenNumber.words(number)
                }
                return definition.staticOptions?.first { $0.id == value }?.spoken ?? value
            } ?? definition.title.lowercased()
            text = text.replacingOccurrences(of: "{\(definition.name)}", with: spoken)
        }
        return text
    }
}

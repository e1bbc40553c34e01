import Foundation

/// The type of a parameter, as far as resolution and phrase validation care.
public enum ParameterKind: String, Sendable, Hashable {
    case text, integer, decimal, boolean, date, time, duration, enumeration, entity

    /// Open types take any spoken value and cannot be listed in an App
    /// Shortcut phrase (docs/spec.md §4: "at most one parameter, taken from a finite list").
    public var isOpen: Bool {
        switch self {
        case .text, .integer, .decimal, .date, .time: true
        case .boolean, .duration, .enumeration, .entity: false
        }
    }
}

/// One value a person can choose: an enum case, an entity, a duration.
/// `id` is the canonical value reported to apps and stored in donations.
public struct ParameterOption: Sendable, Hashable, Codable {
    public var id: String
    /// The display name, spoken in lists and confirmations.
    public var title: String
    /// Other ways people say it.
    public var synonyms: [String]
    /// How to pronounce it when it is not spelled as it sounds ("fills" for
    /// "Philz"); spoken by the device and accepted by the recogniser.
    public var spokenForm: String?

    public init(id: String, title: String, synonyms: [String] = [], spokenForm: String? = nil) {
        self.id = id
        self.title = title
        self.synonyms = synonyms
        self.spokenForm = spokenForm
    }

    /// What the device says for this option.
    public var spoken: String { spokenForm ?? title }
    /// Every way of saying it: title, spoken form, synonyms.
    public var allForms: [String] { [title] + (spokenForm.map { [$0] } ?? []) + synonyms }
}

/// A type usable as an `@Parameter` value. Values travel through the engine
/// as canonical strings; each type converts from and to them.
public protocol IntentParameterValue: Sendable {
    static var parameterKind: ParameterKind { get }
    /// True only for `Optional`: the parameter may stay empty.
    static var isOptionalType: Bool { get }
    /// The canonical form of this value ("" for an empty optional).
    var canonicalValue: String { get }
    /// A number for bounds checks (integers, decimals, durations in seconds).
    var numericValue: Double? { get }
    /// The finite list of values, if the type has one (enums, booleans, durations).
    static var staticOptions: [ParameterOption]? { get }
    /// The options read aloud when asking (a subset of `staticOptions`; all by default).
    static var suggestedOptions: [ParameterOption]? { get }
    /// Options that need the app (entities: the query's suggested values).
    static func options(context: IntentContext) async throws -> [ParameterOption]?
    /// Options matching a spoken text (entities: the query's lookup).
    static func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption]
    /// The query's default value, if any.
    static func defaultOption(context: IntentContext) async throws -> ParameterOption?
    /// Parses an open value from spoken text ("twenty five" -> 25).
    static func parse(spoken text: String) -> Self?
    /// Rebuilds a value from its canonical form (entities use their query).
    static func value(canonical: String, context: IntentContext) async throws -> Self?
    /// The spoken form of a value in confirmations and summaries.
    var spokenValue: String { get }
}

extension IntentParameterValue {
    public static var isOptionalType: Bool { false }
    public var numericValue: Double? { nil }
    public static var staticOptions: [ParameterOption]? { nil }
    public static var suggestedOptions: [ParameterOption]? { staticOptions }
    public static func options(context: IntentContext) async throws -> [ParameterOption]? { staticOptions }
    public static func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption] { [] }
    public static func defaultOption(context: IntentContext) async throws -> ParameterOption? { nil }
    public static func parse(spoken text: String) -> Self? { nil }
    public var spokenValue: String { canonicalValue }
}

extension String: IntentParameterValue {
    public static var parameterKind: ParameterKind { .text }
    public var canonicalValue: String { self }
    public static func parse(spoken text: String) -> String? { text.isEmpty ? nil : text }
    public static func value(canonical: String, context: IntentContext) async throws -> String? { canonical }
}

extension Int: IntentParameterValue {
    public static var parameterKind: ParameterKind { .integer }
    public var canonicalValue: String { String(self) }
    public var numericValue: Double? { Double(self) }
    public var spokenValue: String { self >= 0 && self < 1_000_000 ? SpokenNumber.words(self) : String(self) }
    public static func parse(spoken text: String) -> Int? { SpokenNumber.parse(text) }
    public static func value(canonical: String, context: IntentContext) async throws -> Int? { Int(canonical) }
}

extension Double: IntentParameterValue {
    public static var parameterKind: ParameterKind { .decimal }
    public var canonicalValue: String { String(self) }
    public var numericValue: Double? { self }
    public static func parse(spoken text: String) -> Double? { SpokenNumber.parse(text).map(Double.init) ?? Double(text) }
    public static func value(canonical: String, context: IntentContext) async throws -> Double? { Double(canonical) }
}

extension Bool: IntentParameterValue {
    public static var parameterKind: ParameterKind { .boolean }
    public var canonicalValue: String { self ? "true" : "false" }
    public var spokenValue: String { self ? "yes" : "no" }
    public static var staticOptions: [ParameterOption]? {
        [ParameterOption(id: "true", title: "yes", synonyms: ["yeah", "yep"]),
         ParameterOption(id: "false", title: "no", synonyms: ["nope"])]
    }
    public static func value(canonical: String, context: IntentContext) async throws -> Bool? {
        canonical == "true" ? true : canonical == "false" ? false : nil
    }
}

extension Optional: IntentParameterValue where Wrapped: IntentParameterValue {
    public static var parameterKind: ParameterKind { Wrapped.parameterKind }
    public static var isOptionalType: Bool { true }
    public var canonicalValue: String { self?.canonicalValue ?? "" }
    public var numericValue: Double? { self?.numericValue }
    public var spokenValue: String { self?.spokenValue ?? "" }
    public static var staticOptions: [ParameterOption]? { Wrapped.staticOptions }
    public static var suggestedOptions: [ParameterOption]? { Wrapped.suggestedOptions }
    public static func options(context: IntentContext) async throws -> [ParameterOption]? {
        try await Wrapped.options(context: context)
    }
    public static func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption] {
        try await Wrapped.lookup(text, context: context)
    }
    public static func defaultOption(context: IntentContext) async throws -> ParameterOption? {
        try await Wrapped.defaultOption(context: context)
    }
    public static func parse(spoken text: String) -> Wrapped?? { Wrapped.parse(spoken: text).map { .some($0) } }
    public static func value(canonical: String, context: IntentContext) async throws -> Wrapped?? {
        if canonical.isEmpty { return .some(nil) }
        return try await Wrapped.value(canonical: canonical, context: context).map { .some($0) }
    }
}

/// A length of time as people say it: "ten minutes", "an hour and a half".
/// Its values form a finite spoken list (so a timer phrase may contain one);
/// the canonical value is the number of seconds.
public struct SpokenDuration: IntentParameterValue, Hashable {
    public var seconds: Int
    public init(seconds: Int) { self.seconds = seconds }

    public static var parameterKind: ParameterKind { .duration }
    public var canonicalValue: String { String(seconds) }
    public var numericValue: Double? { Double(seconds) }
    public var spokenValue: String { Self.describe(seconds) }
    public static var staticOptions: [ParameterOption]? { allOptions }
    public static func value(canonical: String, context: IntentContext) async throws -> SpokenDuration? {
        Int(canonical).map(SpokenDuration.init(seconds:))
    }
    public static func parse(spoken text: String) -> SpokenDuration? {
        let normal = text.lowercased()
        return allOptions.first { $0.allForms.contains(normal) }.flatMap { Int($0.id) }.map(SpokenDuration.init(seconds:))
    }

    /// "ten minutes", "one hour and thirty minutes", "one hour nine minutes
    /// and fifty nine seconds": the parts joined as people say them.
    public static func describe(_ seconds: Int) -> String {
        let parts = Self.parts(seconds)
        guard let last = parts.last else { return "zero seconds" }
        return parts.count == 1 ? last : parts.dropLast().joined(separator: " ") + " and " + last
    }

    /// "one hour", "thirty minutes", "five seconds": the non-zero units, largest first.
    private static func parts(_ seconds: Int) -> [String] {
        let hours = seconds / 3600, minutes = (seconds % 3600) / 60, secs = seconds % 60
        var parts: [String] = []
        if hours > 0 { parts.append(hours == 1 ? "one hour" : "\(SpokenNumber.words(hours)) hours") }
        if minutes > 0 { parts.append(SpokenNumber.minutes(minutes)) }
        if secs > 0 { parts.append(secs == 1 ? "one second" : "\(SpokenNumber.words(secs)) seconds") }
        return parts
    }

    /// The adjective form, as in "the ten minute timer": "ten minute", "one
    /// and a half hour", "ninety second". Nil when no adjective reads
    /// naturally ("one hour five minute" does not), so the caller names the
    /// length instead ("the timer for one hour and five minutes").
    public static func adjective(_ seconds: Int) -> String? {
        let hours = seconds / 3600, minutes = (seconds % 3600) / 60, secs = seconds % 60
        let words = SpokenNumber.words
        switch (hours, minutes, secs) {
        case (0, 0, 0): return nil
        case (let h, 0, 0): return "\(words(h)) hour"
        case (0, let m, 0): return "\(words(m)) minute"
        case (0, 0, let s): return "\(words(s)) second"
        case (let h, 30, 0): return "\(words(h)) and a half hour"
        // Under a hundred seconds people count seconds: "a ninety second timer".
        case (0, _, _) where seconds < 100: return "\(words(seconds)) second"
        case (0, let m, 30): return "\(words(m)) and a half minute"
        default: return nil
        }
    }

    /// Every duration the recogniser knows, with the ways of saying it.
    public static let allOptions: [ParameterOption] = {
        var bySeconds: [Int: (title: String, forms: [String])] = [:]
        var order: [Int] = []
        func add(_ seconds: Int, _ forms: [String]) {
            if bySeconds[seconds] == nil {
                // The title, and the parts without "and" ("one hour thirty minutes").
                bySeconds[seconds] = (describe(seconds), [parts(seconds).joined(separator: " ")])
                order.append(seconds)
            }
            bySeconds[seconds]!.forms.append(contentsOf: forms)
        }
        for n in 1...60 {
            let w = SpokenNumber.words(n)
            add(n * 60, n == 1 ? ["one minute", "a minute"] : ["\(w) minutes", "\(w) minute"])
        }
        // Seconds up to ninety: beyond a minute people still say "ninety seconds".
        for n in 1...90 {
            let w = SpokenNumber.words(n)
            add(n, n == 1 ? ["one second", "a second"] : ["\(w) seconds", "\(w) second"])
        }
        add(90 * 60, ["ninety minutes", "ninety minute"])
        for n in 1...12 {
            let w = SpokenNumber.words(n)
            add(n * 3600, n == 1 ? ["one hour", "an hour", "a one hour"] : ["\(w) hours", "\(w) hour"])
            add(n * 3600 + 1800, n == 1
                ? ["an hour and a half", "one and a half hours", "one and a half hour", "one hour thirty minutes"]
                : ["\(w) and a half hours", "\(w) and a half hour", "\(w) hours and a half"])
        }
        for n in 1...30 {
            let w = SpokenNumber.words(n)
            add(n * 60 + 30, n == 1 ? ["a minute and a half", "one and a half minutes"]
                : ["\(w) and a half minutes", "\(w) and a half minute", "\(w) minutes and a half"])
        }
        // Minutes and seconds, in steps of five seconds, for the first ten minutes.
        for m in 1...10 {
            let minutes = m == 1 ? ["one minute", "a minute"] : ["\(SpokenNumber.words(m)) minutes"]
            for s in stride(from: 5, through: 55, by: 5) {
                let seconds = "\(SpokenNumber.words(s)) seconds"
                add(m * 60 + s, minutes.flatMap { ["\($0) and \(seconds)", "\($0) \(seconds)"] })
            }
        }
        add(1800, ["half an hour", "a half hour"])
        add(900, ["a quarter of an hour", "quarter of an hour", "a quarter hour"])
        for h in 1...2 {
            for m in [5, 10, 15, 20, 30, 40, 45, 50] {
                let hw = h == 1 ? "an hour" : "\(SpokenNumber.words(h)) hours"
                let alt = h == 1 ? "one hour" : "\(SpokenNumber.words(h)) hours"
                add(h * 3600 + m * 60, ["\(hw) and \(SpokenNumber.words(m)) minutes", "\(alt) and \(SpokenNumber.words(m)) minutes"])
            }
        }
        return order.map { seconds in
            let entry = bySeconds[seconds]!
            var seen = Set<String>([entry.title])
            let synonyms = entry.forms.filter { seen.insert($0).inserted }
            return ParameterOption(id: String(seconds), title: entry.title, synonyms: synonyms)
        }
    }()
}

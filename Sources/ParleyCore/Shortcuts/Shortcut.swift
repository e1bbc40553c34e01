// A person's own multi-step shortcut (docs/spec.md §6), as loaded from one YAML file.
// The file format is documented in docs/shortcuts.md; `ShortcutLoader` reads
// it and `ShortcutValidator` checks it against the installed apps.

import ParleyYAML

/// Where something was written: file, line and column (1-based); the
/// location ParleyYAML's nodes carry.
public typealias SourceLocation = YAMLLocation

/// One reason a shortcut file cannot be loaded: `FILE:LINE:COLUMN: reason`.
public struct ShortcutProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var location: SourceLocation
    public var reason: String

    public init(_ location: SourceLocation, _ reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { "\(location): \(reason)" }
}

/// A day of the week, as written in `days:` (mon ... sun). Raw values are
/// Gregorian weekday numbers (Sunday 1), as `Calendar` gives them.
public enum Weekday: Int, Sendable, Hashable, CaseIterable, Comparable {
    case sunday = 1, monday, tuesday, wednesday, thursday, friday, saturday

    /// The names accepted in files: "mon", "monday" (any case).
    public static func named(_ text: String) -> Weekday? {
        let lower = text.lowercased()
        return allCases.first { $0.fullName == lower || $0.shortName == lower }
    }

    public var shortName: String { String(fullName.prefix(3)) }
    public var fullName: String {
        ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"][rawValue - 1]
    }

    public static func < (a: Weekday, b: Weekday) -> Bool { a.rawValue < b.rawValue }
}

/// A local time of day, "07:30".
public struct TimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Parses "7:30" or "07:30" (24-hour clock); nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        self.init(hour: hour, minute: minute)
    }

    public var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }

    public static func < (a: TimeOfDay, b: TimeOfDay) -> Bool { (a.hour, a.minute) < (b.hour, b.minute) }
}

/// The edge of a board input line that fires a trigger.
public enum InputEdge: String, Sendable, Hashable, CaseIterable {
    case rising, falling
}

/// What starts a shortcut without a phrase.
public enum ShortcutTrigger: Sendable, Hashable {
    case button(ButtonGesture)
    /// Once at `time` (local) on each of `days`.
    case time(TimeOfDay, days: Set<Weekday>)
    /// A GPIO input named in the board file changing to the given edge.
    case input(name: String, edge: InputEdge)
}

/// A piece of text with `{var}` and `{var.property}` references.
public struct TextTemplate: Sendable, Hashable {
    public enum Part: Sendable, Hashable {
        case text(String)
        case variable(VariableReference)
    }
    public var parts: [Part]

    public init(parts: [Part]) { self.parts = parts }
    public init(literal: String) { parts = literal.isEmpty ? [] : [.text(literal)] }

    public var variables: [VariableReference] {
        parts.compactMap { if case .variable(let reference) = $0 { reference } else { nil } }
    }

    /// The one variable the whole text consists of ("{place}"), if so.
    public var soleVariable: VariableReference? {
        if parts.count == 1, case .variable(let reference) = parts[0] { reference } else { nil }
    }

    /// The text as written, with references in braces.
    public var source: String {
        parts.map { part in
            switch part {
            case .text(let text): text
            case .variable(let reference): "{\(reference)}"
            }
        }.joined()
    }
}

/// `{order}` or `{order.total}`, and where it was written.
public struct VariableReference: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var property: String?
    public var location: SourceLocation

    public init(name: String, property: String? = nil, location: SourceLocation) {
        self.name = name
        self.property = property
        self.location = location
    }

    public var description: String { property.map { "\(name).\($0)" } ?? name }
}

/// The value given to an intent parameter in `with:`.
public enum ParameterSource: Sendable, Hashable {
    /// A canonical value, as `performed:` lines print it (checked on load).
    case value(String)
    /// Text with variables, filled in when the action runs.
    case template(TextTemplate)
    /// Ask Each Time: `ask` (the parameter's own question) or `{ask: "..."}`.
    case ask(prompt: String?)
}

/// The kind of answer an `ask` action expects.
public enum AnswerType: String, Sendable, Hashable, CaseIterable {
    case text, number, duration
    case yesNo = "yes-no"
}

/// How an `if` compares its variable.
public enum Comparison: Sendable, Hashable {
    /// The variable is set and not empty, "no", "false" or zero.
    case isTrue
    case equals(TextTemplate)
    case notEquals(TextTemplate)
    case above(TextTemplate)
    case below(TextTemplate)
    case atLeast(TextTemplate)
    case atMost(TextTemplate)
    case contains(TextTemplate)

    /// The key written in the file.
    public var key: String {
        switch self {
        case .isTrue: ""
        case .equals: "equals"
        case .notEquals: "not-equals"
        case .above: "above"
        case .below: "below"
        case .atLeast: "at-least"
        case .atMost: "at-most"
        case .contains: "contains"
        }
    }

    public var operand: TextTemplate? {
        switch self {
        case .isTrue: nil
        case .equals(let t), .notEquals(let t), .above(let t), .below(let t), .atLeast(let t), .atMost(let t), .contains(let t): t
        }
    }

    public static let keys = ["equals", "not-equals", "above", "below", "at-least", "at-most", "contains"]
}

/// One step of a shortcut.
public indirect enum ShortcutAction: Sendable, Hashable {
    /// An app intent; `with` maps parameter names to values; its output becomes variable `as`.
    case run(app: String, intent: String, with: [String: ParameterSource], as: String?)
    case speak(TextTemplate)
    /// A question; with `options` a choice from a list.
    case ask(question: TextTemplate, as: String, type: AnswerType, options: [String]?)
    /// A choice from `options`; the chosen option becomes variable `as`.
    case choose(prompt: TextTemplate?, options: [String], as: String)
    case `if`(VariableReference, Comparison, then: [ShortcutStep], else: [ShortcutStep])
    /// `do` runs `times` times; `{index}` counts from 1 inside.
    case `repeat`(times: Int, do: [ShortcutStep])
    case wait(seconds: Double)
    case set(variable: String, to: TextTemplate)
    case led(DeviceState)
    case sound(String)
    /// Another shortcut, by name.
    case shortcut(String)

    /// The key naming the action in the file.
    public var key: String {
        switch self {
        case .run: "run"
        case .speak: "speak"
        case .ask: "ask"
        case .choose: "choose"
        case .if: "if"
        case .repeat: "repeat"
        case .wait: "wait"
        case .set: "set"
        case .led: "led"
        case .sound: "sound"
        case .shortcut: "shortcut"
        }
    }
}

/// An action and where it was written (errors at run time name it too).
public struct ShortcutStep: Sendable, Hashable {
    public var action: ShortcutAction
    public var location: SourceLocation
    /// Where each parameter of a `run` was written, for errors about its value.
    public var valueLocations: [String: SourceLocation]

    public init(_ action: ShortcutAction, at location: SourceLocation, valueLocations: [String: SourceLocation] = [:]) {
        self.action = action
        self.location = location
        self.valueLocations = valueLocations
    }
}

/// A phrase and where it was written.
public struct ShortcutPhrase: Sendable, Hashable {
    public let text: String
    public let location: SourceLocation
    /// The words as the resolver sees them (normalised once: every check and the compiler use them).
    public let words: [String]
    public init(_ text: String, at location: SourceLocation) {
        self.text = text
        self.location = location
        words = PhraseText.normalise(text)
    }
}

/// A trigger and where it was written.
public struct LocatedTrigger: Sendable, Hashable {
    public var trigger: ShortcutTrigger
    public var location: SourceLocation
    public init(_ trigger: ShortcutTrigger, at location: SourceLocation) {
        self.trigger = trigger
        self.location = location
    }
}

/// One shortcut file, parsed.
public struct Shortcut: Sendable, Hashable {
    public var name: String
    public var nameLocation: SourceLocation
    public var phrases: [ShortcutPhrase]
    public var triggers: [LocatedTrigger]
    public var actions: [ShortcutStep]
    /// The file it came from.
    public var file: String

    public init(name: String, nameLocation: SourceLocation, phrases: [ShortcutPhrase] = [], triggers: [LocatedTrigger] = [],
                actions: [ShortcutStep], file: String) {
        self.name = name
        self.nameLocation = nameLocation
        self.phrases = phrases
        self.triggers = triggers
        self.actions = actions
        self.file = file
    }

    /// Names of the shortcuts this one runs directly (in any branch).
    public var shortcutsRun: [(name: String, location: SourceLocation)] {
        var result: [(String, SourceLocation)] = []
        func visit(_ steps: [ShortcutStep]) {
            for step in steps {
                switch step.action {
                case .shortcut(let name): result.append((name, step.location))
                case .if(_, _, let then, let otherwise):
                    visit(then)
                    visit(otherwise)
                case .repeat(_, let body): visit(body)
                default: break
                }
            }
        }
        visit(actions)
        return result
    }
}

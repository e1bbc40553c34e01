import Foundation

/// A variable's value while a shortcut runs.
public enum ShortcutValue: Sendable, Hashable {
    /// An answer, a choice, a `set`, `{index}`.
    case text(String)
    /// An intent's output: its spoken result and named properties.
    case output(spoken: String, properties: [String: OutputValue])
}

/// The variables of one run, and how they read in text: numbers and
/// durations as words where the device speaks them, times as "7:30".
public struct ShortcutVariables: Sendable, Hashable {
    public private(set) var values: [String: ShortcutValue] = [:]
    let calendar: Calendar

    public init(calendar: Calendar = .current) { self.calendar = calendar }

    public subscript(name: String) -> ShortcutValue? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// The text of `{name}` or `{name.property}`; empty when it is not set
    /// (an undeclared property of an app that declares none).
    public func text(of reference: VariableReference) -> String {
        switch values[reference.name] {
        case nil: return ""
        case .text(let text)?: return reference.property == nil ? text : ""
        case .output(let spoken, let properties)?:
            guard let property = reference.property else { return spoken }
            return properties[property].map(text(of:)) ?? ""
        }
    }

    /// A template with every reference filled in.
    public func render(_ template: TextTemplate) -> String {
        template.parts.map { part in
            switch part {
            case .text(let text): text
            case .variable(let reference): text(of: reference)
            }
        }.joined()
    }

    /// A value a parameter receives: a sole `{var.property}` keeps the
    /// property's canonical form (seconds, a number), other text is rendered.
    public func canonical(_ template: TextTemplate) -> String {
        if let reference = template.soleVariable, case .output(_, let properties)? = values[reference.name],
           let property = reference.property, let value = properties[property] {
            switch value {
            case .number(let number): return number.rounded() == number ? String(Int(number)) : String(number)
            case .duration(let seconds): return String(Int(seconds.rounded()))
            case .text(let text): return text
            case .date: return text(of: reference)
            }
        }
        return render(template)
    }

    func text(of value: OutputValue) -> String {
        switch value {
        case .text(let text): return text
        case .number(let number):
            if number.rounded() == number, abs(number) < 1_000_000 { return String(Int(number)) }
            return String(format: "%.2f", number)
        case .duration(let seconds): return SpokenDuration.describe(Int(seconds.rounded()))
        case .date(let date):
            let parts = calendar.dateComponents([.hour, .minute], from: date)
            let minute = parts.minute ?? 0
            return "\(parts.hour ?? 0):\(minute < 10 ? "0" : "")\(minute)"
        }
    }

    /// Whether an `if` holds.
    public func holds(_ subject: VariableReference, _ comparison: Comparison) -> Bool {
        let value = text(of: subject).trimmingCharacters(in: .whitespaces)
        func number(_ text: String) -> Double? {
            Double(text.trimmingCharacters(in: .whitespaces)) ?? SpokenNumber.parse(text.lowercased()).map(Double.init)
        }
        func same(_ a: String, _ b: String) -> Bool {
            if let x = number(a), let y = number(b) { return x == y }
            return PhraseText.normalised(a) == PhraseText.normalised(b)
        }
        func compare(_ operand: TextTemplate, _ test: (Double, Double) -> Bool) -> Bool {
            guard let x = number(value), let y = number(render(operand)) else { return false }
            return test(x, y)
        }
        switch comparison {
        case .isTrue:
            let normal = PhraseText.normalised(value)
            return !normal.isEmpty && !["no", "false", "zero"].contains(normal) && number(value) != 0
        case .equals(let operand): return same(value, render(operand))
        case .notEquals(let operand): return !same(value, render(operand))
        case .above(let operand): return compare(operand, >)
        case .below(let operand): return compare(operand, <)
        case .atLeast(let operand): return compare(operand, >=)
        case .atMost(let operand): return compare(operand, <=)
        case .contains(let operand):
            let wanted = PhraseText.normalise(render(operand))
            let words = PhraseText.normalise(value)
            return !wanted.isEmpty && words.count >= wanted.count
                && (0...(words.count - wanted.count)).contains { Array(words[$0..<($0 + wanted.count)]) == wanted }
        }
    }
}

import Foundation

/// One run of a shortcut as a pure step machine: the program counter (a
/// stack of frames for `if`, `repeat` and `shortcut`), the variables, and
/// what was performed. The engine asks `next()` for the next instruction,
/// carries it out (speaking, asking, running an intent through the same
/// resolution, confirmation and button rules as a spoken one, waiting on its
/// monotonic clock) and reports back with `answered(_:)` or `ran(...)`.
public struct ShortcutExecution: Sendable {
    /// What the engine does next.
    public enum Instruction: Sendable, Hashable {
        case speak(String)
        case led(DeviceState)
        case sound(String)
        /// Wait this many seconds, then ask `next()` again.
        case wait(seconds: Double)
        /// Ask `question`; report the answer with `answered(_:)`.
        case ask(question: String, type: AnswerType, options: [String]?)
        /// Run an intent: `values` are given (and settled), `askEachTime`
        /// parameters are asked whatever their default (nil prompt: the
        /// parameter's own question). Report with `ran(...)`.
        case run(app: String, intent: String, values: [String: String], askEachTime: [String: String?])
        /// Every action ran.
        case finished
    }

    struct Frame: Sendable {
        var steps: [ShortcutStep]
        var index = 0
        /// For a `repeat`: the pass (from 1) and how many there are.
        var pass: Int?
        var passes = 0
        /// The shortcut whose steps these are (for nested `shortcut:` runs).
        var shortcut: String
    }

    public let shortcut: Shortcut
    /// What started it: "shortcut" (a phrase, a name, another shortcut) or "automation" (a trigger).
    public let trigger: String
    public private(set) var variables: ShortcutVariables
    /// Summaries of the intents performed so far ("order two tomato soups"), for what is said on cancel.
    public private(set) var performed: [String] = []
    private var frames: [Frame]
    /// The variable the pending `ask` or `run` stores into.
    private var pendingVariable: String?
    private let library: [String: Shortcut]

    /// `library`: the loaded shortcuts, for `shortcut:` actions.
    public init(_ shortcut: Shortcut, trigger: String, library: [Shortcut], calendar: Calendar = .current) {
        self.shortcut = shortcut
        self.trigger = trigger
        variables = ShortcutVariables(calendar: calendar)
        frames = [Frame(steps: shortcut.actions, shortcut: shortcut.name)]
        self.library = Dictionary(library.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Whether an `ask` or `run` awaits its report.
    public var isAwaitingReport: Bool { pendingVariable != nil || awaitingRun }
    private var awaitingRun = false

    /// The next instruction; built-in actions that need nothing from the
    /// engine (`set`, `if`, `repeat`, `shortcut`) are carried out here.
    public mutating func next() -> Instruction {
        while let frame = frames.last {
            guard frame.index < frame.steps.count else {
                if let pass = frame.pass, pass < frame.passes {
                    frames[frames.count - 1].pass = pass + 1
                    frames[frames.count - 1].index = 0
                    variables["index"] = .text(String(pass + 1))
                    continue
                }
                frames.removeLast()
                if frame.pass != nil {
                    // Back in an enclosing repeat, `{index}` is its pass again.
                    variables["index"] = frames.last(where: { $0.pass != nil })?.pass.map { .text(String($0)) }
                }
                continue
            }
            let step = frame.steps[frame.index]
            frames[frames.count - 1].index += 1
            switch step.action {
            case .speak(let text):
                return .speak(variables.render(text))
            case .led(let state):
                return .led(state)
            case .sound(let name):
                return .sound(name)
            case .wait(let seconds):
                return .wait(seconds: seconds)
            case .set(let name, let value):
                variables[name] = .text(variables.render(value))
            case .if(let subject, let comparison, let then, let otherwise):
                let branch = variables.holds(subject, comparison) ? then : otherwise
                if !branch.isEmpty { frames.append(Frame(steps: branch, shortcut: frame.shortcut)) }
            case .repeat(let times, let body):
                guard times > 0, !body.isEmpty else { continue }
                variables["index"] = .text("1")
                frames.append(Frame(steps: body, pass: 1, passes: times, shortcut: frame.shortcut))
            case .shortcut(let name):
                // Loops were refused on load; a shortcut missing now (removed meanwhile) is skipped.
                guard let other = library[name], !frames.contains(where: { $0.shortcut == name }) else { continue }
                frames.append(Frame(steps: other.actions, shortcut: other.name))
            case .ask(let question, let name, let type, let options):
                pendingVariable = name
                return .ask(question: variables.render(question), type: type, options: options)
            case .choose(let prompt, let options, let name):
                pendingVariable = name
                let question = prompt.map(variables.render) ?? "Which one: \(SpokenList.or(options))?"
                return .ask(question: question, type: .text, options: options)
            case .run(let app, let intent, let with, let name):
                var values: [String: String] = [:]
                var askEachTime: [String: String?] = [:]
                for (parameter, source) in with {
                    switch source {
                    case .value(let value): values[parameter] = value
                    case .template(let template): values[parameter] = variables.canonical(template)
                    case .ask(let prompt): askEachTime[parameter] = prompt
                    }
                }
                pendingVariable = name
                awaitingRun = true
                return .run(app: app, intent: intent, values: values, askEachTime: askEachTime)
            }
        }
        return .finished
    }

    /// The answer to the pending `ask` or `choose` (canonical: an option as
    /// listed, a number as digits, a duration in seconds, yes-no as "yes"/"no").
    public mutating func answered(_ answer: String) {
        if let name = pendingVariable { variables[name] = .text(answer) }
        pendingVariable = nil
    }

    /// The pending `run` was performed: its output becomes the variable,
    /// `summary` ("order two tomato soups for pickup") is remembered.
    public mutating func ran(spoken: String, output: [String: OutputValue], summary: String) {
        if let name = pendingVariable { variables[name] = .output(spoken: spoken, properties: output) }
        performed.append(summary)
        pendingVariable = nil
        awaitingRun = false
    }

    /// What is said when the shortcut stops before its end.
    public var stoppedLine: String {
        let name = shortcut.name
        guard !performed.isEmpty else { return "Stopped \(name). Nothing was done." }
        return "Stopped \(name). Already done: \(SpokenList.and(performed))."
    }
}

extension SpokenList {
    static func and(_ items: [String]) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default: return items.dropLast().joined(separator: ", ") + " and " + items.last!
        }
    }
}

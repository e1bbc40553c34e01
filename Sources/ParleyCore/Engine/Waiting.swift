import Foundation

/// What the engine is waiting for. One type for every open wait, so the
/// line, the deadline and the single re-ask are handled once.
struct Waiting: Sendable {
    enum Kind: Sendable {
        /// A parameter's value, a choice from a list, or "yes" to a guessed value.
        case question(Question)
        /// The stakes of a run, confirmed by the button (or "yes" when allowed).
        case confirmation(Run, voiceAllowed: Bool)
        /// "Your usual at this time": a press runs it, otherwise it lapses.
        case suggestion(Run)
        /// "Forget my history" awaits the button.
        case forget
        /// A shortcut's `ask:` or `choose:` (docs/shortcuts.md).
        case shortcutQuestion(FollowUpQuestion)
        /// "Did you say ...?": a command heard with low confidence, run on
        /// "yes" or a press, dropped on "no" (`hear(_:confidence:unsure:)`).
        /// With a `slot` ("Large, did I hear that right?") only that value
        /// is in doubt: "no" asks for it again and keeps the rest.
        case check(heard: String, slot: String?)
    }

    struct Question: Sendable {
        enum Subject: Sendable {
            case value(ParameterDefinition)
            case disambiguation(ParameterDefinition)
            case confirmValue(ParameterDefinition, ParameterOption)

            var definition: ParameterDefinition {
                switch self {
                case .value(let d), .disambiguation(let d), .confirmValue(let d, _): d
                }
            }
        }
        var run: Run
        var subject: Subject
        var question: FollowUpQuestion
    }

    var kind: Kind
    /// What was said to open the wait, said again on "repeat" and on the re-ask.
    var line: String
    var deadline: ParleyInstant
    /// The waiting window in seconds (for renewals and holds).
    var window: TimeInterval
    var reasked = false
    /// The follow-up model of the expected answer (for the recogniser) and its resolver.
    let model: PhraseModel
    let resolver: Resolver

    init(_ kind: Kind, line: String, window: TimeInterval, from instant: ParleyInstant) {
        self.kind = kind
        self.line = line
        self.window = window
        self.deadline = instant + window
        model = FollowUpGrammar.model(for: Self.followUp(kind, line: line))
        resolver = Resolver(model: model)
    }

    /// The follow-up question the recogniser and the resolver listen for.
    static func followUp(_ kind: Kind, line: String) -> FollowUpQuestion {
        switch kind {
        case .question(let question): question.question
        case .confirmation(_, let voiceAllowed): FollowUpQuestion(prompt: line, expectation: .confirmation(voiceAllowed: voiceAllowed))
        case .forget: FollowUpQuestion(prompt: line, expectation: .confirmation(voiceAllowed: false))
        case .shortcutQuestion(let question): question
        case .suggestion: FollowUpQuestion(prompt: line, expectation: .confirmation(voiceAllowed: false))
        case .check: FollowUpQuestion(prompt: line, expectation: .confirmation(voiceAllowed: true))
        }
    }

    var followUp: FollowUpQuestion { Self.followUp(kind, line: line) }

    /// The run the wait belongs to, if any.
    var run: Run? {
        switch kind {
        case .question(let question): question.run
        case .confirmation(let run, _), .suggestion(let run): run
        case .forget, .shortcutQuestion, .check: nil
        }
    }

    /// A suggestion lapses silently; every other wait is asked once more.
    var reasks: Bool { if case .suggestion = kind { false } else { true } }

    /// Whether a press answers it (confirmation, suggestion, forget) rather than speech.
    var awaitsButton: Bool {
        switch kind {
        case .question, .shortcutQuestion: false
        case .confirmation, .suggestion, .forget, .check: true
        }
    }

    /// The deadline started again from `instant` (an answer was heard).
    func renewed(at instant: ParleyInstant) -> Waiting {
        var copy = self
        copy.deadline = instant + window
        return copy
    }

    /// The deadline at least a full window after `instant` (the device is still speaking).
    func held(from instant: ParleyInstant) -> Waiting {
        var copy = self
        copy.deadline = max(deadline, instant + window)
        return copy
    }

    /// What the deadline passing means, and the wait after it.
    enum Lapse: Sendable { case reask(Waiting), giveUp, close }

    func lapse(at instant: ParleyInstant) -> Lapse? {
        guard instant >= deadline else { return nil }
        guard reasks else { return .close }
        if reasked { return .giveUp }
        var copy = renewed(at: instant)
        copy.reasked = true
        return .reask(copy)
    }
}

/// Where the conversation is.
enum Phase: Sendable {
    case idle
    /// A window in which a command needs no wake word (press, "hey computer").
    case pushToTalk(deadline: ParleyInstant)
    case waiting(Waiting)
    /// A run is resolving or performing; only "cancel" (or a long press) is heard.
    case busy(RunID)
}

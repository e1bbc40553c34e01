// `DeviceState` and `ButtonGesture` live in ParleyDevice (re-exported by
// Exports.swift), where ParleyHardware can use them without the engine.

/// An intent that ran, with the canonical values of its parameters.
public struct PerformedIntent: Sendable, Hashable {
    public var app: String
    public var intent: String
    public var parameters: [String: String]
    public var output: [String: OutputValue]
    public var trigger: String
    /// Performed after a press of the button confirmed it: what was heard
    /// for it is vouched for (room adaptation keeps such audio).
    public var confirmedWithButton = false

    public init(app: String, intent: String, parameters: [String: String], output: [String: OutputValue], trigger: String,
                confirmedWithButton: Bool = false) {
        self.app = app
        self.intent = intent
        self.parameters = parameters
        self.output = output
        self.trigger = trigger
        self.confirmedWithButton = confirmedWithButton
    }
}

/// What the recogniser should listen for next.
public enum ListeningMode: Sendable, Hashable {
    /// Wake phrases and commands (the full phrase model).
    case commands
    /// Commands without the wake word: the window a button press or
    /// "hey <name>" opens (docs/spec.md §3, push to talk and named wake).
    case window
    /// Answers to the open question only, no wake word needed.
    case followUp(PhraseModel)
    /// An open-text answer (a note, an address): free dictation, except
    /// what the model holds ("cancel", "repeat"), which keeps its meaning.
    case dictation(PhraseModel)
}

/// Everything the engine does that a person can perceive.
public enum EngineEvent: Sendable, Hashable {
    case spoke(String)
    case led(DeviceState)
    case performed(PerformedIntent)
    /// A sound to play.
    case sound(EngineSound)
    case listening(ListeningMode)
    /// A line for the log, never spoken.
    case log(String)
}

/// Receives the engine's events in order (speaker, LEDs, console, tests).
public protocol EngineOutputSink: Sendable {
    func emit(_ event: EngineEvent) async
}

import Foundation

/// Behaviour the device owner can configure.
public struct EngineConfiguration: Sendable {
    /// Categories whose confirmation may be given by saying "yes". Orders and
    /// payments are never among them: a voice alone never spends money.
    public var voiceConfirmableCategories: Set<IntentCategory> {
        didSet { voiceConfirmableCategories.subtract(Self.buttonOnlyCategories) }
    }
    public static let buttonOnlyCategories: Set<IntentCategory> = [.order, .payment]

    /// Seconds to wait for an answer before asking once more, then giving up.
    public var answerTimeout: TimeInterval = 8
    /// Seconds to wait for the button after a confirmation.
    public var confirmationTimeout: TimeInterval = 20
    /// Seconds a push-to-talk window or a suggestion stays open.
    public var buttonWindow: TimeInterval = 10
    /// The device's cap, in seconds, on any intent's perform (nil: none). An
    /// intent is stopped at the smaller of this and its own `timeLimit`.
    public var performTimeLimit: TimeInterval?
    /// Whether to tip the short phrase after a long conversation.
    public var tipsEnabled = true
    /// Recognitions below this confidence are ignored as not heard.
    public var minimumConfidence: Double = 0.5
    /// A press with nothing open offers the usual action for this time of day
    /// when there is one (board `when-idle: suggestion`); false: it opens a
    /// push-to-talk window only (`when-idle: push-to-talk`).
    public var suggestsOnIdlePress = true
    /// What a double press does when nothing is open.
    public var doublePress = DoublePressAction.nothing
    /// Recorded in donations as how an intent was started by speech
    /// (`.console` at `parley chat`).
    public var voiceTrigger = Trigger.voice
    /// Whether the confirmation button can be read. False when the board's
    /// GPIO chip or button line is missing: a confirmation that needs the
    /// button then says so and ends, because waiting for a press that cannot
    /// come would look like the device ignoring the person (issue 5).
    /// Categories confirmable by voice still are.
    public var buttonAvailable = true

    public init(voiceConfirmableCategories: Set<IntentCategory> = [.delete, .create, .edit, .set, .play, .get, .generic]) {
        self.voiceConfirmableCategories = voiceConfirmableCategories.subtracting(Self.buttonOnlyCategories)
    }
}

/// How much of an idle-listening utterance the command decoders are given.
/// No command is long: every development command ("computer" or "hey"
/// and a coffee order) is under 7 s of speech, under 8 s with the
/// endpointer's lead-in. Speech that runs on past that is a television or
/// people talking among themselves, and decoding it is most of what idle
/// listening costs when they do (the endpointer cuts such speech only at
/// its 15 s bound; the grammar forces it into commands that the phone-loop
/// comparison then rejects). So the decoders stop there and the utterance
/// is rejected: what they would have heard in the rest could not have made
/// it a command, since the grammar must match from the utterance's start.
///
/// `WakeGate` holds an utterance for its wake phrase as long as this, and
/// leaves speech that runs on past it undecoded when none was proposed.
public struct CommandLength: Sendable, Equatable {
    /// The longest decoder input decoded as a possible command, in seconds.
    public static let longestSeconds = 8.0

    public let limit: Int
    /// Samples admitted so far in the open utterance.
    public private(set) var admitted = 0
    /// The utterance outgrew `limit`: the decoders were stopped.
    public private(set) var exceeded = false

    public init(limit: Int = Int(CommandLength.longestSeconds * Double(PCMAudio.sampleRate))) {
        self.limit = limit
    }

    /// `limit` in seconds.
    public var limitSeconds: Double { Double(limit) / Double(PCMAudio.sampleRate) }

    /// Whether the next `count` samples go to the decoders: false from the
    /// first piece that would take the utterance past `limit` (stop the
    /// decoders then; the utterance is rejected at its end).
    public mutating func admit(_ count: Int) -> Bool {
        guard !exceeded else { return false }
        admitted += count
        exceeded = admitted > limit
        return !exceeded
    }

    /// Why such an utterance is rejected (its `CommandResult.rejection`).
    public var rejection: String {
        "longer than any command (past \(Int(limitSeconds)) s)"
    }
}

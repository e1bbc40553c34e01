// The decoder side of the listening path, in the C-free core so that
// ParleyTestKit's `ScriptedDecoder` (which tests of every module may use)
// can implement it without linking PocketSphinx. ParleySpeech's
// `ListeningDriver` drives it; its PocketSphinx decoders implement it.

/// How far the words heard so far have come through a grammar: what the
/// listening path needs to decide, at a pause, whether the person has
/// finished (phrase-complete endpointing).
public enum PhraseProgress: Sendable, Equatable {
    /// Not (yet) a whole phrase: nothing, a beginning ("a large"), or words
    /// the grammar does not have.
    case incomplete
    /// A whole phrase that the grammar can still extend ("a large latte",
    /// which "with milk" may follow).
    case extendable
    /// A whole phrase that nothing in the grammar can follow ("a large
    /// latte with milk and sugar", "yes", "the second one").
    case complete

    public var isWhole: Bool { self != .incomplete }
}

/// A decoder fed one utterance at a time while it is spoken (16 kHz mono
/// Int16): `begin`, `feed`*, any number of `phraseProgress`, then `finish`
/// or `cancel`. The streaming command decoder, the wake detector's
/// utterance path and dictation implement it; so does ParleyTestKit's
/// `ScriptedDecoder`. Use from one thread.
public protocol UtteranceDecoder<Result>: AnyObject {
    /// What an utterance decodes to (a command result, dictated text, a wake decision).
    associatedtype Result
    /// Starts an utterance (an open one is dropped).
    func begin()
    /// More of the open utterance, contiguous with the last feed.
    func feed(_ samples: [Int16])
    /// How far the words fed so far have come through the decoder's grammar.
    /// A decoder without phrases answers `.extendable` (a whole phrase that
    /// may go on: the utterance then ends at the trailing silence).
    func phraseProgress() throws -> PhraseProgress
    /// Ends the utterance and decodes it.
    func finish() throws -> Result
    /// Ends the utterance without a result.
    func cancel()
}

extension UtteranceDecoder {
    /// A whole buffered utterance: begin, one feed, finish.
    public func decode(_ samples: [Int16]) throws -> Result {
        begin()
        feed(samples)
        return try finish()
    }
}

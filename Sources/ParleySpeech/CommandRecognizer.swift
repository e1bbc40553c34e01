import Foundation
import ParleyCore

/// What the command stage heard.
public struct CommandResult: Sendable, Equatable {
    /// The words recognised.
    public var transcript: String
    /// How much better than the phone loop the command path scored, per
    /// 10 ms frame (natural log). Around 0 for real commands, strongly
    /// negative when speech was forced into the grammar.
    public var confidence: Double
    /// The phrase rule and slot values, or nil when the speech was rejected.
    public var match: PhraseMatch?
    /// Why there is no match, when there is none.
    public var rejection: String?
    /// What rejection measured (nil when rejection is off or nothing was recognised).
    public var evidence: RejectionEvidence? = nil
    /// What early rejection saw while the utterance was spoken, in order
    /// (`EarlyRejection`; empty when it was off or never looked).
    public var looks: [PartialLook] = []

    public init(transcript: String, confidence: Double, match: PhraseMatch?, rejection: String? = nil,
                evidence: RejectionEvidence? = nil) {
        self.transcript = transcript
        self.confidence = confidence
        self.match = match
        self.rejection = rejection
        self.evidence = evidence
    }
}

/// Recognises a buffered utterance against a grammar compiled from a
/// `PhraseModel`, then rejects what is not a command. Rejection compares the
/// command path's score with a free phone loop over the same audio (a
/// likelihood ratio per frame): speech that is not in the grammar fits the
/// phone loop far better than the forced grammar path, or is left over as
/// "silence" where the loop hears phones (`RejectionEvidence`,
/// `CommandScoring`, shared with `StreamingCommandDecoder`).
/// Owns one `SphinxDecoder`; use from one thread (PocketSphinx decoders are not thread-safe).
public final class CommandRecognizer {
    public let decoder: SphinxDecoder
    public private(set) var model: PhraseModel
    private var matcher: PhraseMatcher
    public let rejection: RejectionModel?
    /// Minimum `CommandResult.confidence`; below it the speech is rejected.
    public var threshold: Double
    /// Relaxes `threshold` for noisy utterances (see `RejectionPolicy`).
    public var policy = RejectionPolicy()
    /// Whether each word's lattice posterior is computed
    /// (`RejectionEvidence.WordEvidence.posterior`; nil when off). Off by
    /// default, as in the daemon: building the grammar search's lattice
    /// took 0.3 to 12 s per utterance in kitchen noise at 6 dB (60 ms median
    /// clean) on top of the answer's latency, and the shipped ask rule does
    /// not read it. `parley understand --word-posteriors on` measures it.
    public var measuresWordPosteriors = false
    private var commandSearch = "command0"
    private var grammarVersion = 0
    static let garbageSearch = "garbage"

    public init(model: PhraseModel, settings: DecoderSettings = DecoderSettings(),
                rejection: RejectionModel? = RejectionModel(), threshold: Double = -1.0) throws {
        let graph = try GrammarCompiler().graph(for: model)
        var words = graph.words
        let loop = rejection.map(GrammarCompiler.phoneLoop)
        if let loop { words.formUnion(loop.words) }
        decoder = try SphinxDecoder(settings: settings, words: words)
        self.model = model
        self.matcher = PhraseMatcher(model: model)
        self.rejection = rejection
        self.threshold = threshold
        try decoder.setGrammar(name: commandSearch, graph: graph)
        if let loop { try decoder.setGrammar(name: Self.garbageSearch, graph: loop) }
        try decoder.use(commandSearch)
    }

    /// Replaces the phrase model (apps or phrases changed). The new grammar is
    /// registered under a fresh name before the old one is dropped, so a
    /// failure leaves the previous grammar working.
    public func update(model: PhraseModel) throws {
        let graph = try GrammarCompiler().graph(for: model)
        grammarVersion += 1
        let name = "command\(grammarVersion)"
        try decoder.setGrammar(name: name, graph: graph)
        try decoder.use(name)
        decoder.removeSearch(commandSearch)
        commandSearch = name
        self.model = model
        self.matcher = PhraseMatcher(model: model)
    }

    /// The recognised words' acoustic score relative to the phone loop over
    /// the same frames, per frame, fillers left out. The wake verifier's
    /// score; the command stage uses `CommandScoring.evidence`, which also
    /// skips the searches' empty `(NULL)` segments and counts silence that
    /// hides speech.
    static func acousticRatio(_ words: [SphinxDecoder.Segment], garbage: [SphinxDecoder.Segment]) -> Double {
        guard let last = (words + garbage).map(\.endFrame).max(), last >= 0 else { return 0 }
        var perFrame = [Double](repeating: 0, count: last + 1)
        for g in garbage where g.endFrame >= g.startFrame && g.startFrame >= 0 {
            let share = g.acoustic / Double(g.endFrame - g.startFrame + 1)
            for f in g.startFrame...g.endFrame { perFrame[f] = share }
        }
        var difference = 0.0
        var frames = 0
        for w in words where !w.isFiller && w.endFrame >= w.startFrame && w.startFrame >= 0 {
            difference += w.acoustic - perFrame[w.startFrame...w.endFrame].reduce(0, +)
            frames += w.endFrame - w.startFrame + 1
        }
        return frames == 0 ? 0 : difference / Double(frames)
    }

    /// Decodes one utterance (16 kHz mono Int16) and matches it.
    public func recognize(_ samples: [Int16]) throws -> CommandResult {
        try decoder.use(commandSearch)
        guard let hyp = try decoder.decode(samples) else {
            return CommandScoring.result(nil, commandWords: [], loopWords: nil, samples: samples,
                                         threshold: threshold, policy: policy, matcher: matcher)
        }
        let commandWords = decoder.segments()
        let posteriors = measuresWordPosteriors ? decoder.wordPosteriors(commandWords) : nil
        var loopWords: [SphinxDecoder.Segment]?
        if rejection != nil {
            try decoder.use(Self.garbageSearch)
            _ = try decoder.decode(samples)
            loopWords = decoder.segments()
        }
        return CommandScoring.result(hyp, commandWords: commandWords, loopWords: loopWords, samples: samples,
                                     threshold: threshold, policy: policy, matcher: matcher, posteriors: posteriors)
    }
}

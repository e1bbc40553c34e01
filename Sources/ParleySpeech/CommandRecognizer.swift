import Foundation
import ParleyCore

/// What the command stage heard.
public struct CommandResult: Sendable, Equatable {
    /// The words recognised (garbage fillers removed).
    public var transcript: String
    /// Posterior probability of the hypothesis, 0...1 (1 when not computed).
    public var confidence: Double
    /// The phrase rule and slot values, or nil when the speech was rejected.
    public var match: PhraseMatch?
    /// Why there is no match, when there is none.
    public var rejection: String?
}

/// Recognises a buffered utterance against a grammar compiled from a
/// `PhraseModel`, then rejects what is not a command: the garbage path won,
/// the confidence is under `minimumConfidence`, or the words match no rule.
/// Owns one `SphinxDecoder`; use from one thread.
public final class CommandRecognizer {
    public let decoder: SphinxDecoder
    public private(set) var model: PhraseModel
    private var matcher: PhraseMatcher
    public var rejection: RejectionModel?
    public var minimumConfidence: Double
    private var grammarVersion = 0
    public static let commandSearch = "command"

    public init(model: PhraseModel, settings: DecoderSettings = DecoderSettings(),
                rejection: RejectionModel? = RejectionModel(), minimumConfidence: Double = 0) throws {
        var compiler = GrammarCompiler()
        let jsgf = try compiler.jsgf(for: model, garbage: rejection)
        decoder = try SphinxDecoder(settings: settings, words: compiler.words)
        self.model = model
        self.matcher = PhraseMatcher(model: model)
        self.rejection = rejection
        self.minimumConfidence = minimumConfidence
        try decoder.setGrammar(name: Self.commandSearch, jsgf: jsgf, words: compiler.words)
        try decoder.use(Self.commandSearch)
    }

    /// Replaces the phrase model (apps or phrases changed). The new grammar is
    /// registered under a fresh name and then activated, so a failure leaves
    /// the previous grammar in place.
    public func update(model: PhraseModel) throws {
        var compiler = GrammarCompiler()
        let jsgf = try compiler.jsgf(for: model, garbage: rejection)
        grammarVersion += 1
        let name = "\(Self.commandSearch)\(grammarVersion)"
        try decoder.setGrammar(name: name, jsgf: jsgf, words: compiler.words)
        try decoder.use(name)
        if grammarVersion > 1 { decoder.removeSearch("\(Self.commandSearch)\(grammarVersion - 1)") }
        self.model = model
        self.matcher = PhraseMatcher(model: model)
    }

    /// Decodes one utterance (16 kHz mono Int16) and matches it.
    public func recognize(_ samples: [Int16]) throws -> CommandResult {
        let wantPosterior = minimumConfidence > 0
        guard let hyp = try decoder.decode(samples, withPosterior: wantPosterior) else {
            return CommandResult(transcript: "", confidence: 0, match: nil, rejection: "nothing recognised")
        }
        let words = hyp.words.filter { !RejectionModel.isFiller($0) }
        let transcript = words.joined(separator: " ")
        let confidence = hyp.posterior ?? 1
        if words.count != hyp.words.count {
            return CommandResult(transcript: transcript, confidence: confidence, match: nil, rejection: "garbage path")
        }
        if confidence < minimumConfidence {
            return CommandResult(transcript: transcript, confidence: confidence, match: nil,
                                 rejection: "confidence \(confidence) below \(minimumConfidence)")
        }
        guard let match = matcher.match(words) else {
            return CommandResult(transcript: transcript, confidence: confidence, match: nil, rejection: "no rule matches")
        }
        return CommandResult(transcript: transcript, confidence: confidence, match: match, rejection: nil)
    }
}

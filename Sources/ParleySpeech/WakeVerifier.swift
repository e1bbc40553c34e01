import Foundation

/// Stage 2 of the wake detector: re-scores a keyword-spotting candidate on
/// the buffered audio around it. The window is decoded twice on the wake
/// detector's own decoder: once against a small grammar (an optional phone
/// loop for whatever speech came before, then the wake phrase), once against
/// a free phone loop. The score is the wake words' acoustic log-likelihood
/// ratio to the phone loop over the same frames, per 10 ms frame, as the
/// command stage's rejection (`CommandRecognizer.acousticRatio`). A real
/// wake word scores near 0; other speech forced into the phrase scores
/// strongly negative.
struct WakeVerifier {
    static let phraseSearch = "wake-verify"
    static let loopSearch = "wake-loop"
    /// Audio before the candidate's end that is decoded (seconds): the longest
    /// "hey <name>" plus some lead-in for the phone loop.
    static let windowSeconds = 1.6
    /// Audio after the candidate that is waited for and decoded too (seconds).
    static let tailSeconds = 0.3

    let phrases: [[String]]
    let loop = RejectionModel()

    /// Every word the two searches need in the dictionary.
    var words: Set<String> { Self.phraseGraph(phrases, loop: loop).words.union(GrammarCompiler.phoneLoop(loop).words) }

    /// Optional phone loop, one of the wake phrases, optional phone loop:
    /// the window may hold other speech before and after the phrase.
    static func phraseGraph(_ phrases: [[String]], loop: RejectionModel) -> WordGraph {
        var g = WordGraph()
        g.start = g.newState()
        g.final = g.newState()
        let keyword = g.newState()
        let keywordEnd = g.newState()
        let share = log(1 / Double(loop.phones.count)) + log(loop.phonePenalty)
        /// A loop of one or more phones from `from` to `to`, or the empty path.
        func garbage(from: Int, to: Int) {
            let loopStart = g.newState()
            let afterPhone = g.newState()
            g.arcs.append(.init(from: from, to: to, logProbability: log(0.5), word: nil))
            g.arcs.append(.init(from: from, to: loopStart, logProbability: log(0.5), word: nil))
            for phone in loop.phones {
                g.arcs.append(.init(from: loopStart, to: afterPhone, logProbability: share, word: RejectionModel.fillerWord(phone)))
            }
            g.arcs.append(.init(from: afterPhone, to: loopStart, logProbability: log(0.5), word: nil))
            g.arcs.append(.init(from: afterPhone, to: to, logProbability: log(0.5), word: nil))
        }
        garbage(from: g.start, to: keyword)
        let phraseShare = log(1 / Double(max(1, phrases.count)))
        for phrase in phrases {
            var state = keyword
            for (i, word) in phrase.enumerated() {
                let next = i == phrase.count - 1 ? keywordEnd : g.newState()
                g.arcs.append(.init(from: state, to: next, logProbability: i == 0 ? phraseShare : 0, word: word))
                state = next
            }
        }
        garbage(from: keywordEnd, to: g.final)
        return g
    }

    func register(on decoder: SphinxDecoder) throws {
        try decoder.setGrammar(name: Self.phraseSearch, graph: Self.phraseGraph(phrases, loop: loop))
        try decoder.setGrammar(name: Self.loopSearch, graph: GrammarCompiler.phoneLoop(loop))
    }

    /// The verification score of `window` (per-frame log-likelihood ratio of
    /// the wake words to the phone loop; -infinity when the phrase grammar
    /// found no wake word). Leaves the decoder between utterances, with one
    /// of the verifier's searches active.
    func score(_ window: [Int16], on decoder: SphinxDecoder) throws -> Double {
        let wakeWords = Set(phrases.joined())
        try decoder.use(Self.phraseSearch)
        _ = try decoder.decode(window)
        let keyword = decoder.segments().filter { segment in
            let base = segment.word.firstIndex(of: "(").map { String(segment.word[..<$0]) } ?? segment.word
            return wakeWords.contains(base)
        }
        guard !keyword.isEmpty else { return -.infinity }
        try decoder.use(Self.loopSearch)
        _ = try decoder.decode(window)
        return CommandRecognizer.acousticRatio(keyword, garbage: decoder.segments())
    }
}

import Foundation

/// Stage 2 of the wake detector: re-scores a keyword-spotting candidate on
/// the buffered audio around it.
///
/// The window is turned into cepstra once (`FeatureFrontEnd`) and decoded
/// twice from them on the wake detector's decoder: against a small grammar
/// (a phone loop for whatever came before, the wake phrase, a phone loop for
/// whatever follows) and against the same free phone loop alone. Both
/// decodes see exactly the same frames, normalised by the window's own
/// cepstral mean (batch CMN). The score is the log-likelihood ratio of the
/// two best paths in nats: how much better the window is explained with
/// the wake phrase in it than without. Because the garbage loops cost what
/// the free loop costs per phone, the speech around the phrase cancels out
/// and the ratio is that of the phrase against the phones it replaces, over
/// the phrase's own frames. A real wake word scores well above 0; other
/// speech forced into the phrase scores below.
///
/// A duration prior then charges a phrase the best path squeezes into fewer
/// frames than people take to say it (`minimumFramesPerPhone` per phone of
/// the shortest phrase, `shortPhrasePenalty` nats per missing frame): the
/// false alarms that survive the ratio are mostly a fragment of another word
/// ("compu-" of a longer word, a fast synthetic voice) fitted to the phrase in
/// 35-50 frames, while 78 of the 80 development takes of "computer" last 49
/// frames or more. Both values come from the cross-validation in
/// training/bin/eval-wake-cv.sh (BENCHMARKS.md, "The wake word on new voices").
final class WakeVerifier {
    static let phraseSearch = "wake-verify"
    static let loopSearch = "wake-loop"
    /// Audio before the candidate's end that is decoded (seconds): the longest
    /// "hey <name>" plus some lead-in for the phone loop.
    static let windowSeconds = 1.6
    /// Audio after the candidate that is waited for and decoded too (seconds).
    static let tailSeconds = 0.3
    /// Shortest plausible duration of the phrase, in 10 ms frames per phone
    /// of its pronunciation (7 × 8 phones = 56 frames for "computer").
    static let minimumFramesPerPhone = 7.0
    /// Nats charged per frame the phrase falls short of that duration.
    static let shortPhrasePenalty = 1.0

    let phrases: [[String]]
    let loop = RejectionModel()
    private var frontEnd: FeatureFrontEnd?
    /// The pronunciation of the name (the phrase without "hey"), for the
    /// phone evidence (set in `register`).
    private(set) var namePhones: [String] = []
    /// Frames below which the duration prior charges (set in `register`,
    /// from the phones of the shortest phrase).
    private(set) var minimumFrames = 0.0

    init(phrases: [[String]]) {
        self.phrases = phrases
    }

    /// Every word the two searches need in the dictionary.
    var words: Set<String> { Self.phraseGraph(phrases, loop: loop).words.union(GrammarCompiler.phoneLoop(loop).words) }

    /// Optional phone loop, one of the wake phrases, optional phone loop:
    /// the window may hold other speech before and after the phrase. Each
    /// garbage phone costs what a phone of the free loop
    /// (`GrammarCompiler.phoneLoop`) costs, so the two paths differ only
    /// where the phrase is.
    static func phraseGraph(_ phrases: [[String]], loop: RejectionModel) -> WordGraph {
        var g = WordGraph()
        g.start = g.newState()
        g.final = g.newState()
        let keyword = g.newState()
        let keywordEnd = g.newState()
        let share = log(1 / Double(loop.phones.count)) + log(loop.phonePenalty)
        /// A loop of any number of phones from `from` to `to`.
        func garbage(from: Int, to: Int) {
            let afterPhone = g.newState()
            g.arcs.append(.init(from: from, to: to, logProbability: 0, word: nil))
            for phone in loop.phones {
                g.arcs.append(.init(from: from, to: afterPhone, logProbability: share, word: RejectionModel.fillerWord(phone)))
            }
            g.arcs.append(.init(from: afterPhone, to: from, logProbability: 0, word: nil))
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
        frontEnd = try FeatureFrontEnd(for: decoder)
        let phones = try phrases.map { try $0.reduce(0) { $0 + (try decoder.phoneCount(of: $1)) } }.min() ?? 0
        minimumFrames = Self.minimumFramesPerPhone * Double(phones)
        namePhones = try phrases.last.map { try $0.filter { $0 != "hey" }.flatMap { try decoder.phones(of: $0) } } ?? []
    }

    /// Decodes `cepstra` with `search`, normalised by their own mean; the
    /// best path's score in nats and its words.
    private func decode(_ cepstra: [[Float]], search: String, on decoder: SphinxDecoder) throws -> (score: Double, segments: [SphinxDecoder.Segment])? {
        try decoder.use(search)
        // The library keeps live CMN for good once audio was streamed.
        decoder.cepstralMeanMode = .batch
        guard let hypothesis = try decoder.decode(cepstra: cepstra) else { return nil }
        return (decoder.pathScore(hypothesis), decoder.segments())
    }

    /// One verification: the score and where the phrase was placed, so an
    /// evaluation can study scores against the phrase's length without
    /// decoding again (training/bin/eval-wake-cv.sh caches these).
    struct Verification: Sendable, Equatable {
        /// `likelihoodRatio` minus the duration prior: what the threshold
        /// is compared with.
        var score: Double
        /// Log-likelihood ratio in nats; -infinity when the phrase grammar
        /// found no path.
        var likelihoodRatio: Double
        /// 10 ms frames the phrase's own words cover in the best path.
        var phraseFrames: Int
        /// Whether the best path holds the leading "hey".
        var withHey: Bool
        /// What else the two decodes say about the candidate.
        var evidence: WakeEvidence = .none

        static let none = Verification(score: -.infinity, likelihoodRatio: -.infinity, phraseFrames: 0, withHey: false)
    }

    /// The verification score of `window` in nats (log-likelihood ratio of
    /// the best path with the wake phrase to the best path of phones alone,
    /// less the duration prior; -infinity when the phrase grammar found no
    /// path). Leaves the decoder
    /// between utterances, with one of the verifier's searches active.
    func score(_ window: [Int16], on decoder: SphinxDecoder) throws -> Double {
        try verify(window, on: decoder).score
    }

    /// `score` with the phrase's placement in the best path.
    func verify(_ window: [Int16], on decoder: SphinxDecoder) throws -> Verification {
        guard let frontEnd else { return .none }
        let cepstra = try frontEnd.cepstra(window)
        guard !cepstra.isEmpty,
              let phrase = try decode(cepstra, search: Self.phraseSearch, on: decoder),
              let loop = try decode(cepstra, search: Self.loopSearch, on: decoder) else { return .none }
        let phraseWords = Set(phrases.joined())
        // Alternative pronunciations come back as "word(2)".
        let own = phrase.segments.filter { phraseWords.contains(String($0.word.prefix { $0 != "(" })) }
        let ratio = phrase.score - loop.score
        let frames = own.reduce(0) { $0 + $1.endFrame - $1.startFrame + 1 }
        return Verification(score: ratio - Self.durationPenalty(frames: frames, minimum: minimumFrames),
                            likelihoodRatio: ratio, phraseFrames: frames, withHey: own.contains { $0.word.hasPrefix("hey") },
                            evidence: evidence(own: own, loop: loop.segments, window: window))
    }

    /// Evidence per part of the phrase: each part's acoustic score against
    /// the free loop's over the same frames, which phones the free loop
    /// hears where the name was placed, and how far the window's speech
    /// stands above its quietest frames. Read by the evaluations
    /// (scripts/wake/second_stage.py at 2f148e6), not by the threshold; computed from
    /// the two decodes already made, it costs a pass over the window's
    /// samples per candidate (a few hundred an hour).
    private func evidence(own: [SphinxDecoder.Segment], loop: [SphinxDecoder.Segment], window: [Int16]) -> WakeEvidence {
        func isHey(_ s: SphinxDecoder.Segment) -> Bool { s.word.hasPrefix("hey") }
        /// The loop's acoustic score over frames `a...b`, each of its
        /// segments counted for the share of its frames inside.
        func loopScore(_ a: Int, _ b: Int) -> Double {
            loop.reduce(0) { sum, s in
                let overlap = min(b, s.endFrame) - max(a, s.startFrame) + 1
                guard overlap > 0 else { return sum }
                return sum + s.acoustic * Double(overlap) / Double(s.endFrame - s.startFrame + 1)
            }
        }
        func ratio(_ parts: [SphinxDecoder.Segment]) -> Double? {
            guard !parts.isEmpty else { return nil }
            return parts.reduce(0) { $0 + $1.acoustic - loopScore($1.startFrame, $1.endFrame) }
        }
        let name = own.filter { !isHey($0) }
        let nameFrames = name.reduce(0) { $0 + $1.endFrame - $1.startFrame + 1 }
        var heard: [String] = []
        if let first = name.first?.startFrame, let last = name.last?.endFrame {
            heard = loop.filter { (first...last).contains(($0.startFrame + $0.endFrame) / 2) }
                .compactMap { RejectionModel.phone(ofFiller: $0.word) }
        }
        let distance = Double(Self.editDistance(heard, namePhones)) / Double(max(1, namePhones.count))
        return WakeEvidence(nameRatio: ratio(name) ?? -.infinity, heyRatio: ratio(own.filter(isHey)), nameFrames: nameFrames,
                            loopPhones: heard.count, phoneDistance: distance, snr: Self.signalToNoise(window))
    }

    /// Levenshtein distance between two phone sequences.
    static func editDistance(_ a: [String], _ b: [String]) -> Int {
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var row = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                row[j + 1] = Swift.min(previous[j + 1] + 1, row[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = row
        }
        return previous[b.count]
    }

    /// The window's speech over its floor in dB: the 90th percentile of its
    /// 10 ms frame energies over the 10th (the detector has no endpointer of
    /// its own; 1.9 s hold both the phrase and the room around it), 0 to 60.
    static func signalToNoise(_ window: [Int16]) -> Double {
        RejectionPolicy.estimatedSNR(window, frame: 160, loudPercentile: 90)
    }

    /// The duration prior: nats charged to a phrase decoded in `frames`.
    static func durationPenalty(frames: Int, minimum: Double) -> Double {
        shortPhrasePenalty * max(0, minimum - Double(frames))
    }

    /// Both decodes of `window` as text, for investigating scores.
    func trace(_ window: [Int16], on decoder: SphinxDecoder) throws -> String {
        guard let frontEnd else { return "not registered" }
        let cepstra = try frontEnd.cepstra(window)
        var lines: [String] = []
        for search in [Self.phraseSearch, Self.loopSearch] {
            guard let result = try decode(cepstra, search: search, on: decoder) else {
                lines.append("\(search): no path")
                continue
            }
            let words = result.segments.filter { $0.word != "(NULL)" }
                .map { "\(RejectionModel.phone(ofFiller: $0.word)?.lowercased() ?? $0.word)[\($0.startFrame)-\($0.endFrame)]" }
            lines.append("\(search) \(String(format: "%.1f", result.score)): \(words.joined(separator: " "))")
        }
        lines.append("score: \(String(format: "%.1f", try score(window, on: decoder)))")
        return lines.joined(separator: "\n")
    }
}

/// What stage 2's decodes say about a wake candidate beyond its likelihood
/// ratio (issue 27: per-phone evidence for a second-stage classifier).
public struct WakeEvidence: Sendable, Equatable {
    /// The name's words' acoustic score less the free phone loop's over the
    /// same frames, in nats (-infinity when the name was not placed).
    public var nameRatio: Double
    /// The same for "hey", when the best path holds it.
    public var heyRatio: Double?
    /// 10 ms frames of the name's words.
    public var nameFrames: Int
    /// Phones the free loop decodes in the name's frames.
    public var loopPhones: Int
    /// Edit distance of those phones to the name's pronunciation, per phone
    /// of the pronunciation.
    public var phoneDistance: Double
    /// The window's speech over its floor, dB (`WakeVerifier.signalToNoise`).
    public var snr: Double

    public static let none = WakeEvidence(nameRatio: -.infinity, heyRatio: nil, nameFrames: 0, loopPhones: 0, phoneDistance: 1, snr: 0)
}

import CPocketSphinx
import Foundation

/// One recognition result.
public struct Hypothesis: Sendable, Equatable {
    /// The recognised words, lower-case, fillers removed.
    public var words: [String]
    /// Path score (log domain, library units).
    public var score: Int32
    /// Posterior probability of the hypothesis (0...1) when the search
    /// provides one, else nil.
    public var posterior: Double?
    public var transcript: String { words.joined(separator: " ") }
}

/// Owns a PocketSphinx decoder (`ps_decoder_t`, freed with `ps_free`) and the
/// searches registered on it. Not thread-safe: one decoder is driven by one
/// thread (see `DecoderThread`).
public final class SphinxDecoder {
    let ps: OpaquePointer
    public let settings: DecoderSettings
    /// Words the decoder currently knows (from the reduced dictionary plus
    /// any added later).
    private(set) var knownWords: Set<String>
    private let lexicon: Lexicon
    /// The reduced dictionary written for this decoder (nil: the full one is used).
    private let dictionaryFile: URL?
    /// The ``RoomTransform`` generation this decoder last looked at, and
    /// whether its means are transformed now.
    var roomGeneration = 0
    var roomTransformApplied = false
    /// Why the newest room transform was not applied, if it was not.
    public private(set) var roomTransformProblem: String?

    /// Creates a decoder whose dictionary holds only `words` (plus their
    /// pronunciation variants), generating pronunciations for unknown words.
    public init(settings: DecoderSettings = DecoderSettings(), words: Set<String>, lexicon: Lexicon? = nil) throws {
        parley_ps_quiet()
        self.settings = settings
        let lexicon = try lexicon ?? Lexicon.shared(path: settings.dictionary)
        self.lexicon = lexicon
        let entries = try lexicon.entries(for: words)
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-\(getpid())-\(UUID().uuidString).dict")
        try Lexicon.dictionaryText(entries).write(to: file, atomically: true, encoding: .utf8)
        dictionaryFile = file
        knownWords = words
        ps = try Self.initDecoder(settings.arguments(dictionaryPath: file.path), model: settings.acousticModel)
    }

    /// Creates a decoder for free dictation: the full dictionary
    /// (`settings.dictionary`) and the n-gram language model at
    /// `languageModel` as its default search (`-lm`).
    public init(settings: DecoderSettings, languageModel: String) throws {
        parley_ps_quiet()
        guard FileManager.default.isReadableFile(atPath: languageModel) else {
            throw SpeechError.badSetting(name: "language model", value: languageModel, expected: "a readable ARPA or binary LM file")
        }
        self.settings = settings
        lexicon = try Lexicon.shared(path: settings.dictionary)
        dictionaryFile = nil
        knownWords = []
        ps = try Self.initDecoder(settings.arguments(dictionaryPath: settings.dictionary) + ["-lm", languageModel],
                                  model: settings.acousticModel)
    }

    /// ps_init with command-line style arguments.
    private static func initDecoder(_ args: [String], model: String) throws -> OpaquePointer {
        var cArgs = args.map { strdup($0) }
        defer { cArgs.forEach { free($0) } }
        let config = try cArgs.withUnsafeMutableBufferPointer { buffer in
            try checkSphinx(parley_ps_config(Int32(buffer.count), buffer.baseAddress), "cmd_ln_parse_r",
                            "arguments: \(args.joined(separator: " "))")
        }
        defer { cmd_ln_free_r(config) }
        return try checkSphinx(ps_init(config), "ps_init", "model \(model)")
    }

    deinit {
        ps_free(ps)
        if let dictionaryFile { try? FileManager.default.removeItem(at: dictionaryFile) }
    }

    /// Makes sure every word has a pronunciation (ps_add_word for new ones).
    /// Phones in the main pronunciation of `word` (the one the decoder uses).
    func phoneCount(of word: String) throws -> Int {
        try phones(of: word).count
    }

    /// The main pronunciation of `word`, as phones.
    func phones(of word: String) throws -> [String] {
        try lexicon.pronunciations(of: word).phones.first ?? []
    }

    public func ensureWords(_ words: Set<String>) throws {
        let missing = words.subtracting(knownWords).sorted()
        guard !missing.isEmpty else { return }
        // ps_add_word takes one pronunciation per word; the first (main) one is used.
        let entries = try lexicon.entries(for: Set(missing)).filter { !$0.word.contains("(") }
        for (index, entry) in entries.enumerated() {
            let update: Int32 = index == entries.count - 1 ? 1 : 0
            try checkSphinx(ps_add_word(ps, entry.word, entry.phones.joined(separator: " "), update), "ps_add_word", entry.word)
        }
        knownWords.formUnion(missing)
    }

    /// Registers a word graph as an FSG search under `name` (fsg_model_init,
    /// fsg_model_trans_add, ps_set_fsg). The decoder retains the model.
    public func setGrammar(name: String, graph: WordGraph) throws {
        try ensureWords(graph.words)
        let lmath = ps_get_logmath(ps)
        let lw = Float(settings.languageWeight)
        let fsg = try checkSphinx(fsg_model_init(name, lmath, lw, Int32(graph.stateCount)), "fsg_model_init", name)
        defer { fsg_model_free(fsg) }
        fsg.pointee.start_state = Int32(graph.start)
        fsg.pointee.final_state = Int32(graph.final)
        var wordIDs: [String: Int32] = [:]
        for arc in graph.arcs {
            let logp = Int32(Float(logmath_log(lmath, exp(arc.logProbability))) * lw)
            if let word = arc.word {
                let wid: Int32
                if let known = wordIDs[word] { wid = known } else {
                    wid = fsg_model_word_add(fsg, word)
                    wordIDs[word] = wid
                }
                fsg_model_trans_add(fsg, Int32(arc.from), Int32(arc.to), logp, wid)
            } else {
                _ = fsg_model_null_trans_add(fsg, Int32(arc.from), Int32(arc.to), logp)
            }
        }
        _ = fsg_model_null_trans_closure(fsg, nil)
        try checkSphinx(ps_set_fsg(ps, name, fsg), "ps_set_fsg", name)
    }

    /// Registers a keyphrase search (ps_set_keyphrase).
    public func setKeyphrase(name: String, phrase: String) throws {
        try ensureWords(Set(phrase.split(separator: " ").map(String.init)))
        try checkSphinx(ps_set_keyphrase(ps, name, phrase), "ps_set_keyphrase", phrase)
    }

    /// Registers a keyword list search from "phrase /threshold/" lines (ps_set_kws).
    public func setKeywords(name: String, lines: [(phrase: String, threshold: Double)]) throws {
        var words = Set<String>()
        for line in lines { words.formUnion(line.phrase.split(separator: " ").map(String.init)) }
        try ensureWords(words)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("parley-\(UUID().uuidString).kws")
        defer { try? FileManager.default.removeItem(at: file) }
        let text = lines.map { "\($0.phrase) /\($0.threshold)/" }.joined(separator: "\n") + "\n"
        try text.write(to: file, atomically: true, encoding: .utf8)
        try checkSphinx(ps_set_kws(ps, name, file.path), "ps_set_kws", name)
    }

    /// Makes `name` the active search (ps_set_search).
    public func use(_ name: String) throws {
        if let current = ps_get_search(ps), String(cString: current) == name { return }
        try checkSphinx(ps_set_search(ps, name), "ps_set_search", name)
    }

    public func removeSearch(_ name: String) {
        _ = ps_unset_search(ps, name)
    }

    // MARK: Utterances

    public func startUtterance() throws {
        if let problem = followRoomTransform() { roomTransformProblem = problem }
        try checkSphinx(ps_start_utt(ps), "ps_start_utt")
    }

    public func process<C: Collection>(_ samples: C, fullUtterance: Bool = false) throws where C.Element == Int16 {
        let processed: Int32 = samples.withContiguousStorageIfAvailable { buffer in
            ps_process_raw(ps, buffer.baseAddress, buffer.count, 0, fullUtterance ? 1 : 0)
        } ?? Array(samples).withUnsafeBufferPointer { buffer in
            ps_process_raw(ps, buffer.baseAddress, buffer.count, 0, fullUtterance ? 1 : 0)
        }
        try checkSphinx(processed, "ps_process_raw")
    }

    public func endUtterance() throws { try checkSphinx(ps_end_utt(ps), "ps_end_utt") }

    /// The current best hypothesis (ps_get_hyp), or nil when nothing was recognised.
    public func hypothesis(withPosterior: Bool = false) -> Hypothesis? {
        var score: Int32 = 0
        guard let cString = ps_get_hyp(ps, &score) else { return nil }
        let words = String(cString: cString).split(separator: " ").map(String.init)
            .filter { !$0.hasPrefix("<") && !$0.hasPrefix("[") && !$0.hasPrefix("+") }
            .map { w in w.firstIndex(of: "(").map { String(w[..<$0]) } ?? w }
        var posterior: Double?
        if withPosterior {
            let logProb = ps_get_prob(ps)
            let logmath = ps_get_logmath(ps)
            posterior = logmath_exp(logmath, logProb)
        }
        return Hypothesis(words: words, score: score, posterior: posterior)
    }

    /// A library score (logmath units) as a natural logarithm.
    public func naturalLog(_ score: Int32) -> Double {
        logmath_log_to_ln(ps_get_logmath(ps), score)
    }

    /// One word of the current hypothesis with its frames and acoustic score
    /// (ps_seg_iter, ps_seg_frames, ps_seg_prob).
    public struct Segment: Sendable, Equatable {
        public var word: String
        public var startFrame: Int
        public var endFrame: Int
        /// Acoustic score in natural log.
        public var acoustic: Double
        public var isFiller: Bool { word.hasPrefix("<") || word.hasPrefix("[") || word.hasPrefix("+") || word == "(NULL)" }
    }

    public func segments() -> [Segment] {
        var result: [Segment] = []
        var iter = ps_seg_iter(ps)
        while let it = iter {
            var s: Int32 = 0, e: Int32 = 0, ascr: Int32 = 0, lscr: Int32 = 0, lback: Int32 = 0
            ps_seg_frames(it, &s, &e)
            _ = ps_seg_prob(it, &ascr, &lscr, &lback)
            let word = ps_seg_word(it).map { String(cString: $0) } ?? "(NULL)"
            // Acoustic scores are logmath units shifted right by 10 bits (SENSCR_SHIFT).
            result.append(Segment(word: word, startFrame: Int(s), endFrame: Int(e), acoustic: naturalLog(ascr) * 1024))
            iter = ps_seg_next(it)
        }
        return result
    }

    /// Each of `segments`' posterior probability (0...1) from the search's
    /// word lattice: the summed posterior of every lattice link carrying
    /// the same word across the segment's middle frame, that is how likely
    /// this word was said there over all the grammar paths the search kept
    /// (a competing slot value above all: "medium" where "large" won).
    /// Summed, not the best path's own link: the lattice splits one word
    /// over many start and end frames, and each link alone would look
    /// unsure. For the final result of a grammar search (the lattice and
    /// its posteriors exist once the utterance has ended, ps_get_prob);
    /// nil when there is no lattice. Fillers get nil.
    public func wordPosteriors(_ segments: [Segment]) -> [Double?]? {
        // The forward and backward passes over the lattice, with the
        // decoder's own acoustic scale (1 / -ascale, as its n-gram search
        // takes it; unscaled, acoustic scores make every posterior 0 or 1):
        // the grammar search leaves the link posteriors unset here
        // (ps_get_prob gives 0 for it).
        guard let dag = ps_get_lattice(ps) else { return nil }
        let ascale = Float(1 / cmd_ln_float_r(ps_get_config(ps), "-ascale"))
        guard ps_lattice_bestpath(dag, nil, 1, ascale) != nil else { return nil }
        _ = ps_lattice_posterior(dag, nil, ascale)
        let logmath = ps_get_logmath(ps)
        var links: [(word: String, start: Int, end: Int, posterior: Double)] = []
        var nodes = ps_latnode_iter(dag)
        while let node = nodes {
            var exits = ps_latnode_exits(ps_latnode_iter_node(node))
            while let exit = exits {
                let link = ps_latlink_iter_link(exit)
                var start: Int16 = 0
                let end = ps_latlink_times(link, &start)
                if let word = ps_latlink_baseword(dag, link) {
                    var ascr: Int32 = 0
                    let post = logmath_exp(logmath, ps_latlink_prob(dag, link, &ascr))
                    links.append((String(cString: word), Int(start), Int(end), post))
                }
                exits = ps_latlink_iter_next(exit)
            }
            nodes = ps_latnode_iter_next(node)
        }
        // The segments count frames from the decoder's first utterance, the
        // lattice from this one's start: the offset is where this
        // utterance's frames began (the segments end at its last frame).
        let offset = max(0, (segments.map(\.endFrame).max() ?? -1) + 1 - Int(ps_lattice_n_frames(dag)))
        return segments.map { segment in
            guard !segment.isFiller else { return nil }
            let word = Self.baseWord(segment.word)
            let middle = (segment.startFrame + segment.endFrame) / 2 - offset
            let sum = links.reduce(0.0) { total, link in
                link.word == word && link.start <= middle && middle <= link.end ? total + link.posterior : total
            }
            return min(1, sum)
        }
    }

    /// A dictionary word without its alternate pronunciation's "(2)".
    static func baseWord(_ word: String) -> String {
        word.firstIndex(of: "(").map { String(word[..<$0]) } ?? word
    }

    /// Decodes a whole utterance with the active search.
    public func decode(_ samples: [Int16], withPosterior: Bool = false) throws -> Hypothesis? {
        try startUtterance()
        try process(samples, fullUtterance: true)
        try endUtterance()
        return hypothesis(withPosterior: withPosterior)
    }
}

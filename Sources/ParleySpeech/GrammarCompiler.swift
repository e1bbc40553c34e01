import Foundation
import ParleyCore

/// A word graph compiled from a `PhraseModel`: states, word arcs and empty
/// arcs with probabilities. Built directly (rather than through JSGF text)
/// so Parley controls the probabilities: the sphinxbase JSGF converter
/// ignores alternative weights and mis-handles a `+` loop beside other
/// alternatives, both of which the garbage path needs.
public struct WordGraph: Sendable, Equatable {
    public struct Arc: Sendable, Equatable {
        public var from: Int
        public var to: Int
        /// Natural-log probability of taking the arc.
        public var logProbability: Double
        /// nil for an empty (null) arc.
        public var word: String?
    }
    public var stateCount = 0
    public var arcs: [Arc] = []
    public var start = 0
    public var final = 0
    public var words: Set<String> { Set(arcs.compactMap(\.word)) }

    /// Whether the graph can produce exactly `words` (empty arcs followed freely).
    public func accepts(_ words: [String]) -> Bool {
        var empty = [Int: [Int]]()
        for arc in arcs where arc.word == nil { empty[arc.from, default: []].append(arc.to) }
        func closure(_ states: Set<Int>) -> Set<Int> {
            var seen = states
            var stack = Array(states)
            while let s = stack.popLast() { for t in empty[s] ?? [] where seen.insert(t).inserted { stack.append(t) } }
            return seen
        }
        var current = closure([start])
        for word in words {
            current = closure(Set(arcs.filter { $0.word == word && current.contains($0.from) }.map(\.to)))
            if current.isEmpty { return false }
        }
        return current.contains(final)
    }

    mutating func newState() -> Int {
        stateCount += 1
        return stateCount - 1
    }
}

/// Compiles a `PhraseModel` into a `WordGraph` for the FSG search
/// (fsg_model_t, ps_set_fsg): alternatives share probability equally, and an
/// optional garbage path (`RejectionModel`) competes with every command.
public struct GrammarCompiler: Sendable {
    public var rejection: RejectionModel?

    public init(rejection: RejectionModel? = nil) { self.rejection = rejection }

    public func graph(for model: PhraseModel) throws -> WordGraph {
        guard !model.rules.isEmpty else { throw SpeechError.badGrammar("the phrase model has no rules") }
        // 1. Thompson construction of every rule (with empty arcs). A rule
        //    that cannot be said now (a slot whose vocabulary is empty, such
        //    as the items of an empty shopping list) is left out; the rest of
        //    the grammar stands. Its dead-end states go in step 2.
        var nfa = WordGraph()
        nfa.start = nfa.newState()
        nfa.final = nfa.newState()
        var sayable = 0
        for rule in model.rules {
            let entry = nfa.newState()
            guard let exit = try add(rule.body, from: entry, to: &nfa, model: model, rule: rule.id) else { continue }
            nfa.arcs.append(.init(from: nfa.start, to: entry, logProbability: 0, word: nil))
            nfa.arcs.append(.init(from: exit, to: nfa.final, logProbability: 0, word: nil))
            sayable += 1
        }
        guard sayable > 0 else {
            throw SpeechError.badGrammar("no rule of the phrase model can be said (every one has an empty slot vocabulary)")
        }
        // 2. Minimal deterministic word graph (Brzozowski): shares the common
        //    prefixes and suffixes of all templates, so the search has far
        //    fewer arcs to keep alive.
        let dfa = WordAutomaton(nfa).reversed().determinized().reversed().determinized()
        // 3. Probabilities: equal share of each state's outgoing arcs.
        var g = WordGraph()
        g.stateCount = dfa.stateCount + 1
        g.start = dfa.start
        g.final = dfa.stateCount  // one final state reached by empty arcs
        let commandShare = rejection.map { 1 - $0.garbageProbability } ?? 1
        for state in 0..<dfa.stateCount {
            let out = dfa.arcs[state]
            let exits = out.count + (dfa.accepting.contains(state) ? 1 : 0)
            var share = log(1 / Double(exits))
            if state == dfa.start { share += log(commandShare) }
            for (word, to) in out { g.arcs.append(.init(from: state, to: to, logProbability: share, word: word)) }
            if dfa.accepting.contains(state) { g.arcs.append(.init(from: state, to: g.final, logProbability: share, word: nil)) }
        }
        if let rejection {
            // start -> loop -(phone)-> after -> loop | final; each phone costs phonePenalty.
            let loop = g.newState()
            g.arcs.append(.init(from: g.start, to: loop, logProbability: log(rejection.garbageProbability), word: nil))
            let perPhone = log(1 / Double(rejection.phones.count)) + log(rejection.phonePenalty)
            let after = g.newState()
            for phone in rejection.phones {
                g.arcs.append(.init(from: loop, to: after, logProbability: perPhone, word: RejectionModel.fillerWord(phone)))
            }
            g.arcs.append(.init(from: after, to: loop, logProbability: 0, word: nil))
            g.arcs.append(.init(from: after, to: g.final, logProbability: 0, word: nil))
        }
        return g
    }

    /// A graph of the garbage loop alone: the reference any speech is scored
    /// against for rejection (a phone loop).
    public static func phoneLoop(_ rejection: RejectionModel) -> WordGraph {
        var g = WordGraph()
        g.start = g.newState()
        g.final = g.newState()
        let share = log(1 / Double(rejection.phones.count)) + log(rejection.phonePenalty)
        for phone in rejection.phones {
            g.arcs.append(.init(from: g.start, to: g.final, logProbability: share, word: RejectionModel.fillerWord(phone)))
        }
        g.arcs.append(.init(from: g.final, to: g.start, logProbability: 0, word: nil))
        return g
    }

    /// Adds `node` starting at `from`; returns its exit state, or nil when
    /// nothing can be said for it (an empty slot vocabulary, alone or in
    /// every alternative).
    private func add(_ node: PhraseNode, from: Int, to g: inout WordGraph, model: PhraseModel, rule: String) throws -> Int? {
        switch node {
        case .words(let words):
            guard !words.isEmpty else { throw SpeechError.badGrammar("\(rule): empty word list") }
            var state = from
            for word in words {
                let next = g.newState()
                g.arcs.append(.init(from: state, to: next, logProbability: 0, word: word))
                state = next
            }
            return state
        case .sequence(let nodes):
            var state = from
            for n in nodes {
                guard let next = try add(n, from: state, to: &g, model: model, rule: rule) else { return nil }
                state = next
            }
            return state
        case .choice(let nodes):
            guard !nodes.isEmpty else { throw SpeechError.badGrammar("\(rule): empty choice") }
            return try alternatives(nodes, from: from, to: &g, model: model, rule: rule)
        case .optional(let inner):
            let exit = g.newState()
            g.arcs.append(.init(from: from, to: exit, logProbability: log(0.5), word: nil))
            let entry = g.newState()
            g.arcs.append(.init(from: from, to: entry, logProbability: log(0.5), word: nil))
            // Left out when it cannot be said: only the skip remains.
            if let innerExit = try add(inner, from: entry, to: &g, model: model, rule: rule) {
                g.arcs.append(.init(from: innerExit, to: exit, logProbability: 0, word: nil))
            }
            return exit
        case .slot(let vocabulary, _):
            guard let v = model.vocabularies[vocabulary] else {
                throw SpeechError.badGrammar("\(rule): slot vocabulary '\(vocabulary)' is missing")
            }
            // Empty for now (values an app gives at run time, none yet).
            guard !v.values.isEmpty else { return nil }
            let spoken = Array(Set(v.values.map(\.spoken))).sorted { $0.joined(separator: " ") < $1.joined(separator: " ") }
            return try alternatives(spoken.map { PhraseNode.words($0) }, from: from, to: &g, model: model, rule: rule)
        }
    }

    private func alternatives(_ nodes: [PhraseNode], from: Int, to g: inout WordGraph, model: PhraseModel, rule: String) throws -> Int? {
        let exit = g.newState()
        let share = log(1 / Double(nodes.count))
        var any = false
        for n in nodes {
            let entry = g.newState()
            guard let e = try add(n, from: entry, to: &g, model: model, rule: rule) else { continue }
            g.arcs.append(.init(from: from, to: entry, logProbability: share, word: nil))
            g.arcs.append(.init(from: e, to: exit, logProbability: 0, word: nil))
            any = true
        }
        return any ? exit : nil
    }
}

/// A garbage path that competes with the commands: a loop of one-phone
/// filler "words". When the decoder prefers it, the speech was not a
/// command. `garbageProbability` is the prior of taking the garbage branch
/// and `phonePenalty` the extra cost of each garbage phone (tuned in
/// BENCHMARKS.md).
public struct RejectionModel: Sendable, Hashable {
    public var garbageProbability: Double
    public var phonePenalty: Double
    public var phones: [String]

    public init(garbageProbability: Double = 0.5, phonePenalty: Double = 1, phones: [String] = RejectionModel.defaultPhones) {
        self.garbageProbability = garbageProbability
        self.phonePenalty = phonePenalty
        self.phones = phones
    }

    public static let defaultPhones = ["AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F",
                                       "G", "HH", "IH", "IY", "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S",
                                       "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH"]

    /// Dictionary spelling of the filler word for a phone.
    public static func fillerWord(_ phone: String) -> String { fillerPrefix + phone.lowercased() }
    public static func isFiller(_ word: String) -> Bool { word.hasPrefix(fillerPrefix) }
    /// The phone a filler word stands for ("garbage_hh" → "HH"); nil for any other word.
    public static func phone(ofFiller word: String) -> String? {
        isFiller(word) ? String(word.dropFirst(fillerPrefix.count)).uppercased() : nil
    }
    private static let fillerPrefix = "garbage_"
}

/// A word automaton for determinisation and minimisation (no probabilities).
struct WordAutomaton {
    var stateCount: Int
    var start: Int
    var accepting: Set<Int>
    /// Outgoing arcs per state; deterministic after `determinized()`.
    var arcs: [[(String, Int)]]
    /// Extra start states (a reversed automaton has one per accepting state).
    var starts: Set<Int>

    /// From a graph with empty arcs: removes them by closure.
    init(_ g: WordGraph) {
        var empty = [[Int]](repeating: [], count: g.stateCount)
        var words = [[(String, Int)]](repeating: [], count: g.stateCount)
        for arc in g.arcs {
            if let w = arc.word { words[arc.from].append((w, arc.to)) } else { empty[arc.from].append(arc.to) }
        }
        func closure(_ s: Int) -> Set<Int> {
            var seen: Set<Int> = [s]
            var stack = [s]
            while let x = stack.popLast() { for y in empty[x] where seen.insert(y).inserted { stack.append(y) } }
            return seen
        }
        var arcs = [[(String, Int)]](repeating: [], count: g.stateCount)
        var accepting = Set<Int>()
        for s in 0..<g.stateCount {
            for c in closure(s) {
                arcs[s] += words[c]
                if c == g.final { accepting.insert(s) }
            }
        }
        self.init(stateCount: g.stateCount, start: g.start, accepting: accepting, arcs: arcs, starts: [g.start])
    }

    init(stateCount: Int, start: Int, accepting: Set<Int>, arcs: [[(String, Int)]], starts: Set<Int>) {
        self.stateCount = stateCount
        self.start = start
        self.accepting = accepting
        self.arcs = arcs
        self.starts = starts
    }

    /// Same language read backwards.
    func reversed() -> WordAutomaton {
        var rev = [[(String, Int)]](repeating: [], count: stateCount)
        for s in 0..<stateCount { for (w, t) in arcs[s] { rev[t].append((w, s)) } }
        return WordAutomaton(stateCount: stateCount, start: accepting.first ?? 0, accepting: starts, arcs: rev, starts: accepting)
    }

    /// Subset construction from `starts`; only reachable states survive.
    func determinized() -> WordAutomaton {
        var index: [[Int]: Int] = [:]
        var sets: [[Int]] = []
        var newArcs: [[(String, Int)]] = []
        var newAccepting = Set<Int>()
        func id(_ set: [Int]) -> Int {
            if let i = index[set] { return i }
            index[set] = sets.count
            sets.append(set)
            newArcs.append([])
            return sets.count - 1
        }
        let first = id(starts.sorted())
        var next = 0
        while next < sets.count {
            let current = sets[next]
            var byWord: [String: Set<Int>] = [:]
            for s in current {
                if accepting.contains(s) { newAccepting.insert(next) }
                for (w, t) in arcs[s] { byWord[w, default: []].insert(t) }
            }
            var out: [(String, Int)] = []
            for w in byWord.keys.sorted() { out.append((w, id(byWord[w]!.sorted()))) }
            newArcs[next] = out
            next += 1
        }
        return WordAutomaton(stateCount: sets.count, start: first, accepting: newAccepting, arcs: newArcs, starts: [first])
    }
}

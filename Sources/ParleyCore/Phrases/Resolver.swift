/// A transcript understood: which rule matched, what it starts, and the
/// canonical parameter values (fixed by the phrase or bound from slots).
public struct Resolution: Sendable, Hashable {
    public var ruleID: String
    public var target: PhraseTarget
    public var values: [String: String]
    /// The normalised words that matched (after filler words were dropped).
    public var words: [String]

    /// The app identifier for an intent target.
    public var app: String? { if case .intent(let app, _, _) = target { app } else { nil } }
    /// The intent identifier for an intent target.
    public var intent: String? { if case .intent(_, let intent, _) = target { intent } else { nil } }
}

/// The text resolver compiled from a `PhraseModel`: every rule becomes a small
/// program over word numbers; rules are indexed by the words they can start
/// with, and a depth-first matcher tries the few candidates. People's extra
/// words ("please", "can you", "for me") are dropped when the exact words do
/// not match.
public struct Resolver: Sendable {
    enum Op: Sendable {
        case word(Int32, next: Int32)
        case split(Int32, Int32)
        case slot(vocabulary: Int32, binding: Int32, next: Int32)
        case accept
    }

    /// A vocabulary as a trie over word numbers.
    struct Trie: Sendable {
        var children: [[Int32: Int32]] = [[:]]
        var value: [Int32] = [-1]

        mutating func insert(_ words: [Int32], value v: Int32) {
            var node: Int32 = 0
            for w in words {
                if let next = children[Int(node)][w] { node = next; continue }
                children.append([:]); value.append(-1)
                let next = Int32(children.count - 1)
                children[Int(node)][w] = next
                node = next
            }
            if value[Int(node)] < 0 { value[Int(node)] = v }
        }

        /// Flat edge lists, scanned linearly: faster than hashing for the
        /// handful of children a node has.
        var edgeStart: [Int32] = []
        var edgeWord: [Int32] = []
        var edgeChild: [Int32] = []

        mutating func freeze() {
            edgeStart = [0]
            edgeWord = []
            edgeChild = []
            for node in children {
                for (word, child) in node.sorted(by: { $0.key < $1.key }) {
                    edgeWord.append(word)
                    edgeChild.append(child)
                }
                edgeStart.append(Int32(edgeWord.count))
            }
        }

        @inline(__always)
        func child(_ node: Int32, _ word: Int32) -> Int32? {
            var i = Int(edgeStart[Int(node)])
            let end = Int(edgeStart[Int(node) + 1])
            while i < end {
                if edgeWord[i] == word { return edgeChild[i] }
                i += 1
            }
            return nil
        }
    }

    struct Rule: Sendable {
        var id: String
        var target: PhraseTarget
        var entry: Int32
        /// Shortest and longest word counts the rule can match: a cheap filter.
        var minLength: Int
        var maxLength: Int
        /// Words every match contains ("with" in "... with $milk"): another cheap filter.
        var required: [Int32]
    }

    /// Shortest and longest number of words a node can match.
    static func lengths(_ node: PhraseNode, _ vocabularies: [String: (min: Int, max: Int)]) -> (min: Int, max: Int) {
        switch node {
        case .words(let w): return (w.count, w.count)
        case .sequence(let nodes):
            return nodes.reduce((0, 0)) { sum, node in
                let l = lengths(node, vocabularies)
                return (sum.0 + l.min, sum.1 + l.max)
            }
        case .choice(let nodes):
            let all = nodes.map { lengths($0, vocabularies) }
            return (all.map(\.min).min() ?? 0, all.map(\.max).max() ?? 0)
        case .optional(let inner): return (0, lengths(inner, vocabularies).max)
        case .slot(let vocabulary, _):
            return vocabularies[vocabulary] ?? (1, 1)
        }
    }

    /// Words that appear in every match of a node.
    static func requiredWords(_ node: PhraseNode) -> Set<String> {
        switch node {
        case .words(let w): return Set(w)
        case .sequence(let nodes): return nodes.reduce(into: Set<String>()) { $0.formUnion(requiredWords($1)) }
        case .choice(let nodes):
            guard let first = nodes.first else { return [] }
            return nodes.dropFirst().reduce(requiredWords(first)) { $0.intersection(requiredWords($1)) }
        case .optional, .slot: return []
        }
    }

    private var dictionary: [String: Int32] = [:]
    private var program: [Op] = []
    private var rules: [Rule] = []
    private var tries: [Trie] = []
    private var canonicals: [[String]] = []
    private var bindingNames: [String] = []
    private var byFirstWord: [Int32: [Int32]] = [:]

    /// Words people add around a command, dropped when the exact words fail.
    public static let leadingFillers: [[String]] = [
        ["hey"], ["ok"], ["okay"], ["um"], ["uh"], ["so"], ["please"], ["can", "you"], ["could", "you"],
        ["would", "you"], ["will", "you"], ["would", "you", "please"], ["can", "you", "please"], ["oh"], ["well"],
    ]
    public static let anywhereFillers: [[String]] = [
        ["please"], ["for", "me"], ["thanks"], ["thank", "you"], ["um"], ["uh"], ["just"], ["now"],
    ]

    public init(model: PhraseModel) {
        var vocabularyIndex: [String: Int32] = [:]
        for name in model.vocabularies.keys.sorted() {
            let vocabulary = model.vocabularies[name]!
            var trie = Trie()
            var values: [String] = []
            for value in vocabulary.values where !value.spoken.isEmpty {
                values.append(value.canonical)
                trie.insert(value.spoken.map { wordID($0) }, value: Int32(values.count - 1))
            }
            vocabularyIndex[name] = Int32(tries.count)
            tries.append(trie)
            canonicals.append(values)
        }
        program.append(.accept)
        let vocabularyLengths = model.vocabularies.mapValues { vocabulary -> (min: Int, max: Int) in
            let counts = vocabulary.values.map(\.spoken.count).filter { $0 > 0 }
            return (counts.min() ?? 1, counts.max() ?? 1)
        }
        for rule in model.rules {
            let entry = compile(rule.body, next: 0, vocabularies: &vocabularyIndex)
            let length = Self.lengths(rule.body, vocabularyLengths)
            let required = Self.requiredWords(rule.body).map { wordID($0) }.sorted()
            rules.append(Rule(id: rule.id, target: rule.target, entry: entry, minLength: length.min, maxLength: length.max, required: required))
            for first in firstWords(entry) { byFirstWord[first, default: []].append(Int32(rules.count - 1)) }
        }
        for index in tries.indices { tries[index].freeze() }
    }

    /// Number of rules compiled.
    public var ruleCount: Int { rules.count }

    private mutating func wordID(_ word: String) -> Int32 {
        if let id = dictionary[word] { return id }
        let id = Int32(dictionary.count)
        dictionary[word] = id
        return id
    }

    private mutating func emit(_ op: Op) -> Int32 {
        program.append(op)
        return Int32(program.count - 1)
    }

    private mutating func bindingID(_ name: String) -> Int32 {
        if let index = bindingNames.firstIndex(of: name) { return Int32(index) }
        bindingNames.append(name)
        return Int32(bindingNames.count - 1)
    }

    private mutating func compile(_ node: PhraseNode, next: Int32, vocabularies: inout [String: Int32]) -> Int32 {
        switch node {
        case .words(let words):
            var entry = next
            for word in words.reversed() { entry = emit(.word(wordID(word), next: entry)) }
            return entry
        case .sequence(let nodes):
            var entry = next
            for node in nodes.reversed() { entry = compile(node, next: entry, vocabularies: &vocabularies) }
            return entry
        case .choice(let alternatives):
            let entries = alternatives.map { compile($0, next: next, vocabularies: &vocabularies) }
            guard var entry = entries.last else { return next }
            for alternative in entries.dropLast().reversed() { entry = emit(.split(alternative, entry)) }
            return entry
        case .optional(let inner):
            return emit(.split(compile(inner, next: next, vocabularies: &vocabularies), next))
        case .slot(let vocabulary, let binding):
            let index: Int32
            if let known = vocabularies[vocabulary] {
                index = known
            } else {
                // An unknown vocabulary matches nothing rather than crashing.
                index = Int32(tries.count)
                tries.append(Trie()); canonicals.append([])
                vocabularies[vocabulary] = index
            }
            return emit(.slot(vocabulary: index, binding: bindingID(binding), next: next))
        }
    }

    private func firstWords(_ entry: Int32) -> Set<Int32> {
        var result = Set<Int32>()
        var stack = [entry]
        var seen = Set<Int32>()
        while let pc = stack.popLast() {
            guard seen.insert(pc).inserted else { continue }
            switch program[Int(pc)] {
            case .word(let w, _): result.insert(w)
            case .split(let a, let b): stack.append(a); stack.append(b)
            case .slot(let v, _, let next):
                result.formUnion(tries[Int(v)].children[0].keys)
                if tries[Int(v)].value[0] >= 0 { stack.append(next) }
            case .accept: break
            }
        }
        return result
    }

    /// Resolves a transcript: the exact words first, then without filler words.
    public func resolve(_ transcript: String) -> Resolution? {
        resolve(words: PhraseText.normalise(transcript))
    }

    /// Resolves already-normalised words.
    public func resolve(words: [String]) -> Resolution? {
        guard !words.isEmpty else { return nil }
        if let exact = match(words) { return exact }
        let stripped = Self.stripFillers(words)
        if stripped != words, !stripped.isEmpty { return match(stripped) }
        return nil
    }

    /// The rule `words` belong to exactly (no filler words dropped), for
    /// word strings a grammar produced: the recogniser's matcher uses this,
    /// so speech and text agree on the rule (among rules that all match,
    /// the one binding most slots).
    public func resolveExactly(words: [String]) -> Resolution? {
        words.isEmpty ? nil : match(words)
    }

    /// Drops filler words: leading ones, then anywhere.
    public static func stripFillers(_ words: [String]) -> [String] {
        var rest = ArraySlice(words)
        var changed = true
        while changed {
            changed = false
            for filler in leadingFillers.sorted(by: { $0.count > $1.count }) where rest.starts(with: filler) {
                rest = rest.dropFirst(filler.count); changed = true; break
            }
        }
        var result: [String] = []
        var i = rest.startIndex
        outer: while i < rest.endIndex {
            for filler in anywhereFillers where rest[i...].starts(with: filler) {
                i += filler.count
                continue outer
            }
            result.append(rest[i]); i += 1
        }
        return result
    }

    private struct Frame {
        var pc: Int32
        var pos: Int32
        var depth: Int32
        var binding: Int32
        var vocabulary: Int32
        var value: Int32
    }

    private func match(_ words: [String]) -> Resolution? {
        var ids = [Int32]()
        ids.reserveCapacity(words.count)
        for word in words {
            guard let id = dictionary[word] else { return nil }
            ids.append(id)
        }
        guard let candidates = byFirstWord[ids[0]] else { return nil }
        var best: (rule: Int32, bindings: [(Int32, Int32, Int32)])?
        var stack: [Frame] = []
        var bindings: [(Int32, Int32, Int32)] = []
        stack.reserveCapacity(32)
        bindings.reserveCapacity(8)
        for ruleIndex in candidates {
            let rule = rules[Int(ruleIndex)]
            guard ids.count >= rule.minLength, ids.count <= rule.maxLength,
                  rule.required.allSatisfy({ ids.contains($0) }) else { continue }
            stack.removeAll(keepingCapacity: true)
            bindings.removeAll(keepingCapacity: true)
            stack.append(Frame(pc: rule.entry, pos: 0, depth: 0, binding: -1, vocabulary: -1, value: -1))
            var found = false
            while let frame = stack.popLast() {
                bindings.removeLast(bindings.count - Int(frame.depth))
                if frame.binding >= 0 { bindings.append((frame.binding, frame.vocabulary, frame.value)) }
                var pc = frame.pc
                var pos = frame.pos
                running: while true {
                    switch program[Int(pc)] {
                    case .word(let w, let next):
                        guard pos < ids.count, ids[Int(pos)] == w else { break running }
                        pos += 1; pc = next
                    case .split(let a, let b):
                        stack.append(Frame(pc: b, pos: pos, depth: Int32(bindings.count), binding: -1, vocabulary: -1, value: -1))
                        pc = a
                    case .slot(let v, let binding, let next):
                        var node: Int32 = 0
                        var p = pos
                        // Shorter values are pushed first so the longest is tried first.
                        while p < ids.count, let child = tries[Int(v)].child(node, ids[Int(p)]) {
                            node = child; p += 1
                            let value = tries[Int(v)].value[Int(node)]
                            if value >= 0 {
                                stack.append(Frame(pc: next, pos: p, depth: Int32(bindings.count), binding: binding, vocabulary: v, value: value))
                            }
                        }
                        break running
                    case .accept:
                        if pos == ids.count { found = true }
                        break running
                    }
                }
                if found { break }
            }
            if found, best == nil || bindings.count > best!.bindings.count {
                best = (ruleIndex, bindings)
            }
        }
        guard let best else { return nil }
        let rule = rules[Int(best.rule)]
        var values: [String: String] = [:]
        if case .intent(_, _, let fixed) = rule.target { values = fixed }
        for (binding, vocabulary, value) in best.bindings {
            values[bindingNames[Int(binding)]] = canonicals[Int(vocabulary)][Int(value)]
        }
        return Resolution(ruleID: rule.id, target: rule.target, values: values, words: words)
    }
}

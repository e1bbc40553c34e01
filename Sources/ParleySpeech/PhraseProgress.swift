import ParleyCore

// `PhraseProgress` itself is in ParleyCore (beside `UtteranceDecoder`).

/// A `WordGraph` indexed for walking word by word: each state's successors
/// per word, and each state's closure over empty arcs. Built once per
/// grammar (the listening thread asks it at every pause, so a walk costs a
/// few dictionary look-ups per word, never a scan of the arcs).
public struct PhraseProgressIndex: Sendable {
    private let start: Set<Int>
    private let final: Int
    /// Successors of each state by word, before the empty-arc closure.
    private let successors: [[String: [Int]]]
    /// States reachable over empty arcs, each state included.
    private let closures: [[Int]]

    public init(_ graph: WordGraph) {
        var successors = [[String: [Int]]](repeating: [:], count: graph.stateCount)
        var empty = [[Int]](repeating: [], count: graph.stateCount)
        for arc in graph.arcs {
            if let word = arc.word {
                successors[arc.from][word, default: []].append(arc.to)
            } else {
                empty[arc.from].append(arc.to)
            }
        }
        var closures = [[Int]](repeating: [], count: graph.stateCount)
        for state in 0..<graph.stateCount {
            var seen: Set<Int> = [state]
            var stack = [state]
            while let s = stack.popLast() {
                for t in empty[s] where seen.insert(t).inserted { stack.append(t) }
            }
            closures[state] = Array(seen)
        }
        self.successors = successors
        self.closures = closures
        self.final = graph.final
        self.start = Set(closures[graph.start])
    }

    /// Where `words` leave the grammar. Words outside the grammar (fillers
    /// of a garbage path included) make the phrase incomplete: the decision
    /// to end early is only ever taken on words the grammar can produce.
    public func progress(_ words: [String]) -> PhraseProgress {
        guard !words.isEmpty, !words.contains(where: RejectionModel.isFiller) else { return .incomplete }
        var current = start
        for word in words {
            var next = Set<Int>()
            for state in current {
                for target in successors[state][word] ?? [] { next.formUnion(closures[target]) }
            }
            guard !next.isEmpty else { return .incomplete }
            current = next
        }
        guard current.contains(final) else { return .incomplete }
        let more = current.contains { state in
            // Garbage fillers are not words a person adds to a command.
            successors[state].keys.contains { !RejectionModel.isFiller($0) }
        }
        return more ? .extendable : .complete
    }
}

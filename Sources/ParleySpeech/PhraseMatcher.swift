import ParleyCore

/// Finds which rule of a `PhraseModel` a recognised word sequence came from
/// and the slot values it carries. The recogniser only produces word strings
/// the grammar allows, so a full match always exists for its output; this
/// recovers the structure (ParleyCore's resolver does the same for typed text).
public struct PhraseMatch: Sendable, Equatable {
    public var ruleID: String
    public var target: PhraseTarget
    /// Canonical slot values keyed by parameter name (fixed values included).
    public var slots: [String: String]
}

public struct PhraseMatcher: Sendable {
    public let model: PhraseModel

    public init(model: PhraseModel) { self.model = model }

    /// The first rule that matches all of `words`, or nil.
    public func match(_ words: [String]) -> PhraseMatch? {
        for rule in model.rules {
            for (end, bindings) in matches(rule.body, words, 0) where end == words.count {
                var slots = bindings
                if case .intent(_, _, let fixed) = rule.target {
                    for (k, v) in fixed where slots[k] == nil { slots[k] = v }
                }
                return PhraseMatch(ruleID: rule.id, target: rule.target, slots: slots)
            }
        }
        return nil
    }

    private func matches(_ node: PhraseNode, _ words: [String], _ start: Int) -> [(Int, [String: String])] {
        switch node {
        case .words(let w):
            guard start + w.count <= words.count, Array(words[start..<start + w.count]) == w else { return [] }
            return [(start + w.count, [:])]
        case .sequence(let nodes):
            var states: [(Int, [String: String])] = [(start, [:])]
            for n in nodes {
                var next: [(Int, [String: String])] = []
                for (position, bindings) in states {
                    for (end, more) in matches(n, words, position) {
                        next.append((end, bindings.merging(more) { a, _ in a }))
                    }
                }
                states = next
                if states.isEmpty { return [] }
            }
            return states
        case .choice(let nodes):
            return nodes.flatMap { matches($0, words, start) }
        case .optional(let inner):
            return [(start, [:])] + matches(inner, words, start)
        case .slot(let vocabulary, let binding):
            guard let v = model.vocabularies[vocabulary] else { return [] }
            return v.values.compactMap { value in
                let w = value.spoken
                guard start + w.count <= words.count, Array(words[start..<start + w.count]) == w else { return nil }
                return (start + w.count, [binding: value.canonical])
            }
        }
    }
}

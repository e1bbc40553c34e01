import ParleyCore

/// Finds which rule of a `PhraseModel` a recognised word sequence came from
/// and the slot values it carries. The recogniser only produces word strings
/// the grammar allows, so a full match always exists for its output; this
/// recovers the structure, with the same rule choice as for typed text.
public struct PhraseMatch: Sendable, Equatable {
    public var ruleID: String
    public var target: PhraseTarget
    /// Canonical slot values keyed by parameter name (fixed values included).
    public var slots: [String: String]

    public init(ruleID: String, target: PhraseTarget, slots: [String: String]) {
        self.ruleID = ruleID
        self.target = target
        self.slots = slots
    }
}

/// ParleyCore's `Resolver` (exact words, no fillers) behind the recogniser's
/// interface: one matcher decides which rule words belong to, whether they
/// were spoken or typed.
public struct PhraseMatcher: Sendable {
    public let model: PhraseModel
    private let resolver: Resolver

    public init(model: PhraseModel) {
        self.model = model
        resolver = Resolver(model: model)
    }

    /// The rule all of `words` belong to, or nil.
    public func match(_ words: [String]) -> PhraseMatch? {
        resolver.resolveExactly(words: words).map { PhraseMatch(ruleID: $0.ruleID, target: $0.target, slots: $0.values) }
    }
}

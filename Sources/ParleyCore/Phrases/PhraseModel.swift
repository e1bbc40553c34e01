// The one model of everything the device can understand.
//
// App Shortcut phrases, parameter values and their synonyms, primary-app
// templates, custom phrases and follow-up answers are all described as
// `PhraseRule`s over a shared set of `SlotVocabulary`s. The same model is
// compiled twice: into the text resolver (ParleyCore) and into recogniser
// grammars (ParleySpeech). Keeping one source means what can be heard and
// what can be understood never diverge (the voice2json approach).

/// A node of a phrase grammar. Words are lower-case, already normalised
/// (see `PhraseText.normalise`), one word per element.
public indirect enum PhraseNode: Sendable, Hashable {
    /// A fixed run of words, e.g. ["coffee", "time"].
    case words([String])
    /// Nodes spoken one after another.
    case sequence([PhraseNode])
    /// Exactly one of the alternatives is spoken.
    case choice([PhraseNode])
    /// The node may be spoken or left out.
    case optional(PhraseNode)
    /// A value from the named slot vocabulary; `binding` names the intent
    /// parameter that receives the value's canonical form.
    case slot(vocabulary: String, binding: String)
}

/// One way of saying a slot value, and the value it stands for.
public struct SlotValue: Sendable, Hashable {
    /// The spoken words, normalised (e.g. ["a", "bit", "of", "cream"]).
    public var spoken: [String]
    /// The canonical value reported to the app (e.g. "a bit of cream" or an
    /// enum case identifier such as "clamChowder").
    public var canonical: String

    public init(spoken: [String], canonical: String) {
        self.spoken = spoken
        self.canonical = canonical
    }
}

/// A named, finite list of values: an enum's cases with synonyms, an entity
/// query's suggested values, a primary app's slot list.
public struct SlotVocabulary: Sendable, Hashable {
    public var name: String
    public var values: [SlotValue]

    public init(name: String, values: [SlotValue]) {
        self.name = name
        self.values = values
    }
}

/// What a matched phrase starts.
public enum PhraseTarget: Sendable, Hashable {
    /// An app intent, with parameter values fixed by the phrase itself
    /// (canonical values keyed by parameter name).
    case intent(app: String, intent: String, fixed: [String: String])
    /// A person's custom phrase, by its identifier.
    case customPhrase(id: String)
    /// A built-in command of the device ("what can I say", "cancel", ...).
    case builtin(PhraseCompiler.Builtin)
    /// An answer to the question being asked (follow-up grammars).
    case answer
}

/// One phrase pattern and what it starts.
public struct PhraseRule: Sendable, Hashable {
    /// Stable identifier, unique in a model, e.g. "Soup Chef/OrderSoup/0".
    public var id: String
    public var target: PhraseTarget
    public var body: PhraseNode

    public init(id: String, target: PhraseTarget, body: PhraseNode) {
        self.id = id
        self.target = target
        self.body = body
    }
}

/// The compiled source of truth for recognition and text resolution.
public struct PhraseModel: Sendable, Hashable {
    public var rules: [PhraseRule]
    public var vocabularies: [String: SlotVocabulary]

    public init(rules: [PhraseRule] = [], vocabularies: [String: SlotVocabulary] = [:]) {
        self.rules = rules
        self.vocabularies = vocabularies
    }

    /// Every word that can be spoken in this model; the recogniser needs a
    /// pronunciation for each.
    public var words: Set<String> {
        var result = Set<String>()
        func visit(_ node: PhraseNode) {
            switch node {
            case .words(let w): result.formUnion(w)
            case .sequence(let nodes), .choice(let nodes): nodes.forEach(visit)
            case .optional(let inner): visit(inner)
            case .slot(let vocabulary, _):
                for value in vocabularies[vocabulary]?.values ?? [] { result.formUnion(value.spoken) }
            }
        }
        rules.forEach { visit($0.body) }
        return result
    }
}

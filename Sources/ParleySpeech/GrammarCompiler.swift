import ParleyCore

/// Compiles a `PhraseModel` into a JSGF grammar for PocketSphinx
/// (ps_set_jsgf_string). One JSGF rule per phrase rule and per slot
/// vocabulary, so the grammar stays small however many templates share a
/// vocabulary.
public struct GrammarCompiler: Sendable {
    /// Words the grammar can produce; each needs a pronunciation.
    public private(set) var words = Set<String>()

    public init() {}

    /// The JSGF text. `garbage`, when given, adds a competing path of filler
    /// words (see `RejectionModel`) that matches anything not in the model.
    public mutating func jsgf(for model: PhraseModel, name: String = "parley", garbage: RejectionModel? = nil) throws -> String {
        guard !model.rules.isEmpty else { throw SpeechError.badGrammar("the phrase model has no rules") }
        words = []
        var lines = ["#JSGF V1.0;", "grammar \(name);"]
        var ruleNames: [String] = []
        for (index, rule) in model.rules.enumerated() {
            let ruleName = "r\(index)"
            ruleNames.append("<\(ruleName)>")
            lines.append("<\(ruleName)> = \(try expansion(rule.body, model)) ;")
        }
        for vocabulary in model.vocabularies.values.sorted(by: { $0.name < $1.name }) {
            guard !vocabulary.values.isEmpty else { continue }
            let alternatives = vocabulary.values.map { value -> String in
                words.formUnion(value.spoken)
                return value.spoken.map(Self.token).joined(separator: " ")
            }
            lines.append("<\(Self.slotRule(vocabulary.name))> = \(Set(alternatives).sorted().joined(separator: " | ")) ;")
        }
        var top = "( " + ruleNames.joined(separator: " | ") + " )"
        if let garbage {
            let filler = garbage.fillerWords
            words.formUnion(filler)
            lines.append("<garbage> = ( \(filler.joined(separator: " | ")) ) + ;")
            top = "/\(garbage.commandWeight)/ \(top) | /\(garbage.garbageWeight)/ <garbage>"
        }
        lines.insert("public <command> = \(top) ;", at: 2)
        return lines.joined(separator: "\n") + "\n"
    }

    private mutating func expansion(_ node: PhraseNode, _ model: PhraseModel) throws -> String {
        switch node {
        case .words(let w):
            guard !w.isEmpty else { throw SpeechError.badGrammar("empty word list") }
            words.formUnion(w)
            return w.map(Self.token).joined(separator: " ")
        case .sequence(let nodes):
            guard !nodes.isEmpty else { throw SpeechError.badGrammar("empty sequence") }
            return "( " + (try nodes.map { try expansion($0, model) }).joined(separator: " ") + " )"
        case .choice(let nodes):
            guard !nodes.isEmpty else { throw SpeechError.badGrammar("empty choice") }
            return "( " + (try nodes.map { try expansion($0, model) }).joined(separator: " | ") + " )"
        case .optional(let inner):
            return "[ " + (try expansion(inner, model)) + " ]"
        case .slot(let vocabulary, _):
            guard let v = model.vocabularies[vocabulary], !v.values.isEmpty else {
                throw SpeechError.badGrammar("slot vocabulary '\(vocabulary)' is missing or empty")
            }
            return "<\(Self.slotRule(vocabulary))>"
        }
    }

    static func slotRule(_ name: String) -> String {
        "slot_" + String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// JSGF tokens cannot contain grammar punctuation; words are already
    /// normalised, so this only guards against surprises.
    static func token(_ word: String) -> String {
        String(word.filter { !"<>()[]|;=*+/{}\"".contains($0) })
    }
}

/// A garbage path that competes with the commands: filler "words", each one
/// phone long, looped. When the decoder prefers it, the speech was not a
/// command. The weights set how readily it wins (tuned in BENCHMARKS.md).
public struct RejectionModel: Sendable, Hashable {
    public var commandWeight: Double
    public var garbageWeight: Double
    /// Phones used for the garbage loop.
    public var phones: [String]

    public init(commandWeight: Double = 1.0, garbageWeight: Double = 1e-10, phones: [String] = RejectionModel.defaultPhones) {
        self.commandWeight = commandWeight
        self.garbageWeight = garbageWeight
        self.phones = phones
    }

    public static let defaultPhones = ["AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F",
                                       "G", "HH", "IH", "IY", "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S",
                                       "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH"]

    /// Dictionary spelling of the filler word for a phone.
    public static func fillerWord(_ phone: String) -> String { "garbage_\(phone.lowercased())" }
    public static func isFiller(_ word: String) -> Bool { word.hasPrefix("garbage_") }

    var fillerWords: [String] { phones.map(Self.fillerWord) }

    /// The dictionary entries for the filler words.
    var pronunciations: [String: [[String]]] {
        Dictionary(uniqueKeysWithValues: phones.map { (Self.fillerWord($0), [[$0]]) })
    }
}

import ParleyCore

/// The wake policy (docs/spec.md §3), owned in one place: which wake words may or
/// must come before a command, the grammars the recogniser is given for it,
/// and how the wake words are taken off what was heard or typed. The daemon
/// builds one from its configuration; `parley say` and `parley chat` use the
/// same stripping.
public struct WakeGrammar: Sendable, Equatable {
    /// "hey" followed at once by a phrase.
    public var direct: Bool
    /// "hey <name>", alone (opens a window) or followed by a phrase.
    public var named: Bool
    /// The name without "hey" also wakes (named mode).
    public var heyOptional: Bool
    /// The device name as normalised words (["computer"]).
    public let name: [String]

    /// The rule id and target of "hey <name>" alone.
    public static let aloneRuleID = "wake.alone"
    public static let aloneTarget = PhraseTarget.builtin(.wake)
    static let hey = "hey"

    public init(name: String, direct: Bool = true, named: Bool = true, heyOptional: Bool = false) {
        self.name = Self.nameWords(name)
        self.direct = direct
        self.named = named
        self.heyOptional = heyOptional
    }

    /// The device name as words, normalised as every phrase is ("Zoë" ->
    /// ["zoe"], "Unit 2" -> ["unit", "two"]); `WakeDetector` listens for the
    /// same words.
    public static func nameWords(_ name: String) -> [String] { PhraseText.normalise(name) }

    private var nameNode: PhraseNode { .words(name) }

    /// "hey <name>" alone, as the grammar allows it.
    private var alone: PhraseNode {
        heyOptional ? .sequence([.optional(.words([Self.hey])), nameNode]) : .sequence([.words([Self.hey]), nameNode])
    }

    /// The words that may come before a command: "hey" (direct), "hey
    /// <name>" (named; the name alone too when `heyOptional`).
    public var prefix: PhraseNode {
        let hey = PhraseNode.words([Self.hey])
        switch (direct, named) {
        case (true, true): return heyOptional ? .choice([hey, alone]) : .sequence([hey, .optional(nameNode)])
        case (true, false): return hey
        default: return alone
        }
    }

    /// No conversation open: every command preceded by the wake; in named
    /// mode also the wake alone (`aloneRuleID`).
    public func commands(_ commands: PhraseModel) -> PhraseModel {
        var model = prefixed(commands, by: prefix)
        if named { model.rules.append(PhraseRule(id: Self.aloneRuleID, target: Self.aloneTarget, body: alone)) }
        return model
    }

    /// A window is open: the commands with the wake words optional.
    public func window(_ commands: PhraseModel) -> PhraseModel {
        prefixed(commands, by: .optional(prefix))
    }

    /// What may interrupt the device while it speaks: the cancel phrases,
    /// with or without the wake words.
    public var bargeIn: PhraseModel {
        let phrases = PhraseNode.choice(PhraseCompiler.cancelPhrases.map { .words(PhraseText.normalise($0)) })
        return PhraseModel(rules: [PhraseRule(
            id: "bargein.cancel", target: .builtin(PhraseCompiler.Builtin.cancel),
            body: .sequence([.optional(prefix), phrases]))])
    }

    /// What may interrupt the device while it speaks with its own voice
    /// cancelled (`speech.echo_cancel`): the cancel phrases as `bargeIn`,
    /// and any command after the wake words (never without them: the
    /// device's own words must not be taken for a command).
    public func bargeIn(commands: PhraseModel) -> PhraseModel {
        var model = prefixed(commands, by: prefix)
        model.rules.append(contentsOf: bargeIn.rules)
        return model
    }

    private func prefixed(_ commands: PhraseModel, by prefix: PhraseNode) -> PhraseModel {
        var model = commands
        model.rules = commands.rules.map { rule in
            var wrapped = rule
            wrapped.body = .sequence([prefix, rule.body])
            return wrapped
        }
        return model
    }

    /// The words without the leading wake words, as the engine expects
    /// them: "hey", then the name (after "hey", or alone when `heyOptional`).
    /// Words are compared normalised, so typed text ("Hey computer, coffee
    /// time") and recogniser output ("hey computer coffee time") are
    /// stripped alike; the words kept are returned as given.
    public func strip(_ words: [String]) -> [String] {
        let said = leadingWakeWords(words)
        let nameWords = said.name && (said.hey || heyOptional) ? name.count : 0
        return Array(words.dropFirst((said.hey ? 1 : 0) + nameWords))
    }

    /// Whether the words start with "hey" and then the name: what the
    /// command decoders must have heard for a wake detector that hears the
    /// name alone (`WakeDecoding.hearsHey` false) where "hey" is required.
    public func startsWithHeyAndName(_ words: [String]) -> Bool {
        let said = leadingWakeWords(words)
        return said.hey && said.name
    }

    /// Whether the words begin with the name (after "hey", or alone): a
    /// command said to the device by name rather than with "hey" alone.
    public func saysName(_ words: [String]) -> Bool {
        leadingWakeWords(words).name
    }

    /// Whether the words begin with "hey", and whether the name follows it
    /// (or begins them, without "hey"), compared normalised.
    private func leadingWakeWords(_ words: [String]) -> (hey: Bool, name: Bool) {
        let hey = words.first.map { PhraseText.normalised($0) == Self.hey } ?? false
        let rest = words.dropFirst(hey ? 1 : 0)
        let named = !name.isEmpty && rest.count >= name.count
            && rest.prefix(name.count).map { PhraseText.normalised($0) } == name
        return (hey, named)
    }

    /// Typed text without its leading wake words ("hey computer, coffee
    /// time" → "coffee time"); text without them is returned unchanged.
    public func strip(text: String) -> String {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        let rest = strip(words)
        return rest.count == words.count ? text : rest.joined(separator: " ")
    }
}

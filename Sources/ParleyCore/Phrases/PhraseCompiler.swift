/// Builds the `PhraseModel` from the registry: App Shortcut phrases with each
/// app name and synonym, every value of their parameter, the primary app's
/// phrases without its name and its command templates, built-in commands and
/// custom phrases. The speech module compiles this same model into grammars.
public enum PhraseCompiler {
    /// Built-in commands (targets `.builtin(command)`); raw values name their rules ("builtin/cancel").
    public enum Builtin: String, Sendable, Hashable, CaseIterable {
        case help
        case appHelp
        case cancel
        case `repeat`
        case forgetHistory
        /// The wake phrase alone ("hey computer"), matched by the listener.
        case wake
        /// "what does lunch time do?": a shortcut's actions in words.
        case shortcutHelp
        /// The volume (issue 28): always available, never needing the button.
        case volumeUp
        case volumeDown
        /// "volume seven": the level is bound to `volumeBinding`.
        case volumeSet
        case mute
        case unmute
        case volumeQuery

        /// The volume built-ins, which answer with a word or a sound and
        /// leave any open conversation as it was.
        public var isVolume: Bool {
            switch self {
            case .volumeUp, .volumeDown, .volumeSet, .mute, .unmute, .volumeQuery: true
            default: false
            }
        }
    }
    /// The binding of the level in "volume <zero...ten>" (canonical "0"..."10").
    public static let volumeBinding = "level"
    /// The binding of the shortcut in "what does <shortcut> do".
    public static let shortcutBinding = "shortcut"
    /// The binding of the app in "what can <app> do".
    public static let appBinding = "app"
    static let connectors: Set<String> = ["with", "from", "in", "on", "using", "at", "to", "by", "via"]

    public static let cancelPhrases = ["cancel", "stop", "never mind", "nevermind", "cancel that", "forget it", "stop it"]
    public static let repeatPhrases = ["repeat", "repeat that", "say that again", "say it again", "come again", "pardon"]
    /// docs/spec.md §7: deleting every donation by voice, confirmed with the button.
    static let forgetPhrases = ["forget my history", "forget everything", "delete my history", "clear my history",
                                "erase my history", "forget what i did"]
    static let helpPhrases = ["what can i say", "what can you do", "help", "what can i ask", "what do you do"]
    static let volumeUpPhrases = ["louder", "turn it up", "volume up", "a bit louder", "speak up"]
    static let volumeDownPhrases = ["quieter", "turn it down", "volume down", "a bit quieter", "softer"]
    static let mutePhrases = ["mute", "mute the volume"]
    static let unmutePhrases = ["unmute", "unmute the volume"]
    static let volumeQueryPhrases = ["what's the volume", "what is the volume", "how loud is it"]

    public static func compile(_ registry: AppRegistry, customPhrases: [CustomPhrase] = [],
                               dynamicOptions: [String: [ParameterOption]] = [:], shortcuts: [Shortcut] = []) -> PhraseModel {
        var model = PhraseModel()
        addBuiltins(to: &model, registry: registry)
        addShortcuts(shortcuts, to: &model)
        for custom in customPhrases {
            let words = PhraseText.normalise(custom.phrase)
            guard !words.isEmpty else { continue }
            let target: PhraseTarget = custom.shortcut.map { .shortcut($0) }
                ?? .intent(app: custom.app, intent: custom.intent, fixed: custom.parameters)
            model.rules.append(PhraseRule(id: "custom/\(words.joined(separator: " "))", target: target, body: .words(words)))
        }
        for app in registry.apps {
            let isPrimary = app.identifier == registry.primaryApp
            let names = PhraseNode.choice(app.allNames.map { .words(PhraseText.normalise($0)) })
            for (shortcutIndex, shortcut) in app.shortcuts.enumerated() {
                let intentID = shortcut.intent.identifier
                guard let descriptor = registry.descriptor(app: app.identifier, intent: intentID) else { continue }
                for (phraseIndex, phrase) in shortcut.phrases.enumerated() {
                    let tokens = PhraseToken.tokens(of: phrase)
                    var variants = [tokens]
                    if isPrimary, tokens.contains(.appName) { variants.append(withoutAppName(tokens)) }
                    for (variantIndex, variant) in variants.enumerated() where !variant.isEmpty {
                        let body = node(variant, names: names) { name in
                            let vocabulary = AppRegistry.vocabularyName(app: app.identifier, intent: intentID, parameter: name)
                            if model.vocabularies[vocabulary] == nil {
                                let options = descriptor.parameter(name)?.staticOptions ?? dynamicOptions[vocabulary] ?? []
                                model.vocabularies[vocabulary] = SlotVocabulary(name: vocabulary, values: slotValues(options))
                            }
                            return vocabulary
                        }
                        model.rules.append(PhraseRule(id: "\(app.identifier)/\(intentID)/\(shortcutIndex).\(phraseIndex).\(variantIndex)",
                            target: .intent(app: app.identifier, intent: intentID, fixed: [:]), body: body))
                    }
                }
            }
            guard isPrimary else { continue }
            for (index, template) in app.templates.enumerated() {
                let intentID = template.intent.identifier
                guard let descriptor = registry.descriptor(app: app.identifier, intent: intentID) else { continue }
                let parsed = try? TemplateNotation.parse(template.pattern) { list in
                    let vocabulary = AppRegistry.vocabularyName(app: app.identifier, intent: intentID, parameter: list)
                    if model.vocabularies[vocabulary] == nil {
                        model.vocabularies[vocabulary] = SlotVocabulary(name: vocabulary,
                            values: slotValues(descriptor.parameter(list)?.staticOptions ?? []))
                    }
                    return vocabulary
                }
                guard let parsed else { continue }
                model.rules.append(PhraseRule(id: "\(app.identifier)/\(intentID)/template.\(index)",
                    target: .intent(app: app.identifier, intent: intentID, fixed: [:]), body: parsed))
            }
        }
        return model
    }

    /// Every spoken form of every option, as slot values.
    public static func slotValues(_ options: [ParameterOption]) -> [SlotValue] {
        var seen = Set<[String]>()
        var values: [SlotValue] = []
        for option in options {
            for form in option.allForms {
                let words = PhraseText.normalise(form)
                if !words.isEmpty, seen.insert(words).inserted { values.append(SlotValue(spoken: words, canonical: option.id)) }
            }
        }
        return values
    }

    static func node(_ tokens: [PhraseToken], names: PhraseNode, vocabulary: (String) -> String) -> PhraseNode {
        var nodes: [PhraseNode] = []
        for token in tokens {
            switch token {
            case .word(let w): nodes.append(.words([w]))
            case .appName: nodes.append(names)
            case .parameter(let name): nodes.append(.slot(vocabulary: vocabulary(name), binding: name))
            }
        }
        return TemplateNotation.merge(nodes)
    }

    /// "order {soup} with {app}" -> "order {soup}": the name and its connector go.
    static func withoutAppName(_ tokens: [PhraseToken]) -> [PhraseToken] {
        var result: [PhraseToken] = []
        for token in tokens {
            if token == .appName {
                if case .word(let w)? = result.last, connectors.contains(w) { result.removeLast() }
                continue
            }
            result.append(token)
        }
        return result
    }

    /// Each shortcut phrase runs its shortcut; "what does <phrase or name> do"
    /// describes it. Phrases were checked on load not to clash with the rest.
    static func addShortcuts(_ shortcuts: [Shortcut], to model: inout PhraseModel) {
        guard !shortcuts.isEmpty else { return }
        var names: [SlotValue] = []
        var seen = Set<[String]>()
        for shortcut in shortcuts {
            for phrase in shortcut.phrases {
                let words = phrase.words
                guard !words.isEmpty else { continue }
                model.rules.append(PhraseRule(id: "shortcut/\(shortcut.name)/\(words.joined(separator: " "))",
                                              target: .shortcut(shortcut.name), body: .words(words)))
                if seen.insert(words).inserted { names.append(SlotValue(spoken: words, canonical: shortcut.name)) }
            }
            let nameWords = PhraseText.normalise(shortcut.name)
            if !nameWords.isEmpty, seen.insert(nameWords).inserted { names.append(SlotValue(spoken: nameWords, canonical: shortcut.name)) }
        }
        let vocabulary = "builtin.shortcuts"
        model.vocabularies[vocabulary] = SlotVocabulary(name: vocabulary, values: names)
        let slot = PhraseNode.slot(vocabulary: vocabulary, binding: shortcutBinding)
        model.rules.append(PhraseRule(id: "builtin/\(Builtin.shortcutHelp.rawValue)", target: .builtin(.shortcutHelp), body: .choice([
            .sequence([.words(["what", "does"]), slot, .words(["do"])]),
            .sequence([.words(["what", "does", "the", "shortcut"]), slot, .words(["do"])]),
            .sequence([.words(["what", "is"]), slot]),
        ])))
    }

    /// A built-in said in any of `phrases`.
    static func addBuiltin(_ name: Builtin, _ phrases: [String], to model: inout PhraseModel) {
        model.rules.append(PhraseRule(id: "builtin/\(name.rawValue)", target: .builtin(name),
            body: .choice(phrases.map { .words(PhraseText.normalise($0)) })))
    }

    /// "louder", "quieter", "volume <zero...ten>", "mute", "unmute", "what's the volume".
    static func addVolume(to model: inout PhraseModel) {
        func rule(_ name: Builtin, _ phrases: [String]) { addBuiltin(name, phrases, to: &model) }
        rule(.volumeUp, volumeUpPhrases)
        rule(.volumeDown, volumeDownPhrases)
        rule(.mute, mutePhrases)
        rule(.unmute, unmutePhrases)
        rule(.volumeQuery, volumeQueryPhrases)
        let vocabulary = "builtin.volume"
        model.vocabularies[vocabulary] = SlotVocabulary(name: vocabulary, values: Volume.levels.map {
            SlotValue(spoken: [Volume.words[$0]], canonical: String($0))
        })
        let slot = PhraseNode.slot(vocabulary: vocabulary, binding: volumeBinding)
        model.rules.append(PhraseRule(id: "builtin/\(Builtin.volumeSet.rawValue)", target: .builtin(.volumeSet), body: .choice([
            .sequence([.words(["volume"]), slot]),
            .sequence([.words(["set", "the", "volume", "to"]), slot]),
            .sequence([.words(["volume", "to"]), slot]),
        ])))
    }

    static func addBuiltins(to model: inout PhraseModel, registry: AppRegistry) {
        func rule(_ name: Builtin, _ phrases: [String]) { addBuiltin(name, phrases, to: &model) }
        rule(Builtin.cancel, cancelPhrases)
        rule(Builtin.repeat, repeatPhrases)
        rule(Builtin.help, helpPhrases)
        rule(Builtin.forgetHistory, forgetPhrases)
        addVolume(to: &model)
        let vocabulary = "builtin.apps"
        model.vocabularies[vocabulary] = SlotVocabulary(name: vocabulary, values: registry.apps.flatMap { app in
            app.allNames.map { SlotValue(spoken: PhraseText.normalise($0), canonical: app.identifier) }
        })
        let slot = PhraseNode.slot(vocabulary: vocabulary, binding: appBinding)
        model.rules.append(PhraseRule(id: "builtin/\(Builtin.appHelp.rawValue)", target: .builtin(Builtin.appHelp), body: .choice([
            .sequence([.words(["what", "can"]), slot, .words(["do"])]),
            .sequence([.words(["what", "does"]), slot, .words(["do"])]),
            .sequence([.words(["help", "with"]), slot]),
        ])))
    }
}

import ParleyCore

/// Small grammars for answers to a question (SPEC section 3): the options
/// and their synonyms, ordinals ("the first one"), numbers, yes/no,
/// "cancel" and "repeat that". Rule ids say which answer was given:
/// "option/<canonical>", "ordinal/<n>", "number/<n>", "yes", "no",
/// "cancel", "repeat".
public enum FollowUpGrammar {
    public static func model(options: [SlotValue], numbers: ClosedRange<Int>? = nil, yesNo: Bool = false) -> PhraseModel {
        var rules: [PhraseRule] = []
        func rule(_ id: String, _ body: PhraseNode) { rules.append(PhraseRule(id: id, target: .answer, body: body)) }
        let polite: PhraseNode = .optional(.choice([.words(["please"]), .words(["thanks"])]))
        for option in options where !option.spoken.isEmpty {
            rule("option/\(option.canonical)", .sequence([.optional(.words(["the"])), .words(option.spoken), polite]))
        }
        let ordinals = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
        for (i, word) in ordinals.prefix(options.count).enumerated() {
            rule("ordinal/\(i + 1)", .sequence([.words(["the", word]), .optional(.words(["one"]))]))
        }
        if let numbers {
            for n in numbers where n >= 0 && n < 1_000_000 {
                rule("number/\(n)", .words(SpokenText.words(n).split(separator: " ").map(String.init)))
            }
        }
        if yesNo {
            rule("yes", .choice([.words(["yes"]), .words(["yeah"]), .words(["yes", "please"]), .words(["sure"])]))
            rule("no", .choice([.words(["no"]), .words(["no", "thanks"]), .words(["nope"])]))
        }
        rule("cancel", .choice([.words(["cancel"]), .words(["stop"]), .words(["never", "mind"])]))
        rule("repeat", .choice([.words(["repeat", "that"]), .words(["say", "that", "again"]), .words(["what"])]))
        return PhraseModel(rules: rules)
    }
}

/// What the device expects after a question: the options and their
/// synonyms, ordinals, numbers, durations, yes/no, and always "cancel",
/// "repeat" and the volume ("louder" while a question is open changes the
/// volume and leaves the question open). Exposed as a `PhraseModel` so the recogniser listens for just
/// these answers (docs/spec.md §3) and the engine reads them with the same resolver.
public struct FollowUpQuestion: Sendable, Hashable {
    public enum Expectation: Sendable, Hashable {
        /// One of these options; `listed` of them were read aloud (ordinals refer to those).
        case options([ParameterOption], listed: [ParameterOption])
        case yesNo
        case number
        case duration
        /// Free text (the recogniser needs dictation; the engine takes the words as said).
        case text
        /// A button press, or "yes" when allowed.
        case confirmation(voiceAllowed: Bool)
    }
    public var prompt: String
    public var expectation: Expectation

    public init(prompt: String, expectation: Expectation) {
        self.prompt = prompt
        self.expectation = expectation
    }
}

public enum FollowUpGrammar {
    /// Bindings of answer rules.
    public static let option = "option", ordinal = "ordinal", yesNo = "yesNo", number = "number", duration = "duration"

    static let yesForms = ["yes", "yeah", "yep", "yes please", "sure", "right", "correct", "that's right", "ok", "okay", "do it", "go ahead", "confirm"]
    static let noForms = ["no", "nope", "no thanks", "wrong", "not that", "no it isn't", "that's wrong"]

    public static func model(for question: FollowUpQuestion) -> PhraseModel {
        var model = PhraseModel()
        func add(_ id: String, _ body: PhraseNode, target: PhraseTarget = .answer) {
            model.rules.append(PhraseRule(id: "answer/\(id)", target: target, body: body))
        }
        add("cancel", .choice(PhraseCompiler.cancelPhrases.map { .words(PhraseText.normalise($0)) }), target: .builtin(PhraseCompiler.Builtin.cancel))
        add("repeat", .choice(PhraseCompiler.repeatPhrases.map { .words(PhraseText.normalise($0)) }), target: .builtin(PhraseCompiler.Builtin.repeat))
        PhraseCompiler.addVolume(to: &model)
        func vocabulary(_ name: String, _ values: [SlotValue]) -> PhraseNode {
            model.vocabularies[name] = SlotVocabulary(name: name, values: values)
            return .slot(vocabulary: name, binding: name)
        }
        func yesNoRule() {
            let values = yesForms.map { SlotValue(spoken: PhraseText.normalise($0), canonical: "yes") }
                + noForms.map { SlotValue(spoken: PhraseText.normalise($0), canonical: "no") }
            add("yesNo", vocabulary(yesNo, values))
        }
        switch question.expectation {
        case .options(let options, let listed):
            var values = PhraseCompiler.slotValues(options)
            var seen = Set(values.map(\.spoken))
            for (option, words) in distinctiveWords(listed) {
                let forms = [words] + words.filter { !stopWords.contains($0) }.map { [$0] }
                for form in forms where !form.isEmpty && seen.insert(form).inserted {
                    values.append(SlotValue(spoken: form, canonical: option.id))
                }
            }
            let slot = vocabulary(option, values)
            add("option", .sequence([.optional(.choice([.words(["the"]), .words(["a"]), .words(["an"])])), slot, .optional(.words(["one"]))]))
            if !listed.isEmpty {
                var ordinals: [SlotValue] = []
                for n in 1...min(listed.count, 10) {
                    let word = SpokenNumber.ordinal(n)!
                    for form in [[word], ["the", word], ["the", word, "one"], [word, "one"], ["number", SpokenNumber.words(n)], ["option", SpokenNumber.words(n)]] {
                        ordinals.append(SlotValue(spoken: form, canonical: String(n)))
                    }
                }
                for form in [["last"], ["the", "last"], ["the", "last", "one"], ["last", "one"]] {
                    ordinals.append(SlotValue(spoken: form, canonical: String(listed.count)))
                }
                add("ordinal", vocabulary(ordinal, ordinals))
            }
        case .yesNo, .confirmation:
            yesNoRule()
        case .number:
            let values = (0...100).map { SlotValue(spoken: SpokenNumber.words($0).split(separator: " ").map(String.init), canonical: String($0)) }
                + [SlotValue(spoken: ["a", "dozen"], canonical: "12"), SlotValue(spoken: ["a", "couple"], canonical: "2")]
            add("number", .sequence([vocabulary(number, values), .optional(.words(["please"]))]))
        case .duration:
            add("duration", vocabulary(duration, PhraseCompiler.slotValues(SpokenDuration.allOptions)))
        case .text:
            break
        }
        return model
    }

    static let stopWords: Set<String> = ["the", "a", "an", "of", "and", "with", "for", "on", "in", "at", "to", "my"]

    /// The words of each option that tell it apart from the others: words
    /// shared by every option are dropped ("beef chili", "veggie chili" ->
    /// "beef", "veggie"). An option keeps all its words when nothing would remain.
    public static func distinctiveWords(_ options: [ParameterOption]) -> [(ParameterOption, [String])] {
        let wordLists = options.map { PhraseText.normalise($0.title) }
        guard options.count > 1 else { return zip(options, wordLists).map { ($0, $1) } }
        let shared = wordLists.dropFirst().reduce(Set(wordLists[0])) { $0.intersection($1) }
        return zip(options, wordLists).map { option, words in
            let distinct = words.filter { !shared.contains($0) }
            return (option, distinct.isEmpty ? words : distinct)
        }
    }
}

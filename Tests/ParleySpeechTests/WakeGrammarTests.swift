import ParleyCore
import Testing
@testable import ParleySpeech

/// One owner of the wake words, one matcher for which rule words belong to.
@Suite struct WakeGrammarTests {
    @Test func typedAndRecognisedWakeWordsAreStrippedAlike() {
        let wake = WakeGrammar(name: "Kitchen Helper")
        #expect(wake.name == ["kitchen", "helper"])
        #expect(wake.strip(text: "Hey kitchen helper, coffee time") == "coffee time")
        #expect(wake.strip(text: "hey, coffee time") == "coffee time")
        #expect(wake.strip(["hey", "kitchen", "helper", "coffee", "time"]) == ["coffee", "time"])
        #expect(wake.strip(text: "coffee time") == "coffee time", "no wake words: unchanged")
        // The name alone is a wake only when the grammar allows it.
        #expect(wake.strip(text: "kitchen helper coffee time") == "kitchen helper coffee time")
        let heyOptional = WakeGrammar(name: "computer", heyOptional: true)
        #expect(heyOptional.strip(["computer", "coffee", "time"]) == ["coffee", "time"])
    }

    /// What the listener asks of the command decoders when the wake
    /// detector hears the name alone and "hey" is required.
    @Test func heyThenTheNameIsRecognisedAtTheStartOnly() {
        let wake = WakeGrammar(name: "Kitchen Helper")
        #expect(wake.startsWithHeyAndName(["hey", "kitchen", "helper"]))
        #expect(wake.startsWithHeyAndName(["Hey", "Kitchen", "helper", "coffee", "time"]))
        #expect(!wake.startsWithHeyAndName(["kitchen", "helper"]), "no hey")
        #expect(!wake.startsWithHeyAndName(["hey", "kitchen"]), "half the name")
        #expect(!wake.startsWithHeyAndName(["coffee", "hey", "kitchen", "helper"]), "not at the start")
        #expect(!wake.startsWithHeyAndName([]))
    }

    /// A command said by name (`ListeningOutcome.unaddressed` asks): the
    /// name first, after "hey" or alone; "hey" alone is not the name.
    @Test func theNameIsSaidAfterHeyOrAlone() {
        let wake = WakeGrammar(name: "Kitchen Helper")
        #expect(wake.saysName(["hey", "Kitchen", "helper", "mute"]))
        #expect(wake.saysName(["kitchen", "helper", "mute"]))
        #expect(!wake.saysName(["hey", "mute"]))
        #expect(!wake.saysName(["hey", "kitchen", "mute"]), "half the name")
        #expect(!wake.saysName(["mute", "kitchen", "helper"]), "not at the start")
        #expect(!wake.saysName([]))
    }

    @Test func theWakeAloneIsARuleOnlyInNamedMode() {
        let commands = PhraseModel(rules: [
            PhraseRule(id: "coffee", target: .intent(app: "Coffee", intent: "brew", fixed: [:]), body: .words(["coffee", "time"])),
        ])
        let named = PhraseMatcher(model: WakeGrammar(name: "computer").commands(commands))
        #expect(named.match(["hey", "computer"])?.ruleID == WakeGrammar.aloneRuleID)
        let direct = PhraseMatcher(model: WakeGrammar(name: "computer", named: false).commands(commands))
        #expect(direct.match(["hey", "computer"]) == nil)
        #expect(direct.match(["hey", "coffee", "time"])?.ruleID == "coffee")
    }

    /// Two rules take the same words; the recogniser's matcher and the
    /// engine's resolver pick the same one (the one binding more slots),
    /// whichever comes first in the model.
    @Test func speechAndTextPickTheSameRule() {
        let size = SlotVocabulary(name: "size", values: [SlotValue(spoken: ["large"], canonical: "large")])
        let plain = PhraseRule(id: "plain", target: .intent(app: "Coffee", intent: "brew", fixed: [:]),
                               body: .words(["a", "large", "coffee"]))
        let sized = PhraseRule(id: "sized", target: .intent(app: "Coffee", intent: "brew", fixed: [:]),
                               body: .sequence([.words(["a"]), .slot(vocabulary: "size", binding: "size"), .words(["coffee"])]))
        for rules in [[plain, sized], [sized, plain]] {
            let model = PhraseModel(rules: rules, vocabularies: ["size": size])
            let words = ["a", "large", "coffee"]
            let spoken = PhraseMatcher(model: model).match(words)
            let typed = Resolver(model: model).resolve(words: words)
            #expect(spoken?.ruleID == "sized")
            #expect(spoken?.ruleID == typed?.ruleID)
            #expect(spoken?.slots == ["size": "large"])
        }
    }
}

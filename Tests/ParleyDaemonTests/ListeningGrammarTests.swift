import ParleyConfiguration
import ParleyCore
import ParleySpeech
import Testing

@testable import ParleyDaemon

/// The grammars the listening pipeline gives the recogniser, by wake setting.
@Suite struct ListeningGrammarTests {
    static let commands = PhraseModel(rules: [
        PhraseRule(id: "coffee", target: .intent(app: "CoffeeMaker", intent: "orderDrink", fixed: [:]), body: .words(["coffee", "time"])),
    ])

    func ruleID(_ model: PhraseModel, _ text: String) -> String? {
        PhraseMatcher(model: model).match(text.split(separator: " ").map(String.init))?.ruleID
    }

    @Test func directAndNamedWakeWithHeyRequired() {
        let model = ParleyConfig.Wake().grammar.commands(Self.commands)
        #expect(ruleID(model, "hey coffee time") == "coffee")
        #expect(ruleID(model, "hey computer coffee time") == "coffee")
        #expect(ruleID(model, "coffee time") == nil)
        #expect(ruleID(model, "hey computer") == WakeGrammar.aloneRuleID)
        #expect(ruleID(model, "computer") == nil)
        #expect(ruleID(model, "computer coffee time") == nil)
    }

    @Test func heyOptionalLetsTheNameAloneWake() {
        var wake = ParleyConfig.Wake()
        wake.heyOptional = true
        let model = wake.grammar.commands(Self.commands)
        #expect(ruleID(model, "computer") == WakeGrammar.aloneRuleID)
        #expect(ruleID(model, "computer coffee time") == "coffee")
        #expect(ruleID(model, "hey coffee time") == "coffee")
        #expect(ruleID(model, "coffee time") == nil)
    }

    @Test func namedOnlyNeedsTheName() {
        var wake = ParleyConfig.Wake()
        wake.direct = false
        let model = wake.grammar.commands(Self.commands)
        #expect(ruleID(model, "hey coffee time") == nil)
        #expect(ruleID(model, "hey computer coffee time") == "coffee")
        var direct = ParleyConfig.Wake()
        direct.named = false
        let directModel = direct.grammar.commands(Self.commands)
        #expect(ruleID(directModel, "hey coffee time") == "coffee")
        #expect(ruleID(directModel, "hey computer") == nil)
    }

    @Test func aWindowTakesCommandsWithOrWithoutTheWakeWords() {
        let model = ParleyConfig.Wake().grammar.window(Self.commands)
        #expect(ruleID(model, "coffee time") == "coffee")
        #expect(ruleID(model, "hey computer coffee time") == "coffee")
        #expect(ParleyConfig.Wake().grammar.strip(["hey", "computer", "coffee", "time"]) == ["coffee", "time"])
    }

    @Test func whileSpeakingOnlyCancelPhrasesAreHeard() {
        let model = ParleyConfig.Wake().grammar.bargeIn
        let matcher = PhraseMatcher(model: model)
        #expect(matcher.match(["stop"])?.target == .builtin(PhraseCompiler.Builtin.cancel))
        #expect(matcher.match(["hey", "computer", "never", "mind"])?.target == .builtin(PhraseCompiler.Builtin.cancel))
        #expect(matcher.match(["coffee", "time"]) == nil)
        #expect(!model.words.contains("coffee"))
    }

    @Test func sensitivityMovesTheRejectionThreshold() {
        #expect(ListeningPipeline.rejectionThreshold(sensitivity: 0.5) == -1.0)
        let strict = ListeningPipeline.rejectionThreshold(sensitivity: 0)
        let lenient = ListeningPipeline.rejectionThreshold(sensitivity: 1)
        #expect(strict > -1.0 && lenient < -1.0)
        #expect(ListeningPipeline.rejectionThreshold(sensitivity: 7) == lenient)  // clamped
    }
}

import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

@Suite struct PhraseModelTests {
    let registry: AppRegistry

    init() throws {
        registry = try AppRegistry(apps: BundledApps.all, primaryApp: "Coffee Maker")
    }
    var model: PhraseModel { PhraseCompiler.compile(registry) }
    var resolver: Resolver { Resolver(model: model) }

    @Test func everyShortcutPhraseValueAndSynonymIsInTheModel() {
        let words = model.words
        for app in BundledApps.all {
            for name in app.allNames { #expect(Set(PhraseText.normalise(name)).isSubset(of: words), "\(name)") }
            for shortcut in app.shortcuts {
                let descriptor = registry.descriptor(app: app.identifier, intent: shortcut.intent.identifier)!
                for phrase in shortcut.phrases {
                    for token in PhraseToken.tokens(of: phrase) {
                        switch token {
                        case .word(let w): #expect(words.contains(w), "\(w) of '\(phrase)'")
                        case .appName: break
                        case .parameter(let p):
                            for option in descriptor.parameter(p)?.staticOptions ?? [] {
                                for form in option.allForms { #expect(Set(PhraseText.normalise(form)).isSubset(of: words), "\(form)") }
                            }
                        }
                    }
                }
            }
        }
        for (_, values) in CoffeeGrammar.slots {
            for value in values { #expect(Set(PhraseText.normalise(value)).isSubset(of: words), "\(value)") }
        }
    }

    @Test func templatesAreCompiledOnlyForThePrimaryApp() throws {
        let withPrimary = model.rules.filter { $0.id.contains("template") }.count
        #expect(withPrimary == CoffeeGrammar.templates.count)
        let noPrimary = PhraseCompiler.compile(try AppRegistry(apps: BundledApps.all))
        #expect(noPrimary.rules.filter { $0.id.contains("template") }.isEmpty)
        #expect(Resolver(model: noPrimary).resolve("order a latte") == nil)
        #expect(Resolver(model: noPrimary).resolve("order a latte with barista")?.values == ["coffeeDrink": "latte"])
    }

    @Test func phrasesResolveToAppIntentAndCanonicalValues() throws {
        let latte = try #require(resolver.resolve("Order a latte with Barista."))
        #expect(latte.app == "CoffeeMaker")
        #expect(latte.intent == "orderDrink")
        #expect(latte.values == ["coffeeDrink": "latte"])
        let soup = try #require(resolver.resolve("order chowder with the soup chef"))
        #expect(soup.target == .intent(app: "SoupChef", intent: "OrderSoup", fixed: [:]))
        #expect(soup.values == ["soup": "clamChowder"])
        let timer = try #require(resolver.resolve("start a ten minute timer"))
        #expect(timer.intent == "StartTimer")
        #expect(timer.values == ["duration": "600"])
        #expect(resolver.resolve("set a timer for an hour and a half")?.values == ["duration": "5400"])
        #expect(resolver.resolve("order soup for pick up with soup chef")?.values == ["orderType": "pickup"])
    }

    @Test func thePrimaryAppsRichTemplatesFillEveryParameter() throws {
        let order = try #require(resolver.resolve("can I get a twelve ounce dark roast double shot americano with a bit of cream"))
        #expect(order.values == ["size": "twelve ounce", "roast": "dark roast", "numberOfShots": "double shot",
                                 "coffeeDrink": "americano", "milkAmount": "a bit of cream"])
        let digits = try #require(resolver.resolve("I'd like an 8 ounce iced mocha with lots of almond milk and some brown sugar"))
        #expect(digits.values == ["size": "eight ounce", "coffeeDrink": "iced mocha", "milkAmount": "lots of almond milk", "sugarAmount": "some brown sugar"])
        #expect(resolver.resolve("order a latte")?.values == ["coffeeDrink": "latte"])
    }

    @Test func fillerWordsAreTolerated() {
        #expect(resolver.resolve("can you please start a ten minute timer for me")?.values == ["duration": "600"])
        #expect(resolver.resolve("Hey, um, order soup with Soup Chef please")?.intent == "OrderSoup")
        #expect(resolver.resolve("could you just give me a large latte thanks")?.values == ["size": "large", "coffeeDrink": "latte"])
    }

    @Test func outOfGrammarSpeechResolvesToNothing() {
        #expect(resolver.resolve("the weather in Lisbon is lovely today") == nil)
        #expect(resolver.resolve("order a pizza with Soup Chef") == nil)
        #expect(resolver.resolve("") == nil)
        #expect(resolver.resolve("please") == nil)
        #expect(resolver.resolve("can i get a large") == nil)
    }

    @Test func builtinsAndCustomPhrasesResolve() {
        #expect(resolver.resolve("what can I say")?.target == .builtin(PhraseCompiler.Builtin.help))
        #expect(resolver.resolve("never mind")?.target == .builtin(PhraseCompiler.Builtin.cancel))
        #expect(resolver.resolve("say that again")?.target == .builtin(PhraseCompiler.Builtin.repeat))
        let appHelp = resolver.resolve("what can soup chef do")
        #expect(appHelp?.target == .builtin(PhraseCompiler.Builtin.appHelp))
        #expect(appHelp?.values == ["app": "SoupChef"])
        let custom = CustomPhrase(phrase: "Coffee time", app: "CoffeeMaker", intent: "orderDrink",
                                  parameters: ["coffeeDrink": "latte", "size": "large"], created: .distantPast)
        let withCustom = Resolver(model: PhraseCompiler.compile(registry, customPhrases: [custom]))
        let resolved = withCustom.resolve("coffee time!")
        #expect(resolved?.intent == "orderDrink")
        #expect(resolved?.values == ["coffeeDrink": "latte", "size": "large"])
    }

    @Test func templateNotationErrorsNameTheTemplateAndPosition() {
        #expect(throws: TemplateNotation.ParseError.self) { try TemplateNotation.parse("[a, b", vocabulary: { $0 }) }
        do {
            _ = try TemplateNotation.parse("order ] now", vocabulary: { $0 })
            Issue.record("expected an error")
        } catch {
            #expect("\(error)" == "template 'order ] now', character 7: unexpected ']'")
        }
        let node = try? TemplateNotation.parse("[can I get, give me] (a) $size:cupSize latte", vocabulary: { "v.\($0)" })
        #expect(node == .sequence([.choice([.words(["can", "i", "get"]), .words(["give", "me"])]), .optional(.words(["a"])),
                                   .slot(vocabulary: "v.size", binding: "cupSize"), .words(["latte"])]))
    }

    @Test func followUpGrammarsExpectOptionsOrdinalsAndCancel() throws {
        let options = [ParameterOption(id: "beef", title: "beef chili"), ParameterOption(id: "veggie", title: "veggie chili", synonyms: ["vegetarian"])]
        let question = FollowUpQuestion(prompt: "Which chili?", expectation: .options(options, listed: options))
        let answers = Resolver(model: FollowUpGrammar.model(for: question))
        #expect(answers.resolve("the second one")?.values == ["ordinal": "2"])
        #expect(answers.resolve("veggie")?.values == ["option": "veggie"])
        #expect(answers.resolve("beef chili please")?.values == ["option": "beef"])
        #expect(answers.resolve("vegetarian")?.values == ["option": "veggie"])
        #expect(answers.resolve("the last one")?.values == ["ordinal": "2"])
        #expect(answers.resolve("cancel")?.target == .builtin(PhraseCompiler.Builtin.cancel))
        #expect(answers.resolve("repeat that")?.target == .builtin(PhraseCompiler.Builtin.repeat))
        #expect(answers.resolve("chicken") == nil)
        #expect(Dialog.distinctiveTitles(options) == ["beef", "veggie"])
        let yesNo = Resolver(model: FollowUpGrammar.model(for: FollowUpQuestion(prompt: "Right?", expectation: .yesNo)))
        #expect(yesNo.resolve("yeah")?.values == ["yesNo": "yes"])
        #expect(yesNo.resolve("nope")?.values == ["yesNo": "no"])
        let number = Resolver(model: FollowUpGrammar.model(for: FollowUpQuestion(prompt: "How many?", expectation: .number)))
        #expect(number.resolve("twenty five")?.values == ["number": "25"])
        #expect(number.resolve("12")?.values == ["number": "12"])
    }
}

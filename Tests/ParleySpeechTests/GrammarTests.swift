import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

@Suite struct GrammarTests {
    static var coffee: PhraseModel { get throws { try CoffeeFixture.grammar() } }

    @Test func coffeeContextLoadsEveryTemplateAndSlotList() throws {
        let model = try Self.coffee
        #expect(model.rules.count > 60)
        #expect(Set(model.vocabularies.keys) == ["size", "roast", "numberOfShots", "coffeeDrink", "milkAmount", "sugarAmount"])
        #expect(model.vocabularies["size"]?.values.map(\.canonical).contains("twelve ounce") == true)
    }

    @Test func matcherRecoversSlotsFromATranscript() throws {
        let words = "can i get a large double shot dark roast latte with a bit of soy milk and sugar".split(separator: " ").map(String.init)
        let match = try #require(PhraseMatcher(model: Self.coffee).match(words))
        #expect(match.target == .intent(app: "Coffee Maker", intent: "orderDrink", fixed: [:]))
        #expect(match.slots == ["size": "large", "numberOfShots": "double shot", "roast": "dark roast",
                                "coffeeDrink": "latte", "milkAmount": "a bit of soy milk", "sugarAmount": "sugar"])
        #expect(try PhraseMatcher(model: Self.coffee).match(["make", "me", "a", "sandwich"]) == nil)
    }

    @Test func minimalGraphKeepsTheLanguageAndIsSmall() throws {
        let graph = try GrammarCompiler().graph(for: Self.coffee)
        #expect(graph.accepts("i'd like a small coffee".split(separator: " ").map(String.init)))
        #expect(!graph.accepts("may i have a latte please".split(separator: " ").map(String.init)))
        #expect(graph.accepts("brew a medium mocha with cream".split(separator: " ").map(String.init)))
        #expect(!graph.accepts("brew a medium".split(separator: " ").map(String.init)))
        // Thousands of template paths share prefixes and suffixes.
        #expect(graph.stateCount < 2_000)
    }

    @Test func phraseProgressTellsAPrefixAWholePhraseThatCanGoOnAndAComplete() throws {
        let graph = try GrammarCompiler().graph(for: Self.coffee)
        let index = PhraseProgressIndex(graph)
        func progress(_ text: String) -> PhraseProgress { index.progress(text.split(separator: " ").map(String.init)) }
        #expect(progress("") == .incomplete)
        #expect(progress("brew a medium") == .incomplete, "a slot is still missing")
        #expect(progress("brew a medium mocha") == .extendable, "'with cream' may follow")
        #expect(progress("brew a medium mocha with cream") == .extendable, "'and sugar' may follow")
        #expect(progress("brew a medium mocha with cream and sugar") == .complete)
        #expect(progress("brew a medium mocha with cream and brown sugar") == .complete)
        #expect(progress("brew a medium mocha with cream and sugar please") == .incomplete, "not the grammar's")
        #expect(progress("make me a sandwich") == .incomplete)
        // It agrees with the graph's own acceptance on whole phrases.
        for text in ["i'd like a small coffee", "may i have a latte please", "brew a medium"] {
            let words = text.split(separator: " ").map(String.init)
            #expect(index.progress(words).isWhole == graph.accepts(words), "\(text)")
        }
        // A graph with a garbage path: filler words are never a phrase a person completes.
        let withGarbage = PhraseProgressIndex(try GrammarCompiler(rejection: RejectionModel()).graph(for: Self.coffee))
        #expect(withGarbage.progress(["garbage_k", "garbage_aa"]) == .incomplete)
        #expect(withGarbage.progress("brew a medium mocha with cream and sugar".split(separator: " ").map(String.init)) == .complete)
    }

    @Test func garbageLoopAcceptsAnyPhoneString() {
        let loop = GrammarCompiler.phoneLoop(RejectionModel())
        #expect(loop.accepts(["garbage_k", "garbage_aa", "garbage_f"]))
        #expect(!loop.accepts([]))
    }

    @Test func badTemplatesAreReportedWithTheirPlace() {
        let yaml = """
        context:
          expressions:
            order:
              - "get me [a, an $size:size"
          slots:
            size: ["small"]
        """
        // The one template parser's words: the same facts (file, intent,
        // template, the '[' left open), and the character where it ends.
        #expect(throws: SpeechError.badFile(
            path: "<context>",
            reason: "intent order, template 1: template 'get me [a, an $size:size', character 25: '[' is never closed")) {
            try RhinoContext.parse(yaml, app: "X")
        }
        let missing = """
        context:
          expressions:
            order:
              - "get me $drink:drink"
        """
        #expect(throws: SpeechError.self) { try RhinoContext.parse(missing, app: "X") }
    }

    @Test func emptyModelIsAnError() {
        #expect(throws: SpeechError.badGrammar("the phrase model has no rules")) { try GrammarCompiler().graph(for: PhraseModel()) }
    }

    /// Found by the soak (BENCHMARKS.md, "Soak"): an external app whose
    /// parameter values come from the app at run time (the shopping list's
    /// items) has an empty vocabulary while the list is empty. That failed
    /// the whole grammar ("slot vocabulary … is missing or empty"), so the
    /// daemon kept listening with its previous grammar, the answers to a
    /// question already cancelled, and heard no command at all.
    @Test func aRuleWithAnEmptySlotVocabularyIsLeftOutAndTheRestStands() throws {
        func words(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }
        let list = PhraseNode.choice([.words(["the", "shopping", "list"]), .words(["my", "shopping", "list"])])
        let intent = PhraseTarget.intent(app: "ShoppingList", intent: "X", fixed: [:])
        let model = PhraseModel(rules: [
            PhraseRule(id: "remove", target: intent, body: .sequence([.words(["remove"]), .slot(vocabulary: "item", binding: "item"),
                                                                     .words(["from"]), list])),
            PhraseRule(id: "read", target: intent, body: .sequence([.words(["read"]), list])),
            // An alternative and an optional part with the empty slot: only those parts go.
            PhraseRule(id: "clear", target: intent, body: .sequence([.words(["clear"]),
                .choice([.slot(vocabulary: "item", binding: "item"), .words(["everything"])]),
                .optional(.sequence([.words(["but"]), .slot(vocabulary: "item", binding: "item")]))])),
            PhraseRule(id: "cancel", target: .builtin(.cancel), body: .words(["cancel"])),
        ], vocabularies: ["item": SlotVocabulary(name: "item", values: [])])
        let graph = try GrammarCompiler().graph(for: model)
        #expect(graph.accepts(words("read my shopping list")))
        #expect(graph.accepts(words("cancel")))
        #expect(graph.accepts(words("clear everything")))
        #expect(!graph.accepts(words("clear everything but")))
        #expect(!graph.accepts(words("remove from the shopping list")))
        #expect(!graph.words.contains("remove") && !graph.words.contains("but"), "no dead ends: \(graph.words.sorted())")
        // With items the same model has the rule again.
        var filled = model
        filled.vocabularies["item"] = SlotVocabulary(name: "item", values: [SlotValue(spoken: ["milk"], canonical: "milk")])
        let full = try GrammarCompiler().graph(for: filled)
        #expect(full.accepts(words("remove milk from the shopping list")))
        #expect(full.accepts(words("clear everything but milk")))
    }

    @Test func aModelWhoseEveryRuleHasAnEmptySlotOrAMissingVocabularyIsAnError() {
        let rule = PhraseRule(id: "remove", target: .builtin(.cancel), body: .sequence([.words(["remove"]), .slot(vocabulary: "item", binding: "item")]))
        #expect(throws: SpeechError.badGrammar("no rule of the phrase model can be said (every one has an empty slot vocabulary)")) {
            try GrammarCompiler().graph(for: PhraseModel(rules: [rule], vocabularies: ["item": SlotVocabulary(name: "item", values: [])]))
        }
        // A vocabulary the model does not have at all is a compiler's mistake, named.
        #expect(throws: SpeechError.badGrammar("remove: slot vocabulary 'item' is missing")) {
            try GrammarCompiler().graph(for: PhraseModel(rules: [rule]))
        }
    }
}

@Suite struct LexiconTests {
    @Test func everyWordGetsValidPhones() throws {
        let lexicon = try Lexicon.shared(path: DecoderSettings().dictionary)
        let (known, source) = try lexicon.pronunciations(of: "coffee")
        #expect(source == .cmudict && known.first == ["K", "AA", "F", "IY"])
        // Not in cmudict: generated through espeak-ng and mapped to CMU phones.
        let (made, madeSource) = try lexicon.pronunciations(of: "zorblatt")
        #expect(madeSource == .espeak)
        #expect(!made[0].isEmpty && made[0].allSatisfy { CMUPhones.all.contains($0) })
        #expect(try lexicon.pronunciations(of: "philz").source == .project)
    }

    @Test func variantsComeInTheDictionarysOrder() throws {
        let lexicon = try Lexicon.shared(path: DecoderSettings().dictionary)
        // cmudict: "read R EH D", then "read(2) R IY D"; "read's" is another word.
        #expect(try lexicon.pronunciations(of: "read").phones == [["R", "EH", "D"], ["R", "IY", "D"]])
        #expect(try lexicon.pronunciations(of: "read's").phones == [["R", "IY", "D", "Z"]])
    }

    /// The in-place lookup gives every word of the en-us dictionary exactly
    /// the pronunciations, in order, that parsing the whole file gives (so
    /// the decoders' reduced dictionaries are unchanged).
    @Test func inPlaceLookupMatchesParsingTheWholeDictionary() throws {
        let path = DecoderSettings().dictionary
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var parsed: [String: [[String]]] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            var word = String(fields[0])
            if let paren = word.firstIndex(of: "(") { word = String(word[..<paren]) }
            parsed[word, default: []].append(fields.dropFirst().map(String.init))
        }
        let file = try PronouncingDictionaryFile(path: path)
        var mismatches: [String] = []
        for (word, phones) in parsed where file.pronunciations(of: word) != phones { mismatches.append(word) }
        #expect(parsed.count > 100_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) words differ, e.g. \(mismatches.prefix(5))")
        #expect(file.pronunciations(of: "zorblatt") == nil)
    }

    @Test func aDictionaryLineWithoutPhonesIsNamed() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-test-\(UUID().uuidString).dict")
        try "good G UH D\nbad\n".write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: SpeechError.badFile(path: url.path, reason: "line 2: expected 'word PHONE...'")) {
            try Lexicon(path: url.path)
        }
        #expect(throws: SpeechError.self) { try Lexicon(path: url.path + ".missing") }
    }

    @Test func espeakMnemonicsMapToCMU() {
        #expect(CMUPhones.fromEspeak("k@mpj'u:t3") == ["K", "AH", "M", "P", "Y", "UW", "T", "ER"])
        #expect(CMUPhones.fromEspeak("k@Q") == nil)
    }

    @Test func badProjectDictionaryLineIsNamed() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-test-\(UUID().uuidString).dict")
        try "good G UH D\nbad XX YY\n".write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        let lexicon = try Lexicon.shared(path: DecoderSettings().dictionary)
        #expect(throws: SpeechError.badFile(path: url.path, reason: "line 2: expected 'word PHONE...' with CMU phones")) {
            try lexicon.addDictionary(at: url)
        }
    }
}

@Suite struct AudioToolTests {
    @Test func audioThatIsNot16kHzIsRejectedByName() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-test-\(UUID().uuidString).wav")
        try ParleyAudio.WAVFile.write([1, 2, 3], sampleRate: 8000, to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: SpeechError.badFile(path: url.path, reason: "sample rate 8000 Hz; expected 16000 Hz mono 16-bit PCM")) {
            try PCMAudio.read(url)
        }
    }

    @Test func settingsRejectBadValues() {
        var s = DecoderSettings()
        #expect(throws: SpeechError.badSetting(name: "beam", value: "wide", expected: "a number")) { try s.apply("beam=wide") }
        #expect(throws: SpeechError.self) { try s.apply("beam") }
    }

    @Test func spokenTextReadsPricesTimesAndDurations() {
        #expect(SpokenText.normalise("That is $4.50.") == "That is four dollars fifty.")
        #expect(SpokenText.normalise("ready in 10 min") == "ready in ten minutes")
        #expect(SpokenText.normalise("at 7:05, or 7:30pm") == "at seven oh five, or seven thirty p m")
        #expect(SpokenText.normalise("$1 and $0.75") == "one dollar and seventy five cents")
        #expect(SpokenText.normalise("1 min") == "one minute")
        #expect(SpokenText.words(1234) == "one thousand two hundred thirty four")
    }
}

import Foundation
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// One template notation and one text normaliser (issue 25, part 3): the
/// benchmark's grammar, the wake word and the resolver all go through
/// `TemplateNotation` and `PhraseText`.
@Suite struct OneNotationTests {
    /// Every path of every rule as text, slots written `$vocabulary:binding`,
    /// and every slot value; written out here so that the test does not
    /// ask the code under test what it should produce.
    static func expansions(_ model: PhraseModel) -> [String] {
        func expand(_ node: PhraseNode) -> [[String]] {
            switch node {
            case .words(let words): return [words]
            case .slot(let vocabulary, let binding): return [["$\(vocabulary):\(binding)"]]
            case .optional(let inner): return [[]] + expand(inner)
            case .choice(let nodes): return nodes.flatMap(expand)
            case .sequence(let nodes):
                return nodes.reduce([[]]) { paths, node in
                    let tails = expand(node)
                    return paths.flatMap { path in tails.map { path + $0 } }
                }
            }
        }
        var lines: [String] = []
        for rule in model.rules {
            lines += expand(rule.body).map { "\(rule.id)\t\($0.joined(separator: " "))" }
        }
        for (name, vocabulary) in model.vocabularies {
            lines += vocabulary.values.map { "\(name)\t\($0.spoken.joined(separator: " "))\t\($0.canonical)" }
        }
        return lines.sorted()
    }

    /// FNV-1a, 64 bits: stable across runs, unlike `Hasher`.
    static func fnv1a(_ lines: [String]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in lines.joined(separator: "\n").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// The literals were computed before the change, by the deleted
    /// `RhinoContext.parseTemplate` and its normaliser (copied verbatim from
    /// commit 4672ee7 into a scratch program with this expansion and hash):
    /// the one parser must give the benchmark exactly the phrases it had.
    @Test func theBenchmarkGrammarCompilesToTheSamePhrasesAsBefore() throws {
        let coffee = Self.expansions(try RhinoContext.load(Fixtures.require(Fixtures.coffeeGrammar), app: "Coffee Maker"))
        #expect(coffee.count == 1517)
        #expect(String(Self.fnv1a(coffee), radix: 16) == "62369f9645cf6e10")
        let soup = Self.expansions(try EvaluationGrammars.soup())
        #expect(soup.count == 34)
        #expect(String(Self.fnv1a(soup), radix: 16) == "bcf720cab360e755")
    }

    /// A wake name is heard (WakeDetector's keyphrase) and stripped and
    /// compiled (WakeGrammar) as the same words: digits spelt, accents folded.
    @Test(arguments: [("Unit 2", ["unit", "two"]), ("Zoë", ["zoe"]), ("Hal 9000", ["hal", "nine", "thousand"]),
                      ("Café Bot", ["cafe", "bot"])])
    func aWakeNameIsNormalisedAlikeByTheDetectorAndTheGrammar(name: String, words: [String]) throws {
        let grammar = WakeGrammar(name: name)
        #expect(grammar.name == words)
        #expect(WakeDetector.keyphrases(name: name, heyOptional: true) == [["hey"] + words, words])
        #expect(grammar.strip(["hey"] + words + ["coffee", "time"]) == ["coffee", "time"])
    }

    @Test func aBadTemplateNamesTheIntentTheTemplateAndTheCharacter() {
        let yaml = """
        context:
          expressions:
            order:
              - "get me (a) [small, large"
          slots: {}
        """
        let error = #expect(throws: SpeechError.self) { try RhinoContext.parse(yaml, app: "X") }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("intent order, template 1"), "\(text)")
        #expect(text.contains("get me (a) [small, large"), "\(text)")
        #expect(text.contains("'[' is never closed"), "\(text)")
    }
}

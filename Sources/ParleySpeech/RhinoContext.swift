import Foundation
import ParleyCore
import Yams

/// Reads a Picovoice Rhino-style context YAML (the coffee-maker benchmark's
/// grammar.yaml) into a `PhraseModel`: `context.expressions` maps an intent
/// to templates in which `[a, b]` is a choice, `(a)` is optional and
/// `$vocabulary:parameter` is a slot; `context.slots` lists slot values.
/// Canonical slot values are the spoken forms, as the benchmark labels them.
public enum RhinoContext {
    public static func load(_ url: URL, app: String) throws -> PhraseModel {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw SpeechError.badFile(path: url.path, reason: "cannot be read")
        }
        return try parse(text, app: app, path: url.path)
    }

    public static func parse(_ text: String, app: String, path: String = "<context>") throws -> PhraseModel {
        let root: Any?
        do { root = try Yams.load(yaml: text) } catch {
            throw SpeechError.badFile(path: path, reason: "invalid YAML: \(error)")
        }
        guard let context = (root as? [String: Any])?["context"] as? [String: Any] else {
            throw SpeechError.badFile(path: path, reason: "expected a top-level 'context' mapping")
        }
        guard let expressions = context["expressions"] as? [String: [String]] else {
            throw SpeechError.badFile(path: path, reason: "expected 'context.expressions' mapping intent names to lists of templates")
        }
        let slots = context["slots"] as? [String: [String]] ?? [:]
        var model = PhraseModel()
        for (name, values) in slots {
            model.vocabularies[name] = SlotVocabulary(name: name, values: values.map {
                let spoken = normalise($0)
                return SlotValue(spoken: spoken, canonical: spoken.joined(separator: " "))
            })
        }
        for intent in expressions.keys.sorted() {
            for (index, template) in expressions[intent]!.enumerated() {
                let body: PhraseNode
                do { body = try parseTemplate(template) } catch let SpeechError.badGrammar(reason) {
                    throw SpeechError.badFile(path: path, reason: "intent \(intent), template \(index + 1): \(reason)")
                }
                model.rules.append(PhraseRule(id: "\(app)/\(intent)/\(index)", target: .intent(app: app, intent: intent, fixed: [:]), body: body))
            }
        }
        for rule in model.rules {
            try checkSlots(rule.body, model, path: path, rule: rule.id)
        }
        return model
    }

    private static func checkSlots(_ node: PhraseNode, _ model: PhraseModel, path: String, rule: String) throws {
        switch node {
        case .slot(let v, _):
            if model.vocabularies[v] == nil {
                throw SpeechError.badFile(path: path, reason: "\(rule): slot list '\(v)' is not defined under context.slots")
            }
        case .sequence(let n), .choice(let n): try n.forEach { try checkSlots($0, model, path: path, rule: rule) }
        case .optional(let n): try checkSlots(n, model, path: path, rule: rule)
        case .words: break
        }
    }

    /// Lower-case words, punctuation other than apostrophes removed.
    static func normalise(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "'") }).map(String.init)
    }

    /// Parses one template into a node.
    static func parseTemplate(_ template: String) throws -> PhraseNode {
        var index = template.startIndex
        func parseSequence(until terminators: Set<Character>) throws -> PhraseNode {
            var items: [PhraseNode] = []
            var word = ""
            func flush() {
                if !word.isEmpty { items.append(.words(normalise(word))); word = "" }
            }
            while index < template.endIndex {
                let c = template[index]
                if terminators.contains(c) { break }
                index = template.index(after: index)
                switch c {
                case "[":
                    flush()
                    var options: [PhraseNode] = []
                    while true {
                        options.append(try parseSequence(until: [",", "]"]))
                        guard index < template.endIndex else { throw SpeechError.badGrammar("unclosed '[' in \"\(template)\"") }
                        let t = template[index]
                        index = template.index(after: index)
                        if t == "]" { break }
                    }
                    items.append(.choice(options))
                case "(":
                    flush()
                    let inner = try parseSequence(until: [")"])
                    guard index < template.endIndex else { throw SpeechError.badGrammar("unclosed '(' in \"\(template)\"") }
                    index = template.index(after: index)
                    items.append(.optional(inner))
                case "$":
                    flush()
                    var spec = ""
                    while index < template.endIndex, template[index].isLetter || template[index].isNumber || template[index] == ":" || template[index] == "_" {
                        spec.append(template[index]); index = template.index(after: index)
                    }
                    let parts = spec.split(separator: ":").map(String.init)
                    guard parts.count == 2 else { throw SpeechError.badGrammar("slot '$\(spec)' should be $list:name") }
                    items.append(.slot(vocabulary: parts[0], binding: parts[1]))
                case "]", ")", ",":
                    throw SpeechError.badGrammar("unexpected '\(c)' in \"\(template)\"")
                case " ":
                    flush()
                default:
                    word.append(c)
                }
            }
            flush()
            // Merge adjacent word runs.
            var merged: [PhraseNode] = []
            for item in items {
                if case .words(let w) = item, case .words(let prev)? = merged.last {
                    merged[merged.count - 1] = .words(prev + w)
                } else { merged.append(item) }
            }
            return merged.count == 1 ? merged[0] : .sequence(merged)
        }
        let node = try parseSequence(until: [])
        if case .sequence(let s) = node, s.isEmpty { throw SpeechError.badGrammar("empty template") }
        return node
    }
}

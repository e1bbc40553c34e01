import Foundation
import ParleyCore
import Yams

/// Reads a Picovoice Rhino-style context YAML (the coffee-maker benchmark's
/// grammar.yaml) into a `PhraseModel`: `context.expressions` maps an intent
/// to templates in which `[a, b]` is a choice, `(a)` is optional and
/// `$vocabulary:parameter` is a slot; `context.slots` lists slot values.
/// Canonical slot values are the spoken forms, as the benchmark labels them.
/// Templates are read by ParleyCore's `TemplateNotation` and words
/// normalised by `PhraseText`, as every other phrase of the device is.
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
                let spoken = PhraseText.normalise($0)
                return SlotValue(spoken: spoken, canonical: spoken.joined(separator: " "))
            })
        }
        for intent in expressions.keys.sorted() {
            for (index, template) in expressions[intent]!.enumerated() {
                let body: PhraseNode
                // The one notation of every phrase template; list names are the
                // vocabulary names as written.
                do { body = try TemplateNotation.parse(template, vocabulary: { $0 }) } catch {
                    throw SpeechError.badFile(path: path, reason: "intent \(intent), template \(index + 1): \(error)")
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
}

/// The template notation of Tests/Fixtures/coffee-maker/grammar.yaml
/// (Picovoice Rhino's): `[a, b c]` is a choice of one alternative, `(a)` is
/// optional, `$list:binding` is a slot value, anything else a literal word.
public enum TemplateNotation {
    /// An error in a template, with the template and the character offset.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var template: String
        public var offset: Int
        public var reason: String
        public var description: String { "template '\(template)', character \(offset + 1): \(reason)" }
    }

    /// Parses a template; `vocabulary` maps a list name to the vocabulary name used in the model.
    public static func parse(_ template: String, vocabulary: (String) -> String) throws -> PhraseNode {
        let chars = Array(template)
        var index = 0
        func error(_ reason: String) -> ParseError { ParseError(template: template, offset: index, reason: reason) }

        func parseToken() throws -> PhraseNode? {
            var text = ""
            while index < chars.count, !" [](),".contains(chars[index]) {
                text.append(chars[index]); index += 1
            }
            if text.hasPrefix("$") {
                let parts = text.dropFirst().split(separator: ":", maxSplits: 1).map(String.init)
                guard let list = parts.first, !list.isEmpty else { throw error("a slot needs a list name: $list:binding") }
                return .slot(vocabulary: vocabulary(list), binding: parts.count > 1 ? parts[1] : list)
            }
            let words = PhraseText.normalise(text)
            return words.isEmpty ? nil : .words(words)
        }

        /// A sequence until one of `terminators` (not consumed) or the end.
        func parseSequence(until terminators: Set<Character>) throws -> [PhraseNode] {
            var nodes: [PhraseNode] = []
            while index < chars.count {
                let c = chars[index]
                if terminators.contains(c) { break }
                switch c {
                case " ": index += 1
                case "[":
                    index += 1
                    var alternatives: [PhraseNode] = []
                    while true {
                        let alternative = try parseSequence(until: [",", "]"])
                        guard !alternative.isEmpty else { throw error("an empty alternative in [ ]") }
                        alternatives.append(merge(alternative))
                        guard index < chars.count else { throw error("'[' is never closed") }
                        index += 1
                        if chars[index - 1] == "]" { break }
                    }
                    nodes.append(.choice(alternatives))
                case "(":
                    index += 1
                    let inner = try parseSequence(until: [")"])
                    guard index < chars.count else { throw error("'(' is never closed") }
                    index += 1
                    nodes.append(.optional(merge(inner)))
                case "]", ")", ",": throw error("unexpected '\(c)'")
                default:
                    if let token = try parseToken() { nodes.append(token) }
                }
            }
            return nodes
        }

        let nodes = try parseSequence(until: [])
        guard !nodes.isEmpty else { throw error("the template is empty") }
        return merge(nodes)
    }

    /// One node for a sequence, joining adjacent literal words.
    static func merge(_ nodes: [PhraseNode]) -> PhraseNode {
        var merged: [PhraseNode] = []
        for node in nodes {
            if case .words(let w) = node, case .words(let previous)? = merged.last {
                merged[merged.count - 1] = .words(previous + w)
            } else {
                merged.append(node)
            }
        }
        return merged.count == 1 ? merged[0] : .sequence(merged)
    }
}

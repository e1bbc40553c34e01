/// Small helpers for the dialog rules of docs/spec.md §5: short lists naming only
/// what differs, capitalised sentences.
public enum Dialog {
    /// "small, medium or large"
    public static func list(_ items: [String], conjunction: String = "or") -> String {
        switch items.count {
        case 0: ""
        case 1: items[0]
        default: items.dropLast().joined(separator: ", ") + " \(conjunction) " + items.last!
        }
    }

    public static func capitalised(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }

    /// A question with its options: "Which size? Small, medium or large?";
    /// a prompt ending in ":" continues the sentence ("Which one: A or B?").
    public static func question(_ prompt: String, options: [String]) -> String {
        guard !options.isEmpty else { return prompt }
        let listed = list(options)
        if prompt.hasSuffix(":") { return "\(prompt) \(listed)?" }
        return "\(prompt) \(capitalised(listed))?"
    }

    /// The title words of each option that tell it apart from the others.
    public static func distinctiveTitles(_ options: [ParameterOption]) -> [String] {
        guard options.count > 1 else { return options.map(\.spoken) }
        let wordLists = options.map { $0.spoken.split(separator: " ").map(String.init) }
        let normalised = wordLists.map { Set($0.map(PhraseText.normalised)) }
        let shared = normalised.dropFirst().reduce(normalised[0]) { $0.intersection($1) }
        return wordLists.map { words in
            let distinct = words.filter { !shared.contains(PhraseText.normalised($0)) }
            return (distinct.isEmpty ? words : distinct).joined(separator: " ")
        }
    }
}

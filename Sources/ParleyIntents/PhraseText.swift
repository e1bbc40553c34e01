import Foundation

/// Normalisation shared by every phrase and every transcript, so that what
/// apps declare and what people say meet in one form: lower case, no
/// punctuation or accents, digits as words ("12" -> "twelve", "2nd" -> "second").
public enum PhraseText {
    /// The normalised words of a text.
    public static func normalise(_ text: String) -> [String] {
        // Most phrases are already plain lower-case ASCII: skip Foundation's folding for them.
        let plain = text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x20 || $0 == 0x27 }
        if plain {
            var words: [String] = []
            for token in text.split(separator: " ") {
                var trimmed = token
                while trimmed.first == "'" { trimmed = trimmed.dropFirst() }
                while trimmed.last == "'" { trimmed = trimmed.dropLast() }
                if trimmed.isEmpty { continue }
                if let first = trimmed.utf8.first, first >= 0x30 && first <= 0x39 {
                    words.append(contentsOf: spell(String(trimmed)))
                } else {
                    words.append(String(trimmed))
                }
            }
            return words
        }
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
        var words: [String] = []
        var current = ""
        func flush() {
            guard !current.isEmpty else { return }
            let trimmed = current.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            current = ""
            guard !trimmed.isEmpty else { return }
            words.append(contentsOf: spell(trimmed))
        }
        for scalar in folded.unicodeScalars {
            switch scalar {
            case "a"..."z", "0"..."9", "'": current.unicodeScalars.append(scalar)
            case "&": flush(); words.append("and")
            case "%": flush(); words.append("percent")
            case "’": current.append("'")
            default: flush()
            }
        }
        flush()
        return words
    }

    /// The normalised text, words joined by single spaces.
    public static func normalised(_ text: String) -> String { normalise(text).joined(separator: " ") }

    /// Digits become words: "12" -> ["twelve"], "1st" -> ["first"], "20oz" -> ["twenty", "oz"].
    static func spell(_ token: String) -> [String] {
        guard let first = token.unicodeScalars.first, ("0"..."9").contains(first) else { return [token] }
        let digits = String(token.prefix { $0.isASCII && $0.isNumber })
        let rest = String(token.dropFirst(digits.count))
        guard let number = Int(digits), number < 1_000_000 else { return [token] }
        if ["st", "nd", "rd", "th"].contains(rest), let ordinal = SpokenNumber.ordinal(number) { return [ordinal] }
        let spelled = SpokenNumber.words(number).split(separator: " ").map(String.init)
        return rest.isEmpty ? spelled : spelled + [rest]
    }
}

/// A token of an App Shortcut phrase.
public enum PhraseToken: Sendable, Hashable {
    case word(String)
    /// `{app}`: the app's name or a synonym.
    case appName
    /// `{name}`: a value of the named parameter.
    case parameter(String)

    /// Splits "order {soup} with {app}" into tokens; literal words are normalised.
    public static func tokens(of phrase: String) -> [PhraseToken] {
        var tokens: [PhraseToken] = []
        var rest = Substring(phrase)
        while let open = rest.firstIndex(of: "{") {
            tokens += PhraseText.normalise(String(rest[..<open])).map(PhraseToken.word)
            guard let close = rest[open...].firstIndex(of: "}") else {
                rest = rest[rest.index(after: open)...]
                continue
            }
            let name = String(rest[rest.index(after: open)..<close]).trimmingCharacters(in: .whitespaces)
            tokens.append(name == "app" ? .appName : .parameter(name))
            rest = rest[rest.index(after: close)...]
        }
        tokens += PhraseText.normalise(String(rest)).map(PhraseToken.word)
        return tokens
    }
}

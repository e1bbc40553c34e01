import Foundation

/// One dictionary line: a spelling ("word" or "word(2)") and its CMU phones.
public struct Pronunciation: Sendable, Hashable {
    public var word: String
    public var phones: [String]
    public init(word: String, phones: [String]) {
        self.word = word
        self.phones = phones
    }
}

/// Where a word's pronunciation comes from, in order of preference: the CMU
/// dictionary, the project dictionary (hand-checked entries), espeak-ng's
/// letter-to-sound rules mapped to CMU phones, and finally a crude
/// letter-by-letter guess. A word never silently lacks a pronunciation.
public final class Lexicon: @unchecked Sendable {
    /// Words Parley needs that cmudict lacks or gets wrong, in cmudict format.
    public static let projectDictionary: [String: [[String]]] = [
        "philz": [["F", "IH", "L", "Z"]],
        "parley": [["P", "AA", "R", "L", "IY"]],
        // The volume built-in (issue 28); cmudict has "mute" but not "unmute".
        "unmute": [["AH", "N", "M", "Y", "UW", "T"]],
    ]

    /// The CMU dictionary, looked up in the mapped file (not parsed into memory).
    private let cmu: PronouncingDictionaryFile
    private var extra: [String: [[String]]]
    private let lock = NSLock()
    public let path: String

    nonisolated(unsafe) private static var cache: [String: Lexicon] = [:]
    private static let cacheLock = NSLock()

    /// The lexicon for a cmudict file, loaded once per process.
    public static func shared(path: String) throws -> Lexicon {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let l = cache[path] { return l }
        let l = try Lexicon(path: path)
        cache[path] = l
        return l
    }

    public init(path: String, extra: [String: [[String]]] = Lexicon.projectDictionary) throws {
        self.path = path
        self.extra = extra
        cmu = try PronouncingDictionaryFile(path: path)
    }

    /// Adds entries from a file in cmudict format (the device's own dictionary).
    public func addDictionary(at url: URL) throws {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw SpeechError.badFile(path: url.path, reason: "cannot be read")
        }
        lock.lock(); defer { lock.unlock() }
        for (number, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields.dropFirst().allSatisfy({ CMUPhones.all.contains(String($0)) }) else {
                throw SpeechError.badFile(path: url.path, reason: "line \(number + 1): expected 'word PHONE...' with CMU phones")
            }
            extra[fields[0].lowercased(), default: []].append(fields.dropFirst().map(String.init))
        }
    }

    /// All pronunciations of a word and where they came from.
    public func pronunciations(of word: String) throws -> (phones: [[String]], source: Source) {
        lock.lock(); defer { lock.unlock() }
        if let p = extra[word] { return (p, .project) }
        if let phone = RejectionModel.phone(ofFiller: word), CMUPhones.all.contains(phone) { return ([[phone]], .project) }
        if let p = cmu.pronunciations(of: word) { return (p, .cmudict) }
        if let p = try? Espeak.shared.withEngine({ try Espeak.shared.phonemes(of: word) }),
           let phones = CMUPhones.fromEspeak(p), !phones.isEmpty {
            return ([phones], .espeak)
        }
        let guess = CMUPhones.fromLetters(word)
        guard !guess.isEmpty else { throw SpeechError.noPronunciation(word: word) }
        return ([guess], .letters)
    }

    public enum Source: String, Sendable { case project, cmudict, espeak, letters }

    /// Dictionary lines for `words`, alternates as "word(2)".
    public func entries(for words: Set<String>) throws -> [Pronunciation] {
        var result: [Pronunciation] = []
        for word in words.sorted() {
            let (variants, _) = try pronunciations(of: word)
            for (i, phones) in variants.enumerated() {
                result.append(Pronunciation(word: i == 0 ? word : "\(word)(\(i + 1))", phones: phones))
            }
        }
        return result
    }

    public static func dictionaryText(_ entries: [Pronunciation]) -> String {
        entries.map { "\($0.word) \($0.phones.joined(separator: " "))" }.joined(separator: "\n") + "\n"
    }
}

/// The CMU phone set of the en-us model, and mappings into it.
public enum CMUPhones {
    public static let all: Set<String> = [
        "AA", "AE", "AH", "AO", "AW", "AY", "B", "CH", "D", "DH", "EH", "ER", "EY", "F", "G", "HH", "IH", "IY",
        "JH", "K", "L", "M", "N", "NG", "OW", "OY", "P", "R", "S", "SH", "T", "TH", "UH", "UW", "V", "W", "Y", "Z", "ZH",
    ]

    /// espeak-ng's ASCII phoneme mnemonics (en voices) to CMU phones.
    static let espeakMap: [String: [String]] = [
        "a#": ["AH"], "a": ["AE"], "aa": ["AE"], "A:": ["AA"], "A@": ["AA", "R"], "A": ["AA"], "aI": ["AY"], "aI@": ["AY", "ER"],
        "aU": ["AW"], "@": ["AH"], "@L": ["AH", "L"], "@2": ["AH"], "@5": ["AH"], "3:": ["ER"], "3": ["ER"], "E": ["EH"],
        "e@": ["EH", "R"], "eI": ["EY"], "I": ["IH"], "I2": ["IH"], "I#": ["IH"], "i": ["IY"], "i:": ["IY"], "i@": ["IY", "ER"],
        "I@": ["IH", "R"], "0": ["AA"], "O:": ["AO"], "O": ["AO"], "O@": ["AO", "R"], "o@": ["AO", "R"], "OI": ["OY"],
        "oU": ["OW"], "U": ["UH"], "U@": ["UH", "R"], "u:": ["UW"], "V": ["AH"], "aI3": ["AY", "ER"], "aU@": ["AW", "ER"],
        "p": ["P"], "b": ["B"], "t": ["T"], "d": ["D"], "k": ["K"], "g": ["G"], "f": ["F"], "v": ["V"], "s": ["S"],
        "z": ["Z"], "h": ["HH"], "m": ["M"], "n": ["N"], "l": ["L"], "r": ["R"], "w": ["W"], "j": ["Y"], "T": ["TH"],
        "D": ["DH"], "S": ["SH"], "Z": ["ZH"], "tS": ["CH"], "dZ": ["JH"], "N": ["NG"], "t#": ["T"], "r-": ["R"],
        "l-": ["L"], "n-": ["N"], "m-": ["M"], "x": ["K"], "C": ["HH"], "?": [], "*": ["T"], "y": ["IY"],
    ]
    private static let espeakKeys = espeakMap.keys.sorted { $0.count > $1.count }

    /// Maps an espeak mnemonic string such as "k@mpj'u:t3" to CMU phones;
    /// stress and boundary marks are dropped; unknown symbols make it fail.
    static func fromEspeak(_ text: String) -> [String]? {
        var phones: [String] = []
        var rest = Substring(text)
        let ignored: Set<Character> = ["'", ",", ";", "_", " ", "!", "=", "%", "|", "#", ":"]
        while let c = rest.first {
            if let key = espeakKeys.first(where: { rest.hasPrefix($0) }) {
                phones += espeakMap[key]!
                rest = rest.dropFirst(key.count)
            } else if ignored.contains(c) {
                rest = rest.dropFirst()
            } else {
                return nil
            }
        }
        return phones
    }

    /// Last resort: one phone per letter.
    static func fromLetters(_ word: String) -> [String] {
        let map: [Character: String] = [
            "a": "AE", "b": "B", "c": "K", "d": "D", "e": "EH", "f": "F", "g": "G", "h": "HH", "i": "IH", "j": "JH",
            "k": "K", "l": "L", "m": "M", "n": "N", "o": "AA", "p": "P", "q": "K", "r": "R", "s": "S", "t": "T",
            "u": "AH", "v": "V", "w": "W", "x": "K", "y": "Y", "z": "Z",
        ]
        return word.lowercased().compactMap { map[$0] }
    }
}

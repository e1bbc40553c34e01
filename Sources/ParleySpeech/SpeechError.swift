/// Everything that can go wrong in ParleySpeech, with enough context to act on.
public enum SpeechError: Error, Equatable, CustomStringConvertible {
    /// A C call returned a failure code or NULL. `call` is the C function name.
    case library(call: String, detail: String)
    /// A file could not be read or is not what was expected.
    case badFile(path: String, reason: String)
    /// A word has no pronunciation from any source (dictionary, project
    /// dictionary, espeak-ng, letter-to-sound).
    case noPronunciation(word: String)
    /// A setting is out of range.
    case badSetting(name: String, value: String, expected: String)
    /// The grammar could not be built from the phrase model.
    case badGrammar(String)

    public var description: String {
        switch self {
        case .library(let call, let detail): return "\(call) failed: \(detail)"
        case .badFile(let path, let reason): return "\(path): \(reason)"
        case .noPronunciation(let word): return "no pronunciation for the word '\(word)'"
        case .badSetting(let name, let value, let expected):
            return "setting \(name)=\(value) is invalid; expected \(expected)"
        case .badGrammar(let reason): return "grammar: \(reason)"
        }
    }
}

/// The one place C return codes become Swift errors: pocketsphinx returns
/// negative numbers or NULL for failure and logs the reason itself.
@inline(__always)
func checkSphinx(_ code: Int32, _ call: String, _ detail: @autoclosure () -> String = "") throws {
    if code < 0 { throw SpeechError.library(call: call, detail: "returned \(code). \(detail())") }
}

@inline(__always)
func checkSphinx<T>(_ pointer: T?, _ call: String, _ detail: @autoclosure () -> String = "") throws -> T {
    guard let pointer else { throw SpeechError.library(call: call, detail: "returned NULL. \(detail())") }
    return pointer
}

import CESpeakNG
import Foundation

/// The process-wide espeak-ng engine. The library keeps global state
/// (espeak_Initialize, espeak_SetSynthCallback, the current voice), so every
/// use goes through this lock-protected singleton.
final class Espeak: @unchecked Sendable {
    static let shared = Espeak()

    private let lock = NSLock()
    private var initialised = false
    private(set) var sampleRate = 22_050
    /// Receives audio during `synthesize`; set only while the lock is held.
    fileprivate var sink: ((UnsafeBufferPointer<Int16>) -> Bool)?

    /// Runs `body` with the engine initialised (espeak_Initialize in
    /// AUDIO_OUTPUT_SYNCHRONOUS mode) and exclusively owned.
    func withEngine<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if !initialised {
            let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 100, nil, 0)
            guard rate > 0 else { throw SpeechError.library(call: "espeak_Initialize", detail: "returned \(rate)") }
            sampleRate = Int(rate)
            espeak_SetSynthCallback(espeakCallback)
            initialised = true
        }
        return try body()
    }

    /// espeak_SetVoiceByName.
    func setVoice(_ name: String) throws {
        let result = espeak_SetVoiceByName(name)
        guard result == EE_OK else {
            throw SpeechError.badSetting(name: "voice", value: name, expected: "an installed espeak-ng voice (espeak-ng --voices)")
        }
    }

    /// espeak_TextToPhonemes in ASCII mnemonic mode, for one word. Call inside withEngine.
    func phonemes(of word: String) throws -> String {
        try setVoice("en-us")
        var result = ""
        word.withCString { cText in
            var pointer: UnsafeRawPointer? = UnsafeRawPointer(cText)
            while pointer != nil {
                guard let out = espeak_TextToPhonemes(&pointer, espeakCHARS_UTF8, 0) else { break }
                result += String(cString: out) + " "
            }
        }
        return result.trimmingCharacters(in: .whitespaces)
    }

    /// Synthesises `text` (espeak_Synth, synchronous mode); `sink` receives
    /// each chunk as it is produced and returns false to stop. Call inside withEngine.
    func synthesize(_ text: String, sink: @escaping (UnsafeBufferPointer<Int16>) -> Bool) throws {
        self.sink = sink
        defer { self.sink = nil }
        let bytes = Array(text.utf8CString)
        let status = bytes.withUnsafeBufferPointer { buffer in
            espeak_Synth(buffer.baseAddress, buffer.count, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil, nil)
        }
        guard status == EE_OK else { throw SpeechError.library(call: "espeak_Synth", detail: "status \(status.rawValue)") }
        _ = espeak_Synchronize()
    }
}

/// C callback for espeak_SetSynthCallback: forwards chunks to the current sink.
/// Returning 1 aborts synthesis.
private func espeakCallback(_ wav: UnsafeMutablePointer<Int16>?, _ count: Int32, _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard let wav, count > 0, let sink = Espeak.shared.sink else { return 0 }
    return sink(UnsafeBufferPointer(start: wav, count: Int(count))) ? 0 : 1
}

/// espeak_SetParameter for rate and volume. Call inside Espeak.withEngine.
func espeakParameter(rate: Int, volume: Int) {
    _ = espeak_SetParameter(espeakRATE, Int32(rate), 0)
    _ = espeak_SetParameter(espeakVOLUME, Int32(volume), 0)
}

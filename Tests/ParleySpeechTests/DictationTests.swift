import Foundation
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// Free dictation (open-text answers) with the generic en-us language model.
@Suite struct DictationTests {
    @Test func aRecordedSentenceIsTranscribedWithItsWords() throws {
        // "...coffee..., twelve ounce, light roast" (labels.json of this file).
        let file = try Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav")
        let audio = try PCMAudio.read(file)
        let decoder = try DictationDecoder()
        let words = Set(try decoder.transcribe(audio.samples).split(separator: " ").map(String.init))
        #expect(words.contains("coffee"))
        #expect(words.contains("roast"))
        // Silence gives no words; the decoder is reusable.
        #expect(try decoder.transcribe([Int16](repeating: 0, count: 16_000)) == "")
        #expect(try decoder.transcribe(audio.samples).contains("coffee"))
    }

    @Test func aMissingLanguageModelIsNamed() {
        let error = #expect(throws: SpeechError.self) { try DictationDecoder(languageModel: "/nonexistent/en-us.lm.bin") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("/nonexistent/en-us.lm.bin"))
    }
}

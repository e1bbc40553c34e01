import Testing
@testable import ParleyConfiguration

/// parley.yaml read through ParleyYAML (issue 25, part 4): a misspelt key
/// is refused at its line with the setting that was probably meant.
@Suite struct ConfigKeySuggestionTests {
    func refusal(_ yaml: String) -> ConfigError? {
        do {
            _ = try ConfigLoader.parse(yaml, file: "/etc/parley/parley.yaml")
            return nil
        } catch {
            return error as? ConfigError
        }
    }

    @Test func aMisspeltKeyNamesTheSettingMeant() {
        let error = refusal("board: sim\nvoice:\n  rat: 200\n")
        #expect(error?.kind == .unknownKey && error?.key == "voice.rat" && error?.line == 3)
        #expect(error?.reason == "not a Parley setting (see dist/parley.yaml); did you mean 'rate'?")
        let top = refusal("tip: false\n")
        #expect(top?.reason.hasSuffix("did you mean 'tips'?") == true)
        // Nothing close: no guess.
        #expect(refusal("colour: red\n")?.reason == "not a Parley setting (see dist/parley.yaml)")
    }
}

import Foundation
import ParleyExternal
import Testing

/// Manifests read through ParleyYAML (issue 25, part 4).
@Suite struct ManifestKeyPlacementTests {
    func errors(_ yaml: String) -> [String] {
        do throws(ManifestErrors) {
            _ = try ManifestLoader.parse(yaml: yaml, file: "manifest.yaml", folder: URL(fileURLWithPath: "/nonexistent"))
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    @Test func aRequiredKeyIndentedUnderAnotherIsNamedAsSuch() {
        let found = errors("identifier: A\nname: A\nhandler: [sh]\nshortcuts:\n  intents: [{identifier: X, title: Y}]\n")
        #expect(found.contains("manifest.yaml:1:1: `intents:` is written under `shortcuts:`; it belongs beside `shortcuts:`, at the same indentation"))
        #expect(!found.contains { $0.contains("missing the required key 'intents'") })
    }

    @Test func aMisspeltKeyGetsTheClosestAllowedOne() {
        #expect(errors("identifier: A\nname: A\nhandler: [sh]\nintents: [{identifier: X, title: Y}]\nsynonym: [a]\n") == [
            "manifest.yaml:5:1: unknown key 'synonym' in the manifest; expected one of identifier, name, synonyms, handler, intents, shortcuts; did you mean 'synonyms'?",
        ])
    }
}

import Foundation
import ParleyTestKit
import Testing

/// A missing fixture fails the tests that need it, naming the path; it
/// does not trap (which would end the whole test run).
@Suite struct FixturesTests {
    @Test func aMissingFileIsAnErrorNamingItsPath() throws {
        let missing = URL(fileURLWithPath: "/nonexistent-parley-data/coffee-maker/grammar.yaml")
        let error = #expect(throws: Fixtures.Missing.self) { try Fixtures.require(missing) }
        #expect(error?.description.contains("/nonexistent-parley-data/coffee-maker/grammar.yaml") == true)
        #expect(error?.description.contains("Tests/Fixtures") == true)
    }

    @Test func tooFewRecordingsInAFolderIsAnErrorNamingTheFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("psd-" + UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data().write(to: folder.appendingPathComponent("b.wav"))
        try Data().write(to: folder.appendingPathComponent("a.wav"))
        try Data().write(to: folder.appendingPathComponent("notes.txt"))
        #expect(try Fixtures.wavFiles(in: folder).map(\.lastPathComponent) == ["a.wav", "b.wav"])
        let error = #expect(throws: Fixtures.Missing.self) { try Fixtures.wavFiles(in: folder, atLeast: 3) }
        #expect(error?.path.hasPrefix(folder.path) == true)
        #expect(throws: Fixtures.Missing.self) { try Fixtures.wavFiles(in: folder.appendingPathComponent("none")) }
    }

    /// The fixture set is the one Tests/Fixtures/README.md describes: every
    /// recording labelled, the first ten by name of each set (tests take
    /// `prefix(n)` of them), and noise long enough for the longest recording.
    @Test func theFixturesAreThoseTheReadmeLists() throws {
        let coffee = try Fixtures.wavFiles(in: Fixtures.coffeeClean).map(\.lastPathComponent)
        #expect(coffee.count == 12)
        #expect(coffee.contains("48771c69-7371-4114-870c-4ffaa840702c.wav"))
        let labels = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Fixtures.require(Fixtures.coffeeLabels))) as? [String: Any])
        #expect(labels.count == 111, "the labels of the whole development share")
        #expect(coffee.allSatisfy { labels[$0] != nil })
        #expect(Array(labels.keys.sorted().prefix(11)) == Array(coffee.prefix(11)), "the first eleven by name")
        #expect(try Fixtures.wavFiles(in: Fixtures.wakeComputer).count == 10)
        let noise = try FileManager.default.attributesOfItem(atPath: Fixtures.require(Fixtures.kitchenNoise).path)[.size] as? Int
        #expect(noise == 44 + 20 * 16_000 * 2, "20 s of 16 kHz 16-bit mono after a 44-byte header")
        for license in ["coffee-maker/LICENSE", "wake-computer/LICENSE", "noise/LICENSE-kitchen", "README.md"] {
            #expect(FileManager.default.fileExists(atPath: Fixtures.root.appendingPathComponent(license).path), "\(license)")
        }
    }
}

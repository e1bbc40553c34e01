import Foundation
import ParleyTestKit
import Testing

/// Missing test data fails the tests that need it, naming the path; it
/// does not trap (which would end the whole test run).
@Suite struct SharedDataTests {
    @Test func aMissingFileIsAnErrorNamingItsPath() throws {
        let missing = URL(fileURLWithPath: "/nonexistent-parley-data/coffee-maker/grammar.yaml")
        let error = #expect(throws: SharedData.Missing.self) { try SharedData.require(missing) }
        #expect(error?.description.contains("/nonexistent-parley-data/coffee-maker/grammar.yaml") == true)
        #expect(error?.description.contains("../shared/data") == true)
    }

    @Test func tooFewRecordingsInAFolderIsAnErrorNamingTheFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("psd-" + UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data().write(to: folder.appendingPathComponent("b.wav"))
        try Data().write(to: folder.appendingPathComponent("a.wav"))
        try Data().write(to: folder.appendingPathComponent("notes.txt"))
        #expect(try SharedData.wavFiles(in: folder).map(\.lastPathComponent) == ["a.wav", "b.wav"])
        let error = #expect(throws: SharedData.Missing.self) { try SharedData.wavFiles(in: folder, atLeast: 3) }
        #expect(error?.path.hasPrefix(folder.path) == true)
        #expect(throws: SharedData.Missing.self) { try SharedData.wavFiles(in: folder.appendingPathComponent("none")) }
    }
}

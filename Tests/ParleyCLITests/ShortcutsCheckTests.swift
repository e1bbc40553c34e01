import Foundation
import ParleyTestKit
import Testing

/// `parley shortcuts check FILE...` through the real executable: no daemon,
/// exit 0 when every file is valid, else 1 with one FILE:LINE:COLUMN line per problem.
@Suite struct ShortcutsCheckTests {
    func check(_ files: [String], in directory: String) async throws -> (status: Int32, stdout: [String]) {
        let exit = try await ChildProcess.run(
            try ChatConsoleTests.executable().path, ["shortcuts", "check", "--primary-app", "none", "--board", "sim"] + files,
            workingDirectory: directory)
        return (exit.status, exit.standardOutput.split(separator: "\n").map(String.init))
    }

    @Test func validFilesExitZeroAndEachProblemIsOneLine() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        try write("ok.yaml", "name: Ok\nphrases: [soup o'clock]\nactions:\n  - shortcut: Helper\n")
        // Not named on the command line, but in the same folder: `shortcut: Helper` finds it.
        try write("helper.yaml", "name: Helper\nactions: [{speak: hi}]\n")
        try write("bad.yaml", "name: Bad\ntriggers:\n  - time: \"7h30\"\n  - input: door\nactions:\n  - run: SoupChef.OrderSoup\n    with: { soup: pea }\n")
        let good = try await check(["ok.yaml"], in: dir.path)
        #expect(good.status == 0)
        #expect(good.stdout.isEmpty)
        let bad = try await check(["ok.yaml", "bad.yaml"], in: dir.path)
        #expect(bad.status == 1)
        #expect(bad.stdout == [
            "bad.yaml:3:11: malformed time '7h30'; expected a 24-hour local time HH:MM such as \"07:30\"",
        ])
        try write("bad.yaml", "name: Bad\ntriggers:\n  - input: door\nactions:\n  - run: SoupChef.OrderSoup\n    with: { soup: pea }\n")
        #expect(try await check(["bad.yaml"], in: dir.path).stdout == [
            "bad.yaml:6:19: 'pea' is not a value of soup; expected one of clamChowder, tomato, chickenNoodle",
        ])
    }
}

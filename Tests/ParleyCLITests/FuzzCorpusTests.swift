import Foundation
import ParleyTestKit
import Testing

/// Every fuzz target's seed corpus and every input that ever crashed or hung
/// a target (Tests/Fuzz/regressions/<target>/) replayed through the
/// parley-fuzz executable as `swift build` makes it (no fuzzer runtime): a
/// reader that crashes again fails here, without scripts/fuzz.sh.
@Suite struct FuzzCorpusTests {
    static let targets = ["config", "board", "shortcut", "manifest", "handler", "control", "wav", "template", "resolver", "wyoming", "page"]

    static func executable() throws -> URL {
        let beside = try ChatConsoleTests.executable().deletingLastPathComponent().appendingPathComponent("parley-fuzz")
        guard FileManager.default.isExecutableFile(atPath: beside.path) else {
            throw ChatConsoleTests.CLIError("parley-fuzz was not found at \(beside.path); build it with `swift build --product parley-fuzz`")
        }
        return beside
    }

    @Test(arguments: targets)
    func theCorpusAndEveryRegressionReplayCleanly(_ target: String) async throws {
        let root = Fixtures.packageRoot.appendingPathComponent("Tests/Fuzz")
        let folders = ["corpus", "regressions"].map { root.appendingPathComponent("\($0)/\(target)").path }
            .filter { FileManager.default.fileExists(atPath: $0) }
        let seeds = try FileManager.default.contentsOfDirectory(atPath: folders[0])
        #expect(seeds.count >= 2, "a target needs a seed corpus of its own")
        let exit = try await ChildProcess.run(try Self.executable().path, [target] + folders)
        #expect(exit.status == 0, "\(exit.standardError)")
        let replayed = exit.standardOutput.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        #expect(replayed >= seeds.count, "\(exit.standardOutput)")
    }

    @Test func anUnknownTargetIsNamedWithTheKnownOnes() async throws {
        let exit = try await ChildProcess.run(try Self.executable().path, ["yaml", "/dev/null"])
        #expect(exit.status == 2)
        #expect(exit.standardError.contains("config|board|shortcut|manifest|handler|control|wav|template|resolver|wyoming|page"))
    }
}

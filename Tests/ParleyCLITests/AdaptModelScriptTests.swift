import Foundation
import ParleyTestKit
import Testing

/// scripts/adapt-model.sh refuses bad settings before it builds or trains
/// anything, naming the value and what was expected. (The adaptation itself
/// takes minutes and is measured by training/bin/eval-adapt.sh, not here.)
@Suite struct AdaptModelScriptTests {
    func run(environment: [String: String]) async throws -> (status: Int32, stderr: String, created: Bool) {
        let out = "/tmp/pamt-" + String(UUID().uuidString.prefix(8))
        defer { try? FileManager.default.removeItem(atPath: out) }
        let script = Fixtures.packageRoot.appendingPathComponent("scripts/adapt-model.sh").path
        let exit = try await ChildProcess.run(
            "/bin/bash", [script, out], environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        return (exit.status, exit.standardError, FileManager.default.fileExists(atPath: out))
    }

    @Test func anUnknownMethodIsRefusedByName() async throws {
        let outcome = try await run(environment: ["METHOD": "lda"])
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("METHOD=lda") && outcome.stderr.contains("both, map or mllr"))
        #expect(!outcome.created)
    }

    @Test func aStockFolderThatIsNoModelIsRefusedByName() async throws {
        let outcome = try await run(environment: ["STOCK": "/nowhere/en-us"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("/nowhere/en-us") && outcome.stderr.contains("feat.params"))
        #expect(!outcome.created)
    }
}

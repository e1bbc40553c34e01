import Foundation
import ParleyControl
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// `parley update` and `parley status`'s slots through a real parleyd, with
/// the fake rauc and reboot of ParleyTestKit (PARLEY_RAUC, PARLEY_REBOOT).
@Suite struct UpdateDaemonTests {
    static func send(_ socket: String, _ request: ControlRequest) async throws -> Result<ControlResponse, ControlClientError> {
        try await offPool { () -> Result<ControlResponse, ControlClientError> in
            do throws(ControlClientError) { return .success(try ControlClient(path: socket).send(request)) } catch { return .failure(error) }
        }
    }

    @Test func parleyUpdateInstallsRestartsAndTheNextStartSaysItIsBack() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let fake = try FakeRauc(status: "status-as-built")
        try fake.afterInstall("status-b-installed")
        let socket = dir.file("parley.sock")
        let bundle = dir.file("parley-qemu.raucb")
        try Data("a bundle".utf8).write(to: URL(fileURLWithPath: bundle))
        do {
            let process = try await EndToEndTests.startDaemon(dir, settings: "audio: {capture: \"file:none.wav\"}", environment: fake.environment)
            defer { process.terminate() }
            let started = try await EndToEndTests.waitForStatus(socket) { $0.slots != nil }
            #expect(started?.slots.map(SlotSummary.line) == "A (booted, good), B (bad)")
            let tool = try await Executables.start("parley", ["status", "--socket", socket]).wait()
            #expect(tool.standardOutput.contains("slots:        A (booted, good), B (bad)"), "\(tool.standardOutput)")

            let missing = try await Self.send(socket, .update(dir.file("missing.raucb")))
            #expect(missing.failureDescription == "\(dir.file("missing.raucb")): no such file (expected a RAUC bundle, .raucb)")
            let answer = try await Self.send(socket, .update(bundle))
            #expect(try answer.get().message == "Installed parley-qemu.raucb (version 0.1.1+3f9c2e1a) into slot B; restarting.")
            #expect(fake.installs == [bundle])
            try await Poll.until("parleyd ran the reboot command") { fake.reboots == 1 }
            _ = try await process.stop()
        }
        // The restart: slot B booted and marked good; the marker says it was an update.
        try fake.setStatus("status-b-booted")
        let process = try await EndToEndTests.startDaemon(dir, settings: "audio: {capture: \"file:none.wav\"}", environment: fake.environment)
        defer { process.terminate() }
        let back = try await EndToEndTests.waitForStatus(socket) { $0.slots?.first(where: \.booted)?.bootname == "B" }
        #expect(back?.slots.map(SlotSummary.line) == "A 0.1.0+3f9c2e1a (good), B 0.1.1+3f9c2e1a (booted, good)")
        try await Poll.until("parleyd said it is back") {
            let logs = (try? await Self.send(socket, .logs(limit: 500)).get().logs) ?? []
            return logs.contains { $0.contains("update: back") && $0.contains("0.1.1+3f9c2e1a") }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("state/update/pending.json")))
    }

    @Test func withoutRAUCStatusSaysNothingAboutSlotsAndUpdateIsRefused() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let socket = dir.file("parley.sock")
        let bundle = dir.file("parley-qemu.raucb")
        try Data("a bundle".utf8).write(to: URL(fileURLWithPath: bundle))
        let process = try await EndToEndTests.startDaemon(dir, settings: "audio: {capture: \"file:none.wav\"}",
                                                         environment: ["PARLEY_RAUC": dir.file("no-rauc")])
        defer { process.terminate() }
        let status = try await EndToEndTests.waitForStatus(socket) { _ in true }
        #expect(status != nil && status?.slots == nil)
        let tool = try await Executables.start("parley", ["status", "--socket", socket]).wait()
        #expect(!tool.standardOutput.contains("slots:"))
        let refused = try await Self.send(socket, .update(bundle))
        #expect(refused.failureDescription?.contains("no RAUC") == true)
    }
}

extension Result where Failure == ControlClientError {
    var failureDescription: String? {
        if case .failure(let error) = self { return error.description }
        return nil
    }
}

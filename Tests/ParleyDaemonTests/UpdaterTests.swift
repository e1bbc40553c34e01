import Foundation
import Logging
import ParleyControl
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyDaemon

/// Updates (issue 52, item 4): RAUC's slot status read, a bundle installed
/// through `rauc install` with the fake rauc (ParleyTestKit's FakeRauc),
/// what the speaker says, the restart and "I'm back".
@Suite struct UpdaterTests {
    final class Said: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func add(_ line: String) { lines.withLock { $0.append(line) } }
    }

    static func updater(_ fake: FakeRauc?, state: TemporaryDirectory, said: Said) -> Updater {
        Updater(rauc: Rauc(path: fake?.path ?? state.file("no-rauc")), reboot: [fake?.rebootPath ?? "/bin/true"],
                stateDirectory: state.path, logger: Logger(label: "test.update"), say: { said.add($0) })
    }

    static func bundle(_ dir: TemporaryDirectory, _ name: String = "parley-qemu.raucb") throws -> String {
        let path = dir.file(name)
        try Data("hsqs not really a bundle".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func readsRAUCsJSONIntoBothSlotsInBootNameOrder() throws {
        let data = try Data(contentsOf: Fixtures.raucStatus("status-b-installed"))
        let slots = try RaucStatus.slots(fromJSON: data, source: "rauc status")
        #expect(slots.map(\.bootname) == ["A", "B"])
        #expect(slots[0] == SlotSummary(name: "rootfs.0", bootname: "A", state: "booted", bootStatus: "good",
                                        version: "0.1.0+3f9c2e1a", compatible: "parley-qemu-amd64", installed: "2026-11-28T08:03:12Z"))
        #expect(slots[1].version == "0.1.1+3f9c2e1a" && slots[1].bootStatus == "good" && !slots[1].booted)
        #expect(SlotSummary.line(slots) == "A 0.1.0+3f9c2e1a (booted, good), B 0.1.1+3f9c2e1a (good)")
        let built = try RaucStatus.slots(fromJSON: Data(contentsOf: Fixtures.raucStatus("status-as-built")), source: "rauc status")
        #expect(SlotSummary.line(built) == "A (booted, good), B (bad)")
    }

    @Test func outputThatIsNotRAUCsJSONIsAnErrorNamingItsSource() throws {
        let error = #expect(throws: ToolError.self) {
            try RaucStatus.slots(fromJSON: Data("booted: A".utf8), source: "/usr/bin/rauc status")
        }
        #expect(error?.description.contains("/usr/bin/rauc status") == true)
        #expect(error?.description.contains("booted: A") == true)
    }

    @Test func withoutRAUCThereAreNoSlotsAndNoInstall() async throws {
        let state = try TemporaryDirectory(), said = Said()
        let updater = Self.updater(nil, state: state, said: said)
        #expect(await updater.slots() == nil)
        let error = await #expect(throws: UpdateError.self) { try await updater.install(try Self.bundle(state)) }
        #expect(error?.description.contains("no RAUC") == true)
        #expect(said.all.isEmpty)
    }

    @Test func aRAUCThatCannotTellGivesNoSlots() async throws {
        let fake = try FakeRauc(status: nil), state = try TemporaryDirectory()
        #expect(await Self.updater(fake, state: state, said: Said()).slots() == nil)
    }

    @Test func installsSaysSoRestartsAndLeavesTheMarker() async throws {
        let fake = try FakeRauc(status: "status-as-built"), state = try TemporaryDirectory(), said = Said()
        try fake.afterInstall("status-b-installed")
        let updater = Self.updater(fake, state: state, said: said)
        let bundle = try Self.bundle(state)
        let answer = try await updater.install(bundle)
        #expect(answer == "Installed parley-qemu.raucb (version 0.1.1+3f9c2e1a) into slot B; restarting.")
        #expect(fake.installs == [bundle])
        try await Poll.until("the reboot command ran") { fake.reboots == 1 }
        #expect(said.all == [Updater.installing, Updater.restarting])
        let marker = try JSONDecoder().decode(Updater.Marker.self, from: Data(contentsOf: URL(fileURLWithPath: updater.markerPath)))
        #expect(marker == Updater.Marker(from: "A", fromVersion: nil, to: "B", version: "0.1.1+3f9c2e1a"))
        // Until the restart, a second bundle is refused.
        await #expect(throws: UpdateError.self) { try await updater.install(bundle) }
    }

    @Test func aRefusedBundleIsAnErrorNamingTheFileWithRAUCsReason() async throws {
        let fake = try FakeRauc(status: "status-as-built"), state = try TemporaryDirectory(), said = Said()
        try fake.failInstall("Failed to check bundle payload: bundle size (1048576) is too small: truncated?")
        let updater = Self.updater(fake, state: state, said: said)
        let bundle = try Self.bundle(state, "truncated.raucb")
        let error = await #expect(throws: UpdateError.self) { try await updater.install(bundle) }
        #expect(error?.description == "\(bundle): not installed: Failed to check bundle payload: bundle size (1048576) is too small: truncated?")
        #expect(said.all == [Updater.installing, "The update could not be installed. Nothing has changed."])
        #expect(fake.reboots == 0)
        #expect(!FileManager.default.fileExists(atPath: updater.markerPath))
        // Not busy any more: the next one is tried (and fails the same way).
        await #expect(throws: UpdateError.self) { try await updater.install(bundle) }
        #expect(fake.installs.count == 2)
    }

    @Test func aSecondUpdateWhileOneRunsIsRefused() async throws {
        let fake = try FakeRauc(status: "status-as-built"), state = try TemporaryDirectory(), said = Said()
        try fake.afterInstall("status-b-installed")
        fake.hold()
        defer { fake.release() }
        let updater = Self.updater(fake, state: state, said: said)
        let first = try Self.bundle(state, "first.raucb"), second = try Self.bundle(state, "second.raucb")
        let running = Task { try await updater.install(first) }
        try await Poll.until("rauc install started") { fake.installs.count == 1 }
        let error = await #expect(throws: UpdateError.self) { try await updater.install(second) }
        #expect(error?.description == "\(second): refused: an update (\(first)) is already being installed; wait for it to finish")
        fake.release()
        #expect(try await running.value.hasPrefix("Installed first.raucb"))
        #expect(fake.installs == [first])
    }

    @Test func aPathThatIsNoBundleFileIsRefusedByName() async throws {
        let fake = try FakeRauc(status: "status-as-built"), state = try TemporaryDirectory()
        let updater = Self.updater(fake, state: state, said: Said())
        let missing = state.file("missing.raucb")
        let error = await #expect(throws: UpdateError.self) { try await updater.install(missing) }
        #expect(error?.description == "\(missing): no such file (expected a RAUC bundle, .raucb)")
        let folder = await #expect(throws: UpdateError.self) { try await updater.install(state.path) }
        #expect(folder?.description.contains("not a regular file") == true)
        let relative = await #expect(throws: UpdateError.self) { try await updater.install("update.raucb") }
        #expect(relative?.description.contains("absolute path") == true)
        #expect(fake.installs.isEmpty)
    }

    @Test func afterTheRestartSaysItIsBackOnceTheSlotIsGood() async throws {
        let fake = try FakeRauc(status: "status-b-booted"), state = try TemporaryDirectory(), said = Said()
        let updater = Self.updater(fake, state: state, said: said)
        try FileManager.default.createDirectory(atPath: updater.directory, withIntermediateDirectories: true)
        try JSONEncoder().encode(Updater.Marker(from: "A", fromVersion: "0.1.0", to: "B", version: "0.1.1+3f9c2e1a"))
            .write(to: URL(fileURLWithPath: updater.markerPath))
        await updater.announceReturn(polls: 5, every: .milliseconds(10))
        #expect(said.all == ["Updated to version 0.1.1+3f9c2e1a. I'm back."])
        #expect(!FileManager.default.fileExists(atPath: updater.markerPath))
        // Fell back to A: says so.
        let back = Updater.returnSentence(Updater.Marker(from: "A", to: "B"),
                                          booted: SlotSummary(name: "rootfs.0", bootname: "A", state: "booted", bootStatus: "good", version: "0.1.0"))
        #expect(back == "The update did not start, so I went back to the version from before, 0.1.0. I'm back.")
    }
}

/// `update.folder`: the newest bundle newer than the running slot's is
/// installed; older ones, ones a slot already had and unsigned ones are not.
@Suite struct UpdateFolderTests {
    @Test func theNewestNewerBundleOfTheFolderIsInstalled() async throws {
        let fake = try FakeRauc(status: "status-b-booted"), state = try TemporaryDirectory(), folder = try TemporaryDirectory()
        let updater = UpdaterTests.updater(fake, state: state, said: UpdaterTests.Said())
        for (name, version) in [("old.raucb", "0.1.0+3f9c2e1a"), ("same.raucb", "0.1.1+3f9c2e1a"), ("new.raucb", "0.1.2+77aa"),
                                ("newer.raucb", "0.1.10+77aa")] {
            _ = try UpdaterTests.bundle(folder, name)
            try fake.setVersion(version, forBundleNamed: name)
        }
        _ = try UpdaterTests.bundle(folder, "unsigned.raucb")   // rauc info refuses it
        try "not a bundle".write(toFile: folder.file("notes.txt"), atomically: true, encoding: .utf8)
        let outcome = await updater.checkFolder(folder.path)
        #expect(fake.installs == [folder.file("newer.raucb")], "\(outcome)")
        #expect(outcome.hasPrefix("Installed newer.raucb"))
    }

    @Test func nothingNewerInstallsNothing() async throws {
        let fake = try FakeRauc(status: "status-b-booted"), state = try TemporaryDirectory(), folder = try TemporaryDirectory()
        let updater = UpdaterTests.updater(fake, state: state, said: UpdaterTests.Said())
        _ = try UpdaterTests.bundle(folder, "old.raucb")
        try fake.setVersion("0.1.0+3f9c2e1a", forBundleNamed: "old.raucb")
        #expect(await updater.checkFolder(folder.path) == "no bundle in \(folder.path) newer than 0.1.1+3f9c2e1a")
        #expect(await updater.checkFolder(folder.file("missing")).hasPrefix("\(folder.file("missing")) cannot be read"))
        #expect(fake.installs.isEmpty)
    }

    /// `update.url`: RAUC reads the bundle at the address (streamed), and
    /// installs from the address when it is newer.
    @Test func aNewerBundleAtTheAddressIsInstalledFromIt() async throws {
        let fake = try FakeRauc(status: "status-b-booted"), state = try TemporaryDirectory()
        let updater = UpdaterTests.updater(fake, state: state, said: UpdaterTests.Said())
        let url = "http://10.0.2.2:8123/releases/parley-qemu.raucb"
        try fake.setVersion("0.1.2+77aa", forBundleNamed: "parley-qemu.raucb")
        let outcome = await updater.checkURL(url)
        #expect(fake.installs == [url], "\(outcome)")
        #expect(outcome.hasPrefix("Installed parley-qemu.raucb (version"), "\(outcome)")
    }

    @Test func theSameOrAnUnsignedBundleAtTheAddressIsLeft() async throws {
        let fake = try FakeRauc(status: "status-b-booted"), state = try TemporaryDirectory()
        let updater = UpdaterTests.updater(fake, state: state, said: UpdaterTests.Said())
        try fake.setVersion("0.1.1+3f9c2e1a", forBundleNamed: "same.raucb")
        #expect(await updater.checkURL("https://updates.example.org/same.raucb")
            == "the bundle at https://updates.example.org/same.raucb is not newer than 0.1.1+3f9c2e1a")
        // rauc info refuses it (the fake knows no version for it): skipped, nothing installed.
        let unsigned = await updater.checkURL("https://updates.example.org/unsigned.raucb")
        // RAUC's reason (the stand-in's names the bundle, as rauc info's own message does).
        #expect(unsigned == "https://updates.example.org/unsigned.raucb: https://updates.example.org/unsigned.raucb: signature verification failed: "
            + "unable to get local issuer certificate: nothing installed", "\(unsigned)")
        #expect(fake.installs.isEmpty)
    }

    @Test func versionsCompareNumberByNumber() {
        #expect(Updater.isNewer("0.1.10", than: "0.1.9"))
        #expect(Updater.isNewer("0.2.0+k1", than: "0.1.9+k1"))
        #expect(!Updater.isNewer("0.1.0", than: "0.1.0"))
        #expect(!Updater.isNewer("0.1.0", than: "0.1.1+3f9c2e1a"))
    }
}

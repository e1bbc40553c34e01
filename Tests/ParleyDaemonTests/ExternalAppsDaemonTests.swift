import Foundation
import Logging
import ParleyConfiguration
import ParleyCore
@testable import ParleyDaemon
import ParleyStore
import ParleyTestKit
import Testing

/// External apps in the wired daemon: the apps folder is read at start and
/// watched while it runs; a folder added, changed or removed is loaded,
/// reloaded or unloaded, and its phrases are heard at once.
@Suite struct ExternalAppsDaemonTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/apps")

    @Test func foldersDroppedInChangedAndRemovedWhileTheDaemonRuns() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var config = ParleyConfig()
        config.acousticModel = "stock"  // the stock model: the decoders' model is process-wide (AcousticModel.configuredDefault) and these tests assume it
        config.stateDirectory = dir.file("state")
        config.controlSocket = dir.file("run/parley.sock")
        config.audio.capture = .file("missing.wav")
        let apps = URL(fileURLWithPath: config.appsFolderPath)
        // One app is there before the daemon starts.
        try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("shopping-list"), to: apps.appendingPathComponent("shopping-list"))
        let store = try StateStore(directory: config.stateDirectory)
        let components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        let service = try #require(components.services.compactMap { $0 as? AppsService }.first)
        let watching = Task { try await service.run() }
        let catalog = try #require(components.catalog)
        let conversation = try #require(components.conversation)
        func installed() async -> [String] { await catalog.apps().filter { $0.external == true }.compactMap(\.identifier) }

        #expect(await installed() == ["ShoppingList"])
        #expect(try await conversation.hear("add milk to the shopping list").spoken == ["Added milk. The list has 1 item."])

        // Dropped in (copied into a hidden folder, then renamed, as an installer does).
        let staging = apps.appendingPathComponent(".kitchen-lights")
        try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("kitchen-lights"), to: staging)
        try FileManager.default.moveItem(at: staging, to: apps.appendingPathComponent("kitchen-lights"))
        #expect(try await Poll.holds("the dropped-in Kitchen Lights installed", polls: 200, every: .milliseconds(50)) {
            await installed() == ["KitchenLights", "ShoppingList"]
        })
        #expect(try await conversation.hear("turn off the lights").spoken == ["Every light is already off."])

        // Changed: the handler's answer differs once the folder is reloaded.
        let handler = apps.appendingPathComponent("kitchen-lights/handler.py")
        let code = try String(contentsOf: handler, encoding: .utf8)
        try code.replacingOccurrences(of: "Every light is already off.", with: "All the lights are off already.")
            .write(to: handler, atomically: false, encoding: .utf8)
        #expect(try await Poll.holds("the changed handler reloaded", polls: 200, every: .milliseconds(50)) {
            try await conversation.hear("turn off the lights").spoken == ["All the lights are off already."]
        })

        // Copied in with cp -r (mkdir, then files): seen through the created folder.
        let copy = try await ChildProcess.run("/bin/cp", ["-r", Self.examples.appendingPathComponent("kitchen-lights").path,
                                                         apps.appendingPathComponent("porch").path])
        #expect(copy.succeeded)
        // A second Kitchen Lights clashes with the first: refused, the first keeps working.
        #expect(try await Poll.holds("the second Kitchen Lights refused", polls: 200, every: .milliseconds(50)) {
            await service.host.refusals["porch"] != nil
        })
        #expect(await installed() == ["KitchenLights", "ShoppingList"])

        // Removed: unloaded, its phrases no longer heard.
        try FileManager.default.removeItem(at: apps.appendingPathComponent("kitchen-lights"))
        #expect(try await Poll.holds("the removed Kitchen Lights unloaded", polls: 200, every: .milliseconds(50)) {
            await installed() == ["ShoppingList"]
        })
        #expect(try await conversation.hear("turn off the lights").spoken != ["All the lights are off already."])

        watching.cancel()
        _ = await watching.result
        await store.close()
    }
}

import Foundation
import Logging
import ParleyConfiguration
import ParleyControl
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

    /// A daemon's configuration in `dir`, without audio in, with these examples in its apps folder.
    static func config(_ dir: TemporaryDirectory, apps: [String]) throws -> ParleyConfig {
        var config = ParleyConfig()
        config.acousticModel = "stock"  // the stock model: the decoders' model is process-wide (AcousticModel.configuredDefault) and these tests assume it
        config.stateDirectory = dir.file("state")
        config.controlSocket = dir.file("run/parley.sock")
        config.audio.capture = .file("missing.wav")
        // These tests are about which apps are loaded and answer, not about
        // the time limit: beside the whole suite's load on 2 cores a
        // handler's first perform (a Python start) once took over the
        // shipped 10 s and the answer was the time-out's.
        config.timeouts.perform = .seconds(60)
        let folder = URL(fileURLWithPath: config.appsFolderPath)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for app in apps {
            try FileManager.default.copyItem(at: examples.appendingPathComponent(app), to: folder.appendingPathComponent(app))
        }
        return config
    }

    @Test func foldersDroppedInChangedAndRemovedWhileTheDaemonRuns() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // One app is there before the daemon starts.
        let config = try Self.config(dir, apps: ["shopping-list"])
        let apps = URL(fileURLWithPath: config.appsFolderPath)
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
    /// Turned off (the page's switch, `parley apps off`): the handler stops,
    /// the phrases are no longer understood, and it stays so after a restart
    /// (a new daemon on the same state); on again, it answers.
    @Test func anAppTurnedOffStaysOffAcrossARestartAndComesBackOn() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let config = try Self.config(dir, apps: ["kitchen-lights"])
        let store = try StateStore(directory: config.stateDirectory)
        func controller() async throws -> (DaemonController, DaemonComponents) {
            var components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
            components.services = []
            return (DaemonController(config: config, configFile: nil, store: store, components: components,
                                     logs: LogRing(capacity: 10), logger: Logger(label: "test")), components)
        }
        let (first, firstComponents) = try await controller()
        // The handler's standard error is kept whatever the log lets through.
        // Waited for first: on a loaded machine (a whole suite beside an image
        // build) the handler's interpreter was not up within the first say's
        // perform time (seen twice); this test is about on, off and restarts.
        #expect(try await Poll.holds("the handler's ready line on standard error", polls: 400, every: .milliseconds(25)) {
            await first.handle(.externalApps).externalApps?.first?.stderr.contains { $0.contains("ready:") } == true
        })
        #expect(await first.handle(.say("turn off the lights")).spoken == ["Every light is already off."])
        let states = await first.handle(.externalApps).externalApps ?? []
        #expect(states.map(\.identifier) == ["KitchenLights"])
        #expect(states.first?.state.hasPrefix("running (pid ") == true)

        let off = await first.handle(.setAppEnabled(identifier: "KitchenLights", enabled: false))
        #expect(off.ok, "\(off.error ?? "")")
        #expect(await first.handle(.externalApps).externalApps?.map(\.state) == ["off"])
        #expect(await first.handle(.resolve("turn off the lights")).resolution?.matched == false)
        #expect(await first.handle(.apps).apps?.contains { $0.identifier == "KitchenLights" } == false)
        // Only an app the daemon knows is named; nothing else is turned off.
        let unknown = await first.handle(.setAppEnabled(identifier: "../kitchen-lights", enabled: false))
        #expect(unknown.error == "no external app \"../kitchen-lights\" (see `parley apps status`)")
        await firstComponents.apps?.host.stopAll()

        // A restart: still off, its handler not started.
        let (second, secondComponents) = try await controller()
        #expect(await second.handle(.externalApps).externalApps?.map(\.state) == ["off"])
        #expect(await second.handle(.resolve("turn off the lights")).resolution?.matched == false)
        #expect(await second.handle(.setAppEnabled(identifier: "KitchenLights", enabled: true)).ok)
        #expect(await second.handle(.externalApps).externalApps?.first?.state.hasPrefix("running") == true)
        #expect(await second.handle(.say("turn off the lights")).spoken == ["Every light is already off."])
        await secondComponents.apps?.host.stopAll()
        await store.close()
    }

    /// `parley apps install`: the apps that come with Parley are listed, one
    /// is installed by its folder name and answers at once; an unknown name,
    /// an app already there and an app refused beside the others are said
    /// as such, and a refused app is not copied.
    @Test func anAppThatComesWithParleyIsInstalledByName() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let config = try Self.config(dir, apps: [])
        let store = try StateStore(directory: config.stateDirectory)
        var components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        components.services = []
        let controller = DaemonController(config: config, configFile: nil, store: store, components: components,
                                          logs: LogRing(capacity: 10), logger: Logger(label: "test"))
        let apps = URL(fileURLWithPath: config.appsFolderPath)

        let listed = await controller.handle(.installApp(name: nil))
        #expect(listed.ok)
        for line in ["  home-assistant: Home Assistant", "  kitchen-lights: Kitchen Lights", "  shopping-list: Shopping List"] {
            #expect(listed.message?.contains(line + "\n") == true, "\(listed.message ?? "")")
        }
        #expect(await controller.handle(.resolve("turn off the lights")).resolution?.matched == false)

        let installed = await controller.handle(.installApp(name: "kitchen-lights"))
        #expect(installed.ok, "\(installed.error ?? "")")
        #expect(installed.message?.hasPrefix("Installed Kitchen Lights in \(apps.appendingPathComponent("kitchen-lights").path): ") == true)
        #expect(await controller.handle(.say("turn off the lights")).spoken == ["Every light is already off."])
        #expect(await controller.handle(.installApp(name: nil)).message?.contains("  kitchen-lights: Kitchen Lights [installed]\n") == true)
        // No copy left under its hidden name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: apps.path).sorted() == ["kitchen-lights"])

        let again = await controller.handle(.installApp(name: "kitchen-lights"))
        #expect(again.error == "kitchen-lights: \(apps.appendingPathComponent("kitchen-lights").path) already exists: the app is installed (remove that folder first to install it afresh)")
        let unknown = await controller.handle(.installApp(name: "../kitchen-lights"))
        #expect(unknown.error == "no app \"../kitchen-lights\" comes with Parley (there are: home-assistant, kitchen-lights, shopping-list)")
        // Home Assistant's phrases do not name it: without `primary_app` it is refused, with the reason per phrase, and not copied.
        let refused = await controller.handle(.installApp(name: "home-assistant"))
        #expect(refused.error?.hasPrefix("home-assistant: it cannot be installed beside the apps there:\n") == true, "\(refused.error ?? "")")
        #expect(refused.error?.contains("manifest.yaml:") == true)
        #expect(!FileManager.default.fileExists(atPath: apps.appendingPathComponent("home-assistant").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: apps.path).sorted() == ["kitchen-lights"])
        await components.apps?.host.stopAll()
        await store.close()
    }
}

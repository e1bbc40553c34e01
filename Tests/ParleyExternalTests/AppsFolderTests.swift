import Foundation
import ParleyExternal
import ParleyIntents
import Testing

/// An apps folder while it is used: folders added, changed and removed are
/// loaded, reloaded and unloaded; a broken one is refused alone.
@Suite struct AppsFolderTests {
    let log = RecordedLog()

    static let echoHandler = """
        import json, sys
        tag = open("tag.txt").read().strip()
        for line in sys.stdin:
            m = json.loads(line)
            if m.get("method") == "shutdown": break
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"dialog": tag}}) + "\\n"); sys.stdout.flush()
        """

    func install(_ apps: URL, _ name: String, identifier: String, appName: String, tag: String) throws {
        let folder = apps.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.echoHandler.write(to: folder.appendingPathComponent("handler.py"), atomically: true, encoding: .utf8)
        try tag.write(to: folder.appendingPathComponent("tag.txt"), atomically: true, encoding: .utf8)
        try manifest(identifier: identifier, name: appName).write(to: folder.appendingPathComponent("manifest.yaml"), atomically: true, encoding: .utf8)
    }

    func perform(_ host: ExternalAppsHost, _ identifier: String) async throws -> String {
        let app = try #require(await host.loaded.first { $0.description.identifier == identifier })
        let run = try #require(app.description.intent("SetLight")).implementation.makeRun()
        return try await run.perform(context: testContext()).dialog
    }

    @Test func foldersAddedChangedAndRemovedWhileRunning() async throws {
        let root = try AppFolder("apps")
        defer { root.remove() }
        let host = ExternalAppsHost(directory: root.url, builtIn: builtInApps, logger: log.logger)
        #expect(await host.refresh().isEmpty)

        try install(root.url, "lights", identifier: "KitchenLights", appName: "Kitchen Lights", tag: "first")
        #expect(await host.refresh() == .init(added: ["lights"]))
        #expect(try await perform(host, "KitchenLights") == "first")
        #expect(await host.refresh().isEmpty, "nothing changed: the running handler is kept")

        // A change to any file of the folder reloads the app with a new handler.
        try "second".write(to: root.url.appendingPathComponent("lights/tag.txt"), atomically: true, encoding: .utf8)
        #expect(await host.refresh() == .init(changed: ["lights"]))
        #expect(try await perform(host, "KitchenLights") == "second")

        // A second app that clashes with the first is refused; the first keeps working.
        try install(root.url, "more-lights", identifier: "MoreLights", appName: "Kitchen Lights", tag: "x")
        #expect(await host.refresh() == .init(refused: ["more-lights"]))
        #expect(await host.refusals["more-lights"]?.errors.first?.reason == "the name 'kitchen lights' already names the app 'Kitchen Lights'")
        #expect(log.contains("apps: refused 'more-lights':"))
        #expect(try await perform(host, "KitchenLights") == "second")

        // Fixed, it loads; removed, it is unloaded and its handler stopped.
        try manifest(identifier: "MoreLights", name: "Porch Lights").replacingOccurrences(of: "the lights", with: "the porch")
            .write(to: root.url.appendingPathComponent("more-lights/manifest.yaml"), atomically: true, encoding: .utf8)
        #expect(await host.refresh() == .init(added: ["more-lights"]))
        let porch = try #require(await host.loaded.first { $0.description.identifier == "MoreLights" })
        try FileManager.default.removeItem(at: root.url.appendingPathComponent("more-lights"))
        #expect(await host.refresh() == .init(removed: ["more-lights"]))
        #expect(await porch.handler.status == .stopped)
        #expect(await host.descriptions.map(\.identifier) == ["KitchenLights"])
        await host.stopAll()
    }

    @Test func aScanLoadsValidFoldersAndRefusesTheRestAlone() throws {
        let root = try AppFolder("apps")
        defer { root.remove() }
        try install(root.url, "a-lights", identifier: "KitchenLights", appName: "Kitchen Lights", tag: "x")
        try install(root.url, "b-broken", identifier: "Broken", appName: "Broken", tag: "x")
        try "identifier: [".write(to: root.url.appendingPathComponent("b-broken/manifest.yaml"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: root.url.appendingPathComponent(".partial-copy"), withIntermediateDirectories: true)
        let scan = AppsFolder.load(directory: root.url, builtIn: builtInApps, logger: log.logger)
        #expect(scan.loaded.map(\.description.identifier) == ["KitchenLights"])
        #expect(Array(scan.refused.keys) == ["b-broken"])
    }
}


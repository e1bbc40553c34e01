import Foundation
import ParleyTestKit
import Testing

/// External apps through the real `parley` executable: a console
/// conversation with `--apps`, and `parley apps check`.
@Suite struct ExternalAppsCLITests {
    static let examples = Fixtures.packageRoot.appendingPathComponent("examples/apps")

    /// A temporary apps folder with copies of both example apps.
    func appsFolder() throws -> URL {
        let root = URL(fileURLWithPath: "/tmp/pcli-" + String(UUID().uuidString.prefix(8)))
        let apps = root.appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
        for name in ["kitchen-lights", "shopping-list"] {
            try FileManager.default.copyItem(at: Self.examples.appendingPathComponent(name), to: apps.appendingPathComponent(name))
        }
        return apps
    }

    func parley(_ arguments: [String]) async throws -> (status: Int32, stdout: String) {
        let exit = try await ChildProcess.run(try ChatConsoleTests.executable().path, arguments)
        return (exit.status, exit.standardOutput)
    }

    @Test func aConsoleConversationWithExternalApps() async throws {
        let apps = try appsFolder()
        defer { try? FileManager.default.removeItem(at: apps.deletingLastPathComponent()) }
        let state = apps.deletingLastPathComponent().appendingPathComponent("state").path
        let console = ChatConsoleTests()
        let outcome = try await console.chat([
            "hey, switch the kitchen light with kitchen lights", "on",
            "add flour to the shopping list", "put milk on my shopping list",
            "what's on the shopping list",
            "clear the shopping list", ":press",
        ], arguments: ["--apps", apps.path, "--state", state])
        #expect(outcome.status == 0)
        #expect(console.device(outcome) == [
            "device: Which way should I switch it? On or off?",
            "device: Done. The kitchen light is on.",
            "device: Added flour. The list has 1 item.",
            "device: Added milk. The list has 2 items.",
            "device: 2 items: flour and milk.",
            "device: Remove all 2 items from the shopping list. Say yes or press the button to delete it, or say cancel.",
            "device: The shopping list is empty now.",
        ])
        #expect(console.performed(outcome) == [
            #"performed: KitchenLights.SetLight {"room":"kitchen","state":"on"}"#,
            #"performed: ShoppingList.AddItem {"item":"flour"}"#,
            #"performed: ShoppingList.AddItem {"item":"milk"}"#,
            "performed: ShoppingList.ReadList {}",
            "performed: ShoppingList.ClearList {}",
        ])
        #expect(outcome.stderr.contains("[KitchenLights] kitchen light on (dry run)"), "the handler's standard error reaches the log")
        // The list was kept in the app's data folder inside the state folder, not in the app folder.
        #expect(FileManager.default.fileExists(atPath: state + "/app-data/ShoppingList/list.txt"))
        #expect(!FileManager.default.fileExists(atPath: apps.path + "/shopping-list/list.txt"))
    }

    @Test func aRefusedAppFolderIsNamedAndTheRestWork() async throws {
        let apps = try appsFolder()
        defer { try? FileManager.default.removeItem(at: apps.deletingLastPathComponent()) }
        try "identifier: Broken\nname: Broken\nhandler: [sh]\nintents: []\n"
            .write(to: apps.appendingPathComponent("kitchen-lights/manifest.yaml"), atomically: true, encoding: .utf8)
        let console = ChatConsoleTests()
        let outcome = try await console.chat(["add flour to the shopping list"], arguments: ["--apps", apps.path])
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains("app folder 'kitchen-lights' refused:\n\(apps.path)/kitchen-lights/manifest.yaml:4:10: intents must list at least one intent"))
        #expect(console.device(outcome) == ["device: Added flour. The list has 1 item."])
    }

    @Test func appsCheckExitsZeroOrOneWithFileLineColumnLines() async throws {
        let good = try await parley(["apps", "check", Self.examples.appendingPathComponent("kitchen-lights").path])
        #expect(good.status == 0)
        #expect(good.stdout.hasSuffix("kitchen-lights/manifest.yaml: ok: KitchenLights (Kitchen Lights), 3 intents, 3 shortcuts, 7 phrases\n"))
        let apps = try appsFolder()
        defer { try? FileManager.default.removeItem(at: apps.deletingLastPathComponent()) }
        let folder = apps.appendingPathComponent("shopping-list")
        try "identifier: ShoppingList\nname: Soup Chef\nhandler: [./handler.sh]\nintents:\n  - {identifier: Add, title: Add}\nshortcuts:\n  - {intent: Add, phrases: [\"add it\"]}\n"
            .write(to: folder.appendingPathComponent("manifest.yaml"), atomically: true, encoding: .utf8)
        let bad = try await parley(["apps", "check", folder.path])
        #expect(bad.status == 1)
        let file = folder.appendingPathComponent("manifest.yaml").path
        #expect(bad.stdout == """
            \(file):2:7: the name 'soup chef' already names the app 'Soup Chef'
            \(file):7:29: phrase 'add it': does not contain the app's name or a synonym (Soup Chef); write {app} or the name

            """)
        // Against the other apps of an apps folder: a second Kitchen Lights clashes.
        let twin = apps.appendingPathComponent("twin")
        try FileManager.default.copyItem(at: apps.appendingPathComponent("kitchen-lights"), to: twin)
        let clash = try await parley(["apps", "check", twin.path, "--apps", apps.path])
        #expect(clash.status == 1)
        #expect(clash.stdout.contains("another app has the identifier 'KitchenLights'"))
    }
}

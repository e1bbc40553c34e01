import Foundation
import Logging
import ParleyApps
import ParleyExternal
import ParleyIntents
import ParleyCore
import ParleyTestKit
import Testing

/// A folder under /tmp removed by `remove()`.
struct AppFolder {
    let url: URL

    init(_ name: String = "app") throws {
        url = URL(fileURLWithPath: "/tmp/pxt-" + String(UUID().uuidString.prefix(8))).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String, executable: Bool = false) throws {
        let file = url.appendingPathComponent(name)
        if executable { try writeExecutable(text, toFile: file.path) } else { try text.write(to: file, atomically: true, encoding: .utf8) }
    }

    var manifestPath: String { url.appendingPathComponent("manifest.yaml").path }

    func remove() { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
}

/// Log lines kept for assertions (what the daemon's journal would get).
struct RecordedLog: Sendable {
    let store = RecordingLogHandler.Store()
    var logger: Logger { Logger(label: "test") { _ in RecordingLogHandler(store: store) } }
    var all: [String] { store.all.map(\.message) }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}

/// The context an intent run gets, with nothing behind it.
func testContext() -> IntentContext {
    IntentContext(app: "KitchenLights", now: Date(), appData: EphemeralAppDataStore(), services: NoServices())
}

struct NoServices: IntentServices {
    func donate(app: String, _ request: DonationRequest) async throws {}
    func schedule(app: String, id: String, at date: Date, announcement: String) async {}
    func cancelScheduled(app: String, id: String) async {}
    func scheduledDate(app: String, id: String) async -> Date? { nil }
    func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String] { [] }
}

/// The apps compiled into Parley, as registration sees them.
let builtInApps = BundledApps.all.map(AppDescription.init)

/// A minimal valid manifest, with room for one more intent, key or shortcut.
func manifest(identifier: String = "KitchenLights", name: String = "Kitchen Lights", handler: String = "[python3, handler.py]",
              extraTop: String = "", extraIntents: String = "", shortcuts: String? = nil) -> String {
    """
    identifier: \(identifier)
    name: \(name)
    synonyms: [the lights]
    handler: \(handler)
    \(extraTop)
    intents:
      - identifier: SetLight
        title: Set a light
        category: set
        summary: "Turn {state} the {room} light"
        parameters:
          - name: room
            type: enum
            prompt: Which room?
            values:
              - {value: kitchen, display: kitchen, synonyms: [cooker]}
              - {value: hall, display: hall}
          - name: state
            type: enum
            prompt: On or off?
            values: [{value: "on", display: "on"}, {value: "off", display: "off"}]
          - name: brightness
            type: integer
            optional: true
            min: 1
            max: 100
            above-max: Brightness goes up to one hundred.
    \(extraIntents)
    shortcuts:
    \(shortcuts ?? "  - intent: SetLight\n    phrases: [\"switch the {room} light with {app}\", \"use {app}\"]")
    """
}

import Foundation
import Logging
import ParleyIntents
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyExternal

/// The `options-changed` notification (dynamic entity values: names a
/// handler fetches from a hub after it starts) and the primary external app.
@Suite struct OptionsChangedTests {
    /// A handler that sends `options-changed` `notifications` times at
    /// start, then answers every request with `answer`.
    static func handler(notifications: Int, answer: String) -> String {
        #"""
        import json, sys
        for n in range(\#(notifications)):
            print(json.dumps({"jsonrpc": "2.0", "method": "options-changed"}), flush=True)
        for line in sys.stdin:
            m = json.loads(line)
            if m.get("method") == "shutdown": break
            print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"dialog": "\#(answer)"}}), flush=True)
        """#
    }

    @Test func theNotificationIsReadAndOtherNotificationsAreNot() {
        #expect(JSONRPC.reply(to: Data(#"{"jsonrpc":"2.0","method":"options-changed"}"#.utf8)) == .optionsChanged)
        #expect(JSONRPC.reply(to: Data(#"{"method":"options-changed","params":{"parameter":"target"}}"#.utf8)) == .optionsChanged)
        // With an id it is not the notification: an id answers a request.
        #expect(JSONRPC.reply(to: Data(#"{"id":3,"method":"options-changed"}"#.utf8)) == .answer(id: 3, .failure(.badAnswer("neither a result nor an error"))))
        #expect(JSONRPC.reply(to: Data(#"{"method":"options-changed","id":"x"}"#.utf8)) == .unsolicited)
        #expect(JSONRPC.reply(to: Data(#"{"method":"log"}"#.utf8)) == .unsolicited)
        #expect(JSONRPC.reply(to: Data(#"{"method":7}"#.utf8)) == .unsolicited)
    }

    /// A handler repeating the notification costs at most two recompilations
    /// (the first, and one folding the rest), is not taken for a flood, and
    /// keeps answering.
    @Test func aRepeatedNotificationIsFoldedAndNotAFlood() async throws {
        let folder = try AppFolder()
        defer { folder.remove() }
        try folder.write("handler.py", Self.handler(notifications: 200, answer: "Still here."))
        let log = RecordedLog()
        var limits = HandlerLimits()
        limits.stepTimeLimit = .seconds(60)
        let handler = HandlerSupervisor(app: "Hub", argv: ["python3", "handler.py"], directory: folder.url, limits: limits, logger: log.logger)
        let told = Atomic<Int>(0)
        await handler.setOptionsChanged { told.add(1, ordering: .relaxed) }
        await handler.start()
        defer { Task { await handler.stop() } }
        try await Poll.until("the notification passed on") { told.load(ordering: .relaxed) >= 1 }
        let answer = try await handler.call(.perform, params: ["intent": "X", "parameters": [:]], timeLimit: .seconds(60))
        #expect(answer["dialog"]?.string == "Still here.")
        #expect((1...2).contains(told.load(ordering: .relaxed)), "\(told.load(ordering: .relaxed))")
        #expect(await handler.restarts == 0, "\(log.all)")
    }

    /// A notification sent before the daemon listens (the handler fetched
    /// its names while the daemon was still starting) is passed on once it does.
    @Test func aNotificationBeforeAnyoneListensIsPassedOnLater() async throws {
        let folder = try AppFolder()
        defer { folder.remove() }
        try folder.write("handler.py", Self.handler(notifications: 1, answer: "Here."))
        var limits = HandlerLimits()
        limits.stepTimeLimit = .seconds(60)
        let handler = HandlerSupervisor(app: "Hub", argv: ["python3", "handler.py"], directory: folder.url, limits: limits,
                                        logger: RecordedLog().logger)
        await handler.start()
        defer { Task { await handler.stop() } }
        // Once it answers, its earlier line (the notification) has been read.
        _ = try await handler.call(.perform, params: ["intent": "X", "parameters": [:]], timeLimit: .seconds(60))
        let told = Atomic<Int>(0)
        await handler.setOptionsChanged { told.add(1, ordering: .relaxed) }
        try await Poll.until("the early notification passed on") { told.load(ordering: .relaxed) == 1 }
    }

    /// A phrase that does not name the app is refused, unless the app is the
    /// primary one (parley.yaml's `primary_app`: identifier, name or synonym).
    @Test func thePrimaryExternalAppsPhrasesNeedNotNameIt() throws {
        let folder = try AppFolder()
        defer { folder.remove() }
        try folder.write("manifest.yaml", manifest(shortcuts: "  - intent: SetLight\n    phrases: [\"switch the {room} light\"]"))
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let refused = #expect(throws: ManifestErrors.self) {
            try ExternalApp.load(folder: folder.url, installed: builtInApps, logger: quiet)
        }
        #expect(refused?.description.contains("does not contain the app's name") == true)
        for primary in ["KitchenLights", "Kitchen Lights", "the lights"] {
            let app = try ExternalApp.load(folder: folder.url, installed: builtInApps, primaryApp: primary, logger: quiet)
            #expect(app.description.identifier == "KitchenLights")
        }
        #expect(throws: ManifestErrors.self) {
            try ExternalApp.load(folder: folder.url, installed: builtInApps, primaryApp: "Coffee Maker", logger: quiet)
        }
    }
}

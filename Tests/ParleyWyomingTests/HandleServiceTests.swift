import Foundation
import Logging
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

@testable import ParleyWyoming

/// Role 2: Parley's engine as a Wyoming `handle` service.
@Suite struct HandleServiceTests {
    static func handler() throws -> EngineTranscriptHandler {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        return EngineTranscriptHandler(stores: EphemeralStores.make(), clock: SteppedClock(), registry: { registry }, initial: registry)
    }

    @Test func aShortcutOfParleysRunsAndItsAnswerIsTheHandledText() async throws {
        let outcome = try await Self.handler().handle(transcript: "set a timer for five minutes")
        guard case .handled(let text) = outcome else { Issue.record("\(outcome)"); return }
        #expect(text.localizedCaseInsensitiveContains("five minute"), "\(text)")
    }

    @Test func anOrderWaitingForThePressIsRefusedWithTheReasonAndNotLeftOpen() async throws {
        let handler = try Self.handler()
        let outcome = await handler.handle(transcript: "make me a large latte")
        #expect(outcome == .notHandled(EngineTranscriptHandler.confirmationRefusal))
        // Nothing was left waiting: the next command runs as if first.
        guard case .handled = await handler.handle(transcript: "set a timer for two minutes") else {
            Issue.record("the refused order left the conversation open"); return
        }
    }

    @Test func theVolumeIsRefusedAndTheStoredLevelUntouched() async throws {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        let stores = EphemeralStores.make()
        let handler = EngineTranscriptHandler(stores: stores, clock: SteppedClock(), registry: { registry }, initial: registry)
        for transcript in ["louder", "volume two", "mute"] {
            #expect(await handler.handle(transcript: transcript) == .notHandled(EngineTranscriptHandler.volumeRefusal))
        }
        #expect(try await stores.appData.value(app: VolumeSetting.owner, key: VolumeSetting.key) == nil)
    }

    @Test func aQuestionIsRefusedWithTheQuestionAndWhatToSayInstead() async throws {
        let outcome = try await Self.handler().handle(transcript: "start a timer")
        guard case .notHandled(let text) = outcome else { Issue.record("\(outcome)"); return }
        #expect(text.contains("?"), "\(text)")
        #expect(text.contains("whole command in one sentence"))
    }

    @Test func aPersonsShortcutWorksFromOtherSatellites() async throws {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tea-\(UUID().uuidString).yaml")
        try "name: Tea\nphrases: [tea time]\nactions:\n  - speak: Kettle on.\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let library = ShortcutLibrary.load(files: [file.path], environment: ShortcutEnvironment(registry: registry, customPhrases: []))
        #expect(library.problems.isEmpty, "\(library.problems)")
        let handler = EngineTranscriptHandler(stores: EphemeralStores.make(), clock: SteppedClock(), registry: { registry },
                                              initial: registry, shortcuts: { library })
        guard case .handled(let text) = await handler.handle(transcript: "tea time") else { Issue.record("not handled"); return }
        #expect(text.contains("Kettle on."), "\(text)")
    }

    @Test func whatParleyDoesNotKnowIsNotHandled() async throws {
        #expect(try await Self.handler().handle(transcript: "turn on the kitchen light") == .notHandled("Parley does not know that one."))
    }

    /// The real `wyoming` package (PyPI, pinned in scripts/setup.sh) as the client.
    /// The link (`parley status`) sees the client come and go and the last transcript.
    @Test func theRealWyomingPackageDescribesAndGetsAnswers() async throws {
        let link = WyomingHandleLink()
        let server = WyomingServer(host: "127.0.0.1", port: 0, logger: Logger(label: "test"), serve: { [handler = try Self.handler()] in
            WyomingHandleSession.run($0, info: WyomingInfo(handle: [WyomingHandleProgram(name: "parley")]), handler: handler,
                                     link: link, logger: Logger(label: "test"))
        })
        #expect(link.status == WyomingHandleLink.Status())
        try server.start()
        defer { server.stop() }
        let lines = try await WyomingPython.run("handle_client.py", ["127.0.0.1", "\(server.port)",
            "set a timer for five minutes", "make me a large latte", "turn on the kitchen light"])
        #expect(lines.count == 4)
        #expect(lines.first?["handle"] as? String == "parley")
        #expect(lines.first?["languages"] as? [String] == ["en"])
        #expect(lines.dropFirst().map { $0["type"] as? String } == ["handled", "not-handled", "not-handled"])
        #expect(lines.dropFirst().allSatisfy { $0["pong"] as? String == "p" })
        #expect(lines[2]["text"] as? String == EngineTranscriptHandler.confirmationRefusal)
        // The last of the three was not Parley's; the client has gone once its thread ends.
        #expect(link.status.lastTranscript?.handled == false)
        #expect(link.status.lastTranscript?.peer.hasPrefix("127.0.0.1:") == true)
        try await Poll.until("the client gone from the link") { link.status.peers.isEmpty }
    }

    @Test func malformedInputGetsAnErrorEventAndAClosedConnection() async throws {
        let server = WyomingServer(host: "127.0.0.1", port: 0, logger: Logger(label: "test"), serve: { [handler = try Self.handler()] in
            WyomingHandleSession.run($0, info: WyomingInfo(handle: [WyomingHandleProgram(name: "parley")]), handler: handler,
                                     logger: Logger(label: "test"))
        })
        try server.start()
        defer { server.stop() }
        let lines = try await WyomingPython.run("handle_client.py", ["127.0.0.1", "\(server.port)", "--garbage"])
        let reply = try #require(lines.last)
        #expect(reply["type"] as? String == "error")
        #expect((reply["text"] as? String)?.contains("data_length of \"transcript\" is lots") == true, "\(reply)")
        #expect(reply["closed"] as? Bool == true)
    }
}

/// Runs a client of Tests/Wyoming with the venv's Python that holds the real
/// `wyoming` package (scripts/setup.sh makes it) and reads its JSON lines.
enum WyomingPython {
    static let root = Fixtures.packageRoot
    static var python: String { root.appendingPathComponent(".build/wyoming-venv/bin/python").path }

    static func executable() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw WyomingTestError("no \(python): run scripts/setup.sh (it installs the wyoming package from PyPI)")
        }
        return python
    }

    static func script(_ name: String) -> String { root.appendingPathComponent("Tests/Wyoming/\(name)").path }

    static func run(_ script: String, _ arguments: [String]) async throws -> [[String: Any]] {
        let child = try await ChildProcess.start(try executable(), [Self.script(script)] + arguments)
        let exit = try await child.wait()
        guard exit.succeeded else { throw WyomingTestError("\(script) \(exit)") }
        return try exit.standardOutput.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw WyomingTestError("\(script) printed \(line)")
            }
            return object
        }
    }
}

struct WyomingTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

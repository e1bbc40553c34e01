import Foundation
import Logging
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyWyoming

/// Who may speak Wyoming to the device: the handle role (and the satellite,
/// through the same server) serves only the allowed Home Assistant. LAN
/// peers are played from other loopback addresses (127.0.0.2, .3, ...).
@Suite(.serialized) struct AllowListTests {
    /// Counts transcripts: a refused peer's must never reach it.
    final class CountingHandler: WyomingTranscriptHandling {
        let count = Atomic<Int>(0)
        func handle(transcript: String) async -> WyomingHandleOutcome {
            count.add(1, ordering: .relaxed)
            return .handled("done")
        }
    }

    static func handleServer(_ peers: WyomingPeers, _ handler: CountingHandler) throws -> WyomingServer {
        let server = WyomingServer(host: "127.0.0.1", port: 0, peers: peers, logger: Logger(label: "test")) { connection in
            WyomingHandleSession.run(connection, info: WyomingInfo(handle: [WyomingHandleProgram(name: "parley")]),
                                     handler: handler, logger: Logger(label: "test"))
        }
        try server.start()
        return server
    }

    /// The `error` event a refused peer gets, then the close.
    static func refusal(_ connection: WyomingConnection) throws -> String? {
        guard case .error(let text, "not-allowed")? = try connection.receive() else { return nil }
        return try connection.receive() == nil ? text : nil
    }

    @Test func onlyTheConfiguredAddressesAreServed() throws {
        let handler = CountingHandler()
        let server = try Self.handleServer(WyomingPeers(allow: ["127.0.0.1"], file: nil, logger: Logger(label: "test")), handler)
        defer { server.stop() }
        let stranger = try WyomingConnection.connect(host: "127.0.0.1", port: server.port, from: "127.0.0.2")
        // Its transcript is sent at once, before any answer: it must not be handled.
        try? stranger.send(.transcript(text: "set a timer for five minutes", language: nil))
        let text = try #require(try? Self.refusal(stranger), "no not-allowed error event before the close")
        #expect(text == "127.0.0.2 may not use this device: it serves only 127.0.0.1 (home_assistant.allow)")
        let homeAssistant = try WyomingConnection.connect(host: "127.0.0.1", port: server.port, from: "127.0.0.1")
        try homeAssistant.send(.transcript(text: "set a timer for five minutes", language: nil))
        #expect(try homeAssistant.receive() == .handled(text: "done"))
        #expect(handler.count.load(ordering: .relaxed) == 1)
    }

    /// Without `allow`, the first address that speaks is kept (in the file,
    /// so a restart keeps it), and every other one is refused from then on.
    @Test func theFirstHomeAssistantIsKept() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-peers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("peer")
        let handler = CountingHandler()
        let server = try Self.handleServer(WyomingPeers(allow: [], file: file, logger: Logger(label: "test")), handler)
        defer { server.stop() }
        // Both connect before either speaks; the first to speak is kept.
        let first = try WyomingConnection.connect(host: "127.0.0.1", port: server.port, from: "127.0.0.3")
        let second = try WyomingConnection.connect(host: "127.0.0.1", port: server.port, from: "127.0.0.4")
        try first.send(.ping("hello"))
        #expect(try first.receive() == .pong("hello"))
        try? second.send(.transcript(text: "set a timer for two minutes", language: nil))
        #expect(try Self.refusal(second)?.hasPrefix("127.0.0.4 may not use this device: it serves only 127.0.0.3") == true)
        let later = try WyomingConnection.connect(host: "127.0.0.1", port: server.port, from: "127.0.0.4")
        #expect(try Self.refusal(later) != nil, "a refused address was served on its next connection")
        #expect(handler.count.load(ordering: .relaxed) == 0)
        #expect(try String(contentsOf: file, encoding: .utf8) == "127.0.0.3\n")
        let restarted = WyomingPeers(allow: [], file: file, logger: Logger(label: "test"))
        #expect(restarted.admit("127.0.0.3") == .allowed)
        #expect(restarted.admit("127.0.0.4") != .allowed)
        // A configured list wins over the kept address.
        #expect(WyomingPeers(allow: ["127.0.0.4"], file: file, logger: Logger(label: "test")).admit("127.0.0.3") != .allowed)
    }
}

import Foundation
import Logging
import ParleyConfiguration
import ParleyDaemon
import ParleyDevice
import ParleyStore
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyWeb

/// The spoken pairing code and a speaker that is busy: a sentence being
/// said is waited for; what does not end by itself is refused.
@Suite struct PairingAnnouncerTests {
    final class Flag: Sendable { let value = Atomic<Bool>(false) }

    static func components(_ directory: URL) async throws -> DaemonComponents {
        var config = ParleyConfig()
        config.stateDirectory = directory.path
        config.audio.capture = .file("missing.wav")
        let store = try StateStore(directory: directory.path)
        var components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        components.services = []
        return components
    }

    @Test func aCodeWaitsForTheSentenceBeingSaid() async throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let components = try await Self.components(directory.url)
        let bridge = try #require(components.conversation as? EngineBridge)
        await bridge.emit(.led(.speaking))
        let quiet = Flag()
        let quieten = Task {
            try await Task.sleep(for: .milliseconds(300))
            quiet.value.store(true, ordering: .sequentiallyConsistent)
            await bridge.emit(.led(.idle))
        }
        // What is checked is the order, not the limit (the next test's): a
        // loaded machine may run the 300 ms sleep seconds late.
        var announcer = PairingAnnouncer(components: components)
        announcer.busyWait = .seconds(120)
        try await announcer.announce("Your pairing code is 1 2 3 4 5 6.")
        let waited = quiet.value.load(ordering: .sequentiallyConsistent)
        #expect(waited, "the code was said over the sentence before it")
        try await quieten.value
    }

    @Test func aSpeakerThatStaysBusyIsRefusedWithItsState() async throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let components = try await Self.components(directory.url)
        let bridge = try #require(components.conversation as? EngineBridge)
        await bridge.emit(.led(.awaitingConfirmation))
        var announcer = PairingAnnouncer(components: components)
        announcer.busyWait = .milliseconds(200)
        await #expect(throws: WebRequestFailed.self) { try await announcer.announce("code") }
        await bridge.emit(.led(.speaking))
        do {
            try await announcer.announce("code")
            Issue.record("a speaker still speaking after the wait was talked over")
        } catch {
            #expect("\(error)".contains("the speaker is busy (speaking)"))
        }
    }
}

import Foundation
import Logging
import ParleyApps
import ParleyConfiguration
import ParleyCore
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyDaemon

private let gate = Gate()

/// Works until the test opens the gate.
private struct OpenGate: AppIntent {
    static let title = "Open the gate"
    static let category = IntentCategory.generic
    static let timeLimit: TimeInterval = 3600
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        await gate.wait()
        return IntentResult(dialog: "The gate is open.")
    }
}

private struct GateApp: ParleyApp {
    let identifier = "Gate"
    let name = "Gatekeeper"
    var intents: [any AppIntent.Type] { [OpenGate.self] }
    var shortcuts: [AppShortcut] { [AppShortcut(intent: OpenGate.self, phrases: ["open the gate with {app}"], shortTitle: "Open the gate")] }
}

/// The bridge between the engine and the daemon: replies belong to the
/// request that caused them, sounds reach the speaker by name.
@Suite(.serialized) struct EngineBridgeTests {
    private func bridge(_ clock: ManualClock) throws -> (EngineBridge, ConversationEngine) {
        let registry = try AppRegistry(apps: [TimerApp(), GateApp()])
        let bridge = EngineBridge(registry: registry, wake: ParleyConfig.Wake().grammar, logger: Logger(label: "test"))
        let engine = ConversationEngine(registry: registry, stores: EphemeralStores.make(), clock: clock, sink: bridge)
        bridge.attach(engine)
        return (bridge, engine)
    }

    @Test func eachSayClientGetsTheLinesOfItsOwnUtteranceOnly() async throws {
        let clock = ManualClock()
        let (bridge, engine) = try bridge(clock)
        let server = try RunningServer.serving(DaemonComponents(conversation: bridge, catalog: bridge))
        defer { server.stop() }
        await engine.hear("start a one minute timer")  // at the microphone, not through the socket

        // Client A's app works while the timer rings and client B speaks.
        let arrived = gate.waiting
        async let first = server.send(.say("open the gate with gatekeeper"))
        await gate.waitForArrivals(arrived + 1)
        clock.advance(by: 60)
        await engine.tick()
        let second = try await server.send(.say("how much time is left on the timer"))
        gate.openFirst()
        #expect(try await first.spoken == ["The gate is open."])
        #expect(second.spoken == [])  // heard while A's run works, so ignored; nothing of A's or the timer's

        // Client B's "cancel" stops client A's run: B hears "Cancelled.", A nothing.
        async let third = server.send(.say("open the gate with gatekeeper"))
        await gate.waitForArrivals(arrived + 2)
        let cancel = try await server.send(.say("cancel"))
        #expect(cancel.spoken == ["Cancelled."])
        #expect(try await third.spoken == [])
        gate.openFirst()
    }

    @Test func theRequestedSoundIsPlayedNotAlwaysTheChime() async throws {
        let clock = ManualClock()
        let (bridge, engine) = try bridge(clock)
        let played = Mutex<[EngineSound]>([])
        var outputs = EngineOutputs()
        outputs.sound = { sound in played.withLock { $0.append(sound) } }
        bridge.setOutputs(outputs)
        await engine.woken(window: 5)
        await engine.hear("start a one minute timer")
        clock.advance(by: 60)
        await engine.tick()
        #expect(played.withLock { $0 } == [.wake, .chime])
        // The speaker's tones for the two differ.
        #expect(Speaker.samples(of: .wake) != Speaker.samples(of: .chime))
        #expect(!Speaker.samples(of: .wake).isEmpty)
    }
}

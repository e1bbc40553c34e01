import Foundation
import Logging
import ParleyCore
import ParleyHardware
import ParleyStore
import Testing

@testable import ParleyDaemon

/// The control commands through the real engine, apps, simulated board and
/// SQLite store, as parleyd wires them (no audio).
@Suite struct WiringTests {
    private func controller(_ dir: TemporaryDirectory) async throws -> (DaemonController, StateStore) {
        var config = ParleyConfig()
        config.stateDirectory = dir.file("state")
        config.audio.capture = .file("missing.wav")  // no audio in
        let store = try StateStore(directory: config.stateDirectory)
        let logger = Logger(label: "test")
        var components = try await Wiring.components(config: config, store: store, logger: logger)
        components.services = []  // the board is driven directly below
        let controller = DaemonController(
            config: config, configFile: nil, store: store, components: components, logs: LogRing(), logger: logger)
        return (controller, store)
    }

    @Test func sayAndPressOrderSoupAndRecordTheDonation() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let (controller, store) = try await controller(dir)
        let first = await controller.handle(.say("hey, order soup with soup chef"))
        #expect(first.spoken == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        _ = await controller.handle(.say("tomato"))
        let confirm = await controller.handle(.say("lewis avenue"))
        #expect(confirm.spoken?.first?.contains("Press the button to order") == true)
        #expect(try await store.donationCount() == 0)  // a voice alone never orders

        let components = controller.components
        try await components.conversation?.press(.short)
        let orders = try await store.donations(app: "SoupChef", intent: "OrderSoup", limit: nil)
        #expect(orders.count == 1)
        #expect(orders.first?.parameters["soup"] == "tomato")
        #expect(orders.first?.parameters["store"] == "lewis")
        let status = try #require(await controller.handle(.status).status)
        #expect(status.lastIntents == ["SoupChef/OrderSoup"])
        #expect(status.grammarSize > 10)
        #expect(status.notWired == ["recogniser"])
        #expect(status.audio.state.hasPrefix("playback only"))
    }

    @Test func appsShortcutsAndCustomPhrasesComeFromTheEngine() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let (controller, store) = try await controller(dir)
        let apps = try #require(await controller.handle(.apps).apps)
        #expect(Set(apps.map(\.name)).isSuperset(of: ["Coffee Maker", "Soup Chef", "Timer", "Notes"]))
        let shortcuts = try #require(await controller.handle(.shortcuts).shortcuts)
        #expect(shortcuts.contains { $0.phrase == "order soup with Soup Chef" && $0.intent == "OrderSoup" })

        let added = await controller.handle(.addPhrase(
            phrase: "soup time", app: "SoupChef", intent: "OrderSoup", parameters: ["soup": "tomato"]))
        #expect(added.ok, "\(added.error ?? "")")
        #expect(try await store.customPhrases().map(\.phrase) == ["soup time"])
        let clash = await controller.handle(.addPhrase(
            phrase: "order soup with soup chef", app: "SoupChef", intent: "OrderSoup", parameters: [:]))
        #expect(clash.ok == false)
        #expect(clash.error?.contains("clashes") == true)
        let unknown = await controller.handle(.addPhrase(phrase: "fly me", app: "SoupChef", intent: "Fly", parameters: [:]))
        #expect(unknown.error?.contains("no intent") == true)
        #expect(await controller.handle(.shortcuts).shortcuts?.contains { $0.phrase == "soup time" } == true)
        #expect(await controller.handle(.deletePhrase("soup time")).ok)
        #expect(try await store.customPhrases().isEmpty)
    }
}

/// A microphone missing at start: the listening service keeps running and
/// the board's LEDs show the error state again and again while it is away.
@Suite struct MissingMicrophoneWiringTests {
    @Test(.timeLimit(.minutes(1))) func theLEDsShowTheFaultWhileTheMicrophoneIsMissing() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        var config = ParleyConfig()
        config.stateDirectory = dir.file("state")
        config.audio.capture = .alsa("hw:9,0")
        let store = try StateStore(directory: config.stateDirectory)
        let components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        let listening = try #require(components.services.compactMap { $0 as? ListeningPipeline }.first)
        let bridge = try #require(components.board as? BoardBridge)
        let board = try #require(bridge.hardware as? SimulatedBoard)
        let states = board.displayedStates
        let running = Task { try await listening.run() }
        // Two error flashes with something else between: shown again, not once.
        var errors = 0
        var seen: [DeviceState] = []
        for await state in states {
            seen.append(state)
            if state == .error { errors += 1 }
            if errors == 2 { break }
        }
        #expect(errors == 2)
        #expect(seen.contains { $0 != .error })
        let status = await listening.audioStatus()
        #expect(status.state == "reconnecting")
        #expect(status.problem?.contains("hw:9,0") == true)
        running.cancel()
        try await running.value     // returned, not thrown: a missing microphone is no failure
        board.shutdown()
    }
}

/// parley.yaml's timeouts reach the engine.
@Suite struct EngineConfigurationWiringTests {
    @Test func timeoutsReachTheEngine() throws {
        var config = ParleyConfig()
        config.timeouts.perform = .milliseconds(2_500)
        config.timeouts.answer = .seconds(5)
        let board = try ParleyHardware.Board.load(from: BoardLocator.locate(config.board))
        let engine = Wiring.engineConfiguration(config, board: board)
        #expect(engine.performTimeLimit == 2.5)
        #expect(engine.answerTimeout == 5)
    }
}

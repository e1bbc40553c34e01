import Foundation
import Logging
import ParleyHardware
import ParleyStore
import Testing

@testable import ParleyDaemon

/// The control commands through the real engine, apps, simulated board and
/// SQLite store, as parleyd wires them (no audio).
@Suite struct WiringTests {
    private func controller(_ dir: TemporaryDirectory, board: String? = nil) async throws -> (DaemonController, StateStore) {
        var config = ParleyConfig()
        if let board { config.board = board }
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
        #expect(status.buttonProblem == nil)
    }

    @Test func statusReportsWhatTheBoardShowsNotOnlyTheEngineState() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let (controller, _) = try await controller(dir)
        let board = try #require(controller.components.board as? BoardBridge)
        let simulated = try #require(board.hardware as? SimulatedBoard)
        #expect(try #require(await controller.handle(.status).status).led == "idle")
        board.show(.listening)
        #expect(try #require(await controller.handle(.status).status).led == "listening")
        // The mute switch shows `muted` whatever the engine's state (it is not told here).
        simulated.setMuteSwitch(true)
        let muted = try #require(await controller.handle(.status).status)
        #expect(muted.led == "muted")
        #expect(muted.state == "idle")
        simulated.setMuteSwitch(false)
        #expect(try #require(await controller.handle(.status).status).led == "listening")
        await board.allOff()
    }

    @Test func aBoardWhoseChipIsMissingStartsAndRefusesOrdersAloud() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        // The shipped Pi 4 board file, on a machine without its GPIO chip.
        let pi4 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("board/pi4/board.yaml")
        let yaml = try String(contentsOf: pi4, encoding: .utf8)
            .replacingOccurrences(of: "chip: [pinctrl-bcm2711, gpiochip0]", with: "chip: parley-test-no-such-chip")
        #expect(yaml.contains("chip: parley-test-no-such-chip"))
        try yaml.write(toFile: dir.file("board.yaml"), atomically: true, encoding: .utf8)
        let (controller, store) = try await controller(dir, board: dir.file("board.yaml"))
        let reply = await controller.handle(.say("order soup with soup chef"))
        #expect(reply.spoken == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        _ = await controller.handle(.say("tomato"))
        let refused = await controller.handle(.say("lewis avenue"))
        #expect(refused.spoken == ["This order needs the button, which is not working, so nothing was ordered."])
        #expect(await controller.components.conversation?.stateDescription() == "idle")
        #expect(try await store.donationCount() == 0)
        let status = try #require(await controller.handle(.status).status)
        #expect(status.buttonProblem?.contains("GPIO chip not available") == true)
        #expect(status.buttonProblem?.contains("parley-test-no-such-chip") == true)
        await controller.components.board?.allOff()
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

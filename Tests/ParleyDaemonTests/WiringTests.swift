import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleyHardware
import ParleyStore
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The control commands through the real engine, apps, simulated board and
/// SQLite store, as parleyd wires them (no audio).
@Suite struct WiringTests {
    private func controller(_ dir: TemporaryDirectory, board: String? = nil) async throws -> (DaemonController, StateStore) {
        var config = ParleyConfig()
        config.acousticModel = "stock"  // the stock model: the decoders' model is process-wide (AcousticModel.configuredDefault) and these tests assume it
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
        _ = await controller.handle(.say("one"))
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
        _ = await controller.handle(.say("one"))
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

/// A microphone missing at start: the listening service keeps running and
/// the board's LEDs show the error state again and again while it is away.
@Suite struct MissingMicrophoneWiringTests {
    @Test(.timeLimit(.minutes(3))) func theLEDsShowTheFaultWhileTheMicrophoneIsMissing() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        var config = ParleyConfig()
        config.acousticModel = "stock"  // the stock model: the decoders' model is process-wide (AcousticModel.configuredDefault) and these tests assume it
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

/// Which devices and formats parley.yaml and the board file give the audio.
@Suite struct AudioWiringTests {
    private func listening(_ config: ParleyConfig) async throws -> ListeningPipeline {
        var config = config
        config.acousticModel = "stock"  // the stock model: the decoders' model is process-wide (AcousticModel.configuredDefault) and these tests assume it
        let store = try StateStore(directory: config.stateDirectory)
        let components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        return try #require(components.services.compactMap { $0 as? ListeningPipeline }.first)
    }

    @Test func theBoardFileNamesTheDevicesUnlessTheConfigurationDoes() throws {
        var config = ParleyConfig()
        let pi4 = try ParleyHardware.Board.load(from: BoardLocator.locate("pi4"))
        let sim = try ParleyHardware.Board.load(from: BoardLocator.locate("sim"))
        let fromBoard = Wiring.audioDevices(config, board: pi4)
        #expect(fromBoard.capture == .alsa(pi4.audio.capture) && fromBoard.playback == .alsa(pi4.audio.playback))
        // The simulated board has no sound card: the development files.
        let simulated = Wiring.audioDevices(config, board: sim)
        #expect(simulated.capture == .spool("microphone.raw") && simulated.playback == .file("playback.wav"))
        config.audio.capture = .alsa("hw:2,0")
        let named = Wiring.audioDevices(config, board: pi4)
        #expect(named.capture == .alsa("hw:2,0") && named.playback == .alsa(pi4.audio.playback))
    }

    @Test func theCaptureFormatAndPriorityReachTheDevice() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        var config = ParleyConfig()
        config.stateDirectory = dir.file("state")
        config.audio.capture = .alsa("hw:9,0")
        config.audio.captureFormat.rate = 48_000
        config.audio.captureFormat.channels = 2
        config.audio.captureFormat.periodFrames = 480
        config.audio.captureFormat.bufferFrames = 3_840
        config.audio.realtimePriority = 0
        let capture = try await listening(config).capture.configuration
        #expect(capture.device.name == "hw:9,0")
        #expect(capture.format == PCMFormat(sampleRate: 48_000, channels: 2, periodFrames: 480, bufferFrames: 3_840))
        #expect(capture.outputSampleRate == 16_000)
        #expect(capture.realtimePriority == nil)
        config.audio.realtimePriority = 15
        #expect(try await listening(config).capture.configuration.realtimePriority == 15)
    }

    /// `pacing: fast` reads a file capture as fast as the file plugin goes
    /// (ParleyAudio's `.device` pacing), into a ring that holds all of it:
    /// nothing is overwritten before the recogniser reads it. `realtime` (the
    /// default) reads like a microphone. (How fast is not asserted: on a
    /// machine busy with the whole test suite a wall-clock bound would fail.)
    @Test func fastPacingReadsTheWholeFileIntoTheRing() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        var config = ParleyConfig()
        config.stateDirectory = dir.file("state")
        try FileManager.default.createDirectory(atPath: config.stateDirectory, withIntermediateDirectories: true)
        // 12 s of a counting ramp: longer than the ring's usual 8 s.
        let samples = (0..<192_000).map { Int16(truncatingIfNeeded: $0 % 20_000) }
        try WAVFile.write(samples, sampleRate: 16_000, to: URL(fileURLWithPath: dir.file("state/in.wav")))
        config.audio.capture = .file("in.wav")
        #expect(try await listening(config).capture.configuration.pacing == .realTime)

        config.audio.pacing = .fast
        let capture = try await listening(config).capture
        #expect(capture.configuration.pacing == .device)
        #expect(capture.configuration.ringSeconds >= 12)
        try capture.start()
        try await offPool {   // polled off the cooperative pool, bounded by a count
            _ = try? Poll.untilBlocking("the capture reached the end of its input", polls: 60_000, every: .milliseconds(1)) {
                capture.status.state == .endOfInput
            }
        }
        capture.stop()
        #expect(capture.ring.writePosition == 192_000)
        #expect(capture.ring.samples(from: 0, count: 192_000) == samples)   // all of it, in order
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

import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ParleyHardware
import ParleyStore
import ParleyTestKit
import ServiceLifecycle
import Testing

@testable import ParleyDaemon

/// The volume in the daemon (issue 28): voice, the control socket and
/// `parley volume` change one level, kept in the state store across restarts
/// and put on the speaker's samples (file playback has no mixer control).
@Suite struct VolumeDaemonTests {
    private func wired(_ dir: TemporaryDirectory) async throws -> (DaemonController, StateStore) {
        var config = ParleyConfig()
        config.acousticModel = "stock"  // the decoders' model is process-wide; these tests assume the stock one
        config.stateDirectory = dir.file("state")
        config.audio.capture = .file("missing.wav")  // no audio in
        let store = try StateStore(directory: config.stateDirectory)
        var components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        components.services = []
        let controller = DaemonController(
            config: config, configFile: nil, store: store, components: components, logs: LogRing(), logger: Logger(label: "test"))
        return (controller, store)
    }

    private func gain(_ controller: DaemonController) throws -> Double {
        try #require(controller.components.audio as? Speaker).playback.gain
    }

    private func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-4 }

    @Test func louderByVoiceChangesTheLevelTheSamplesAndSurvivesARestart() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let (controller, store) = try await wired(dir)
        #expect(try near(gain(controller), Volume.gain(level: Volume.initial.level)))
        #expect(await controller.handle(.say("hey, louder")).spoken == ["seven"])
        #expect(await controller.handle(.volume(nil)).volume == VolumeReport(level: 7, muted: false, output: "software (samples scaled)"))
        #expect(try near(gain(controller), Volume.gain(level: 7)))
        #expect(await controller.handle(.volume(.set(3))).volume?.level == 3)
        #expect(try near(gain(controller), Volume.gain(level: 3)))
        let muted = await controller.handle(.volume(.mute))
        #expect(muted.message == "Volume 3 of 10, muted (software (samples scaled)).")
        #expect(try gain(controller) == 0)
        await store.close()

        // A restart: the stored level is read and put on the samples before anything plays.
        let (again, _) = try await wired(dir)
        #expect(await again.handle(.volume(nil)).volume == VolumeReport(level: 3, muted: true, output: "software (samples scaled)"))
        #expect(try gain(again) == 0)
        #expect(await again.handle(.say("unmute")).spoken == ["three"])
        #expect(try near(gain(again), Volume.gain(level: 3)))
    }

    @Test func aVolumeButtonOnTheBoardStepsTheLevel() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let (controller, _) = try await wired(dir)
        let bridge = try #require(controller.components.board as? BoardBridge)
        let simulated = try #require(bridge.hardware as? SimulatedBoard)
        // The board bridge forwards the board's gestures to the engine, as in parleyd's service group.
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [bridge], logger: quiet))
        let running = Task { try await group.run() }
        simulated.press(.volumeUp)
        simulated.press(.volumeUp)
        simulated.press(.volumeDown)
        let stepped = try await Poll.holds("the level at seven") { await controller.handle(.volume(nil)).volume?.level == 7 }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(stepped)
        #expect(try near(gain(controller), Volume.gain(level: 7)))
    }

    @Test func theSocketAndTheCommandLineChangeAndShowTheLevel() async throws {
        let running = try await RunningServer.wired()
        defer { running.stop() }
        #expect(try await running.send(.volume(.up)).volume?.level == 7)
        let tool = try Executables.url("parley").path
        let down = try await ChildProcess.run(tool, ["volume", "down", "--socket", running.socket], environment: ["PATH": "/usr/bin:/bin"])
        #expect(down.code == 0)
        #expect(down.standardOutput == "Volume 6 of 10 (software (samples scaled)).\n")
        let shown = try await ChildProcess.run(tool, ["volume", "--json", "--socket", running.socket], environment: ["PATH": "/usr/bin:/bin"])
        #expect(shown.standardOutput.contains("\"level\" : 6"))
        let bad = try await ChildProcess.run(tool, ["volume", "eleven", "--socket", running.socket], environment: ["PATH": "/usr/bin:/bin"])
        #expect(bad.code != 0)
        #expect(bad.standardError.contains("'eleven' is not a volume: expected up, down, mute, unmute or a level 0-10"))
        #expect(try await running.send(.volume(nil)).volume?.level == 6)
    }

    @Test func aRequestWithABadValueIsRefusedWithTheSpellings() throws {
        let error = #expect(throws: ControlProtocolError.self) {
            try ControlRequest(line: Data(#"{"command":"volume","value":"loud"}"#.utf8))
        }
        #expect(error?.description == #"volume "value" must be up, down, mute, unmute or a level 0-10, not "loud""#)
        #expect(try ControlRequest(line: Data(#"{"command":"volume"}"#.utf8)) == .volume(nil))
        #expect(try ControlRequest(line: Data(#"{"command":"volume","value":"7"}"#.utf8)) == .volume(.set(7)))
        #expect(ControlRequest.volume(.mute).wire.value == "mute")
    }

    // MARK: The alarm floor

    private func service(floor: Int) throws -> (VolumeService, PlaybackService) {
        let playback = try PlaybackService(configuration: PlaybackConfiguration(device: PCMDevice(name: "null")))
        let service = VolumeService(setting: VolumeSetting(store: InMemoryAppDataStore()), output: .software(playback),
                                    playback: playback, alarmFloor: floor, logger: Logger(label: "test"))
        return (service, playback)
    }

    @Test func anAlarmPlaysAtTheFloorThenTheLevelReturns() async throws {
        let (volume, playback) = try service(floor: 4)
        await volume.restore()
        await volume.change(.set(1))
        #expect(near(playback.gain, Volume.gain(level: 1)))
        await volume.alarmStarts()
        #expect(near(playback.gain, Volume.gain(level: 4)))
        // A change during the alarm is kept, and put on the output once it is over.
        await volume.change(.set(2))
        #expect(near(playback.gain, Volume.gain(level: 4)))
        await volume.alarmQueued()
        #expect(try await Poll.holds("the level back after the alarm") { near(playback.gain, Volume.gain(level: 2)) })
    }

    @Test func mutedAnAlarmIsStillHeardAndAboveTheFloorItIsUnchanged() async throws {
        let (volume, playback) = try service(floor: 3)
        await volume.change(.set(8))
        await volume.alarmStarts()
        #expect(near(playback.gain, Volume.gain(level: 8)))
        await volume.alarmQueued()
        #expect(try await Poll.holds("the alarm over") { near(playback.gain, Volume.gain(level: 8)) })
        await volume.change(.mute)
        #expect(playback.gain == 0)
        await volume.alarmStarts()
        #expect(near(playback.gain, Volume.gain(level: 3)))
        await volume.alarmQueued()
        #expect(try await Poll.holds("muted again after the alarm") { playback.gain == 0 })
    }
}

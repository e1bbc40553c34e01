import Foundation
import ParleyControl
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// `speech.front_end: neural` in the real daemon: the recorded order is
/// heard through DeepFilterNet3 and read back; and where the runtime is not
/// there, one clear line in the journal and in `parley status`, and the
/// order is still heard (without the stage).
@Suite(.serialized) struct NeuralFrontEndTests {
    func orderIsReadBack(environment: [String: String]) async throws -> (status: DaemonStatus?, log: String) {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        _ = try await EndToEndTests.makeInput(in: dir)
        // The recording read as fast as the daemon takes it, into a ring
        // that holds all of it (`audio.pacing: fast`): the suite runs dozens
        // of daemons on 2 cores, and a debug build's listener behind the
        // network then fell behind a real-time microphone and lost the
        // order's start. What is tested is what the stage hears, not speed.
        let process = try await EndToEndTests.startDaemon(
            dir, settings: "audio: {capture: \"file:capture.wav\", pacing: fast}\ntimeouts: {confirmation: 20s}",
            environment: environment, speech: "acoustic_model: stock, front_end: neural")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        let confirming = try await EndToEndTests.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        return (confirming, try await EndToEndTests.stop(process))
    }

    @Test func anOrderIsHeardThroughTheNoiseSuppressor() async throws {
        let (status, log) = try await orderIsReadBack(environment: [:])
        #expect(status?.state == "awaiting-confirmation")
        #expect(status?.recognitions == 1)
        #expect(status?.frontEnd?.hasPrefix("neural (DeepFilterNet3") == true)
        #expect(log.contains("Press the button to order"))
        #expect(!log.contains("unavailable"))
    }

    @Test func withoutTheRuntimeTheDaemonSaysSoAndListensOn() async throws {
        let empty = try TemporaryDirectory(); defer { empty.remove() }
        let (status, log) = try await orderIsReadBack(environment: ["PARLEY_DEEPFILTER_DIR": empty.path])
        #expect(status?.state == "awaiting-confirmation")
        #expect(status?.frontEnd?.contains("unavailable") == true)
        #expect(status?.frontEnd?.contains(empty.path) == true)
        let lines = log.split(separator: "\n").filter { $0.contains("capture front end 'neural' unavailable") }
        #expect(lines.count == 1)
        #expect(log.contains("Press the button to order"))
    }
}

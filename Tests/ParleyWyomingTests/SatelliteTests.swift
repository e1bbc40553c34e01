import Foundation
import Logging
import ParleyTestKit
import Testing

@testable import ParleyWyoming

/// The device a satellite runs on: records what it played and said, and
/// lets a test wait for the next of either.
actor RecordingDevice: WyomingSatelliteDevice {
    enum Output: Equatable {
        case played([Int16], Int)
        case said(String)
    }

    private(set) var outputs: [Output] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func play(samples: [Int16], sampleRate: Int) async { record(.played(samples, sampleRate)) }
    func say(_ sentence: String) async { record(.said(sentence)) }

    private func record(_ output: Output) {
        outputs.append(output)
        let ready = waiters.filter { $0.count <= outputs.count }
        waiters.removeAll { $0.count <= outputs.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `count` outputs have been recorded.
    func waitFor(_ count: Int) async -> [Output] {
        if outputs.count < count { await withCheckedContinuation { waiters.append((count, $0)) } }
        return outputs
    }

    var said: [String] { outputs.compactMap { if case .said(let text) = $0 { text } else { nil } } }
}

/// A speaker whose playback lasts until the test opens the gate.
struct SlowSpeaker: WyomingSatelliteDevice {
    let gate = Gate()
    func play(samples: [Int16], sampleRate: Int) async { await gate.wait() }
    func say(_ sentence: String) async {}
}

/// One test at a time: each blocks a thread of Swift's pool on Home
/// Assistant's side of the link (`ha.receive()`) while the satellite answers
/// through async tasks on the same pool. On a 2-core machine the pool has
/// two threads, and two of these tests at once left none for the satellite:
/// a 50 ms answer timeout came late and the link's drop was said instead,
/// a ping went unanswered (whole-suite runs on a slower machine).
@Suite(.serialized) struct SatelliteTests {
    static let info = WyomingInfo(satellite: WyomingSatelliteInfo(name: "Parley", area: "Kitchen", activeWakeWords: ["hey computer"]))

    static func satellite(_ device: any WyomingSatelliteDevice, answerTimeout: Duration = .seconds(15), maximumAnswerSeconds: Int = 60)
        throws -> (WyomingSatellite, WyomingServer)
    {
        let satellite = WyomingSatellite(info: info, device: device, logger: Logger(label: "test"), answerTimeout: answerTimeout,
                                         maximumAnswerSeconds: maximumAnswerSeconds)
        let server = WyomingServer(host: "127.0.0.1", port: 0, logger: Logger(label: "test"), serve: { satellite.serve($0) })
        try server.start()
        return (satellite, server)
    }

    /// One second of a known signal at 16 kHz, as the microphone gives.
    static let command: [Int16] = (0..<16_000).map { Int16(truncatingIfNeeded: ($0 * 37) % 20_000 - 10_000) }

    static func rejected(_ samples: [Int16] = command) -> RejectedUtterance {
        RejectedUtterance(samples: samples, sampleRate: 16_000, heard: "", spokenEnd: .now)
    }

    /// Home Assistant as its wyoming integration behaves, on the real package.
    @Test func homeAssistantsSatelliteCodeRunsAPipelineAnnouncementTimersAndPause() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wyoming-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let python = try WyomingPython.executable()
        let client = try await ChildProcess.start(python, [WyomingPython.script("ha_satellite.py"), "127.0.0.1", "\(server.port)", folder.path])
        for await line in client.outputLines where line == "ready" { break }
        #expect(satellite.status.running)
        #expect(await satellite.forward(Self.rejected()))
        let exit = try await client.wait()
        #expect(exit.succeeded, "\(exit)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data((exit.standardOutput.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        #expect(result["satellite"] as? String == "Parley")
        #expect(result["area"] as? String == "Kitchen")
        #expect(result["wake_words"] as? [String] == ["hey computer"])
        #expect(result["pong"] as? String == "1")
        #expect(result["start_stage"] as? String == "asr")
        #expect(result["end_stage"] as? String == "tts")
        #expect(result["rate"] as? Int == 16_000 && result["width"] as? Int == 2 && result["channels"] as? Int == 1)
        #expect(result["chunks"] as? Int == 16)  // 16,000 samples in chunks of 1024
        #expect(result["played_answer"] as? Bool == true && result["played_announcement"] as? Bool == true)
        #expect(result["pong_after_pause"] as? String == "2")

        // What left the device is exactly the command; what was played is exactly the answer.
        let received = try Data(contentsOf: folder.appendingPathComponent("received.raw"))
        #expect(received == Self.command.withUnsafeBytes { Data($0) })
        let answer = try Data(contentsOf: folder.appendingPathComponent("answer.raw"))
        let outputs = await device.waitFor(3)
        #expect(outputs.first == .played(WyomingSatellite.monoSamples(answer, format: WyomingAudioFormat(rate: 22_050)), 22_050))
        guard case .played(let announcement, 22_050) = outputs[1] else { Issue.record("\(outputs[1])"); return }
        #expect(announcement.count == 5_512)
        #expect(outputs[2] == .said("The pasta timer from Home Assistant is done."))
        #expect(satellite.timers.isEmpty)
        #expect(satellite.status.lastAudioSent?.bytes ?? 0 > received.count)
        #expect(satellite.status.running == false)
    }

    @Test func withoutHomeAssistantNothingIsSentAndTheDeviceSaysSo() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        #expect(await satellite.forward(Self.rejected()) == false)
        #expect(await device.waitFor(1) == [.said("I don't know that one, and Home Assistant is not connected.")])
        #expect(satellite.status.lastAudioSent == nil)
    }

    /// Connected but paused (muted in Home Assistant): nothing leaves either.
    @Test func pausedNothingIsSent() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        let ha = try WyomingConnection.connect(host: "127.0.0.1", port: server.port)
        try ha.send(.runSatellite)
        try ha.send(.pauseSatellite)
        try ha.send(.ping("sync"))
        #expect(try ha.receive() == .pong("sync"))
        #expect(await satellite.forward(Self.rejected()) == false)
        #expect(satellite.status.lastAudioSent == nil)
    }

    /// A connected Home Assistant (run-satellite sent; the pong proves it was read).
    static func connectedHomeAssistant(_ server: WyomingServer) throws -> WyomingConnection {
        let ha = try WyomingConnection.connect(host: "127.0.0.1", port: server.port)
        try ha.send(.runSatellite)
        try ha.send(.ping("sync"))
        guard try ha.receive() == .pong("sync") else { throw WyomingTestError("no pong") }
        return ha
    }

    /// Reads the forwarded command up to its audio-stop.
    static func readCommand(_ ha: WyomingConnection) throws -> Int {
        var chunks = 0
        while let event = try ha.receive() {
            if case .audioChunk = event { chunks += 1 }
            if event == .audioStop { return chunks }
        }
        throw WyomingTestError("closed before audio-stop")
    }

    @Test func aSlowHomeAssistantIsSaidOnce() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device, answerTimeout: .milliseconds(50))
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        #expect(await satellite.forward(Self.rejected()))
        #expect(try Self.readCommand(ha) == 16)
        #expect(await device.waitFor(1) == [.said("Home Assistant did not answer in time.")])
        #expect(satellite.status.lastFault == "Home Assistant did not answer in time.")
    }

    @Test func aLinkDroppedMidAnswerIsSaid() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        #expect(await satellite.forward(Self.rejected()))
        _ = try Self.readCommand(ha)
        try ha.send(.audioStart(WyomingAudioFormat(rate: 22_050)))
        try ha.send(.audioChunk(WyomingAudioFormat(rate: 22_050), Data(count: 2_048)))
        ha.close()
        #expect(await device.waitFor(1) == [.said("The link to Home Assistant dropped before it answered.")])
        // Nothing half-received was played.
        #expect(await device.outputs.count == 1)
    }

    @Test(arguments: [
        Data("garbage that is not an event\n".utf8),
        Data("{\"type\":\"audio-chunk\",\"data\":{\"rate\":22050,\"width\":2,\"channels\":1},\"payload_length\":100000000}\n".utf8),
    ])
    func garbageOrAnOversizedEventClosesTheLinkWithAReason(_ bytes: Data) async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        try ha.sendBytes(bytes)
        guard case .error(let text, "malformed")? = try ha.receive() else { Issue.record("no error event"); return }
        #expect(text.contains("not JSON") || text.contains("at most 524288"), "\(text)")
        #expect(try ha.receive() == nil)  // closed
        #expect(await device.waitFor(1) == [.said("Home Assistant sent something I could not read, so I closed the link.")])
        #expect(satellite.status.running == false)
        // Home Assistant reconnects and the satellite serves it again.
        let again = try Self.connectedHomeAssistant(server)
        #expect(satellite.status.running)
        again.close()
    }

    /// Home Assistant drops a satellite that leaves a ping 5 s unanswered:
    /// pings are answered while an answer plays, and `played` comes after it.
    @Test func pingsAreAnsweredWhileAnAnswerPlays() async throws {
        let speaker = SlowSpeaker()
        let (_, server) = try Self.satellite(speaker)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        let format = WyomingAudioFormat(rate: 22_050)
        try ha.send(.audioStart(format))
        try ha.send(.audioChunk(format, Data(count: 2_048)))
        try ha.send(.audioStop)
        await speaker.gate.waitForArrivals(1)
        try ha.send(.ping("during"))
        #expect(try ha.receive() == .pong("during"))
        speaker.gate.openFirst()
        #expect(try ha.receive() == .played)
    }

    @Test func anAnswerLongerThanTheBoundIsRefused() async throws {
        let device = RecordingDevice()
        let (_, server) = try Self.satellite(device, maximumAnswerSeconds: 1)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        let format = WyomingAudioFormat(rate: 22_050)
        try ha.send(.audioStart(format))
        // One second is 44,100 bytes: 22 chunks of 2,048 are over it.
        for _ in 0..<22 { try ha.send(.audioChunk(format, Data(count: 2_048))) }
        guard case .error(let text, _)? = try ha.receive() else { Issue.record("no error event"); return }
        #expect(text.contains("longer than 1 s of audio"))
        #expect(await device.waitFor(1) == [.said("Home Assistant sent something I could not read, so I closed the link.")])
    }

    /// The first peer keeps the link until it goes: a second one (anyone on
    /// the network) gets an error event and is closed, and commands still go
    /// to the first. Once the first goes, the next peer is served.
    @Test func aSecondPeerIsRefusedAndTheFirstKeepsTheLink() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        // The intruder sends nothing: unread input would make the close a reset.
        let intruder = try WyomingConnection.connect(host: "127.0.0.1", port: server.port)
        guard case .error(let text, "busy")? = try intruder.receive() else { Issue.record("no error event"); return }
        #expect(text == "this satellite is already linked to a Home Assistant; it serves one at a time")
        #expect(try intruder.receive() == nil)  // closed
        try ha.send(.ping("still"))
        #expect(try ha.receive() == .pong("still"))
        #expect(await satellite.forward(Self.rejected()))
        #expect(try Self.readCommand(ha) == 16)
        ha.close()
        // The satellite notices the close on its own thread; until then a
        // newcomer is refused like the intruder, so it retries as Home Assistant does.
        try await Poll.until("a new peer is served once the first has gone") {
            guard let next = try? WyomingConnection.connect(host: "127.0.0.1", port: server.port) else { return false }
            defer { next.close() }
            try next.send(.ping("new"))
            return (try? next.receive()) == .pong("new")
        }
    }

    /// Formats past 48 kHz, 16-bit, stereo are refused before anything is
    /// buffered for them (the answer buffer is sized from the format).
    @Test(arguments: [
        WyomingAudioFormat(rate: 96_000), WyomingAudioFormat(rate: 192_000, width: 4, channels: 8),
        WyomingAudioFormat(rate: 48_000, width: 4), WyomingAudioFormat(rate: 48_000, channels: 3),
    ])
    func anOversizedAudioFormatClosesTheLink(_ format: WyomingAudioFormat) async throws {
        let device = RecordingDevice()
        let (_, server) = try Self.satellite(device)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        try ha.send(.audioStart(format))
        guard case .error(let text, "malformed")? = try ha.receive() else { Issue.record("no error event"); return }
        #expect(text == "audio format of \"audio-start\" is \(format.rate) Hz, \(format.width) bytes, \(format.channels) channels; "
            + "expected 1000-48000 Hz, 1-2 bytes, 1-2 channels")
        #expect(try ha.receive() == nil)
    }

    /// The largest format accepted plays; a chunk in another format than its
    /// answer's start is refused (the bound is the start's).
    @Test func theLargestFormatPlaysAndAChangeOfFormatMidAnswerIsRefused() async throws {
        let device = RecordingDevice()
        let (_, server) = try Self.satellite(device, maximumAnswerSeconds: 1)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        let largest = WyomingAudioFormat(rate: 48_000, width: 2, channels: 2)
        try ha.send(.audioStart(largest))
        // One second of 48 kHz 16-bit stereo is 192,000 bytes: 46 chunks of 4,096 fit.
        for _ in 0..<46 { try ha.send(.audioChunk(largest, Data(count: 4_096))) }
        try ha.send(.audioStop)
        #expect(try ha.receive() == .played)
        #expect(await device.waitFor(1) == [.played([Int16](repeating: 0, count: 46 * 1_024), 48_000)])
        try ha.send(.audioStart(WyomingAudioFormat(rate: 16_000)))
        try ha.send(.audioChunk(largest, Data(count: 4_096)))
        guard case .error(let text, "malformed")? = try ha.receive() else { Issue.record("no error event"); return }
        #expect(text == "an audio chunk at 48000 Hz, 2 bytes, 2 channels in an answer started at 16000 Hz, 2 bytes, 1 channels")
    }

    @Test func timersPastTheBoundCloseTheLink() async throws {
        let device = RecordingDevice()
        let (satellite, server) = try Self.satellite(device)
        defer { server.stop() }
        let ha = try Self.connectedHomeAssistant(server)
        for n in 0..<WyomingSatellite.maximumTimers { try ha.send(.timerStarted(WyomingTimer(id: "t\(n)", totalSeconds: 60))) }
        try ha.send(.ping("sync"))
        #expect(try ha.receive() == .pong("sync"))
        #expect(satellite.timers.count == 64)
        try ha.send(.timerStarted(WyomingTimer(id: "one-more", totalSeconds: 60)))
        guard case .error(let text, "malformed")? = try ha.receive() else { Issue.record("no error event"); return }
        #expect(text == "more than 64 timers at once")
    }
}

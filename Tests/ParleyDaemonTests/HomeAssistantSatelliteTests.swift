import Foundation
import ParleyTestKit
import ParleyWyoming
import Testing

@testable import ParleyDaemon

/// The real daemon as a Home Assistant satellite, its microphone the
/// stand-in spool: "computer" and words Parley does not know go to Home
/// Assistant (a Wyoming client here), whose answer is played and
/// acknowledged; `parley status` says audio left and why. Parley's own
/// command, said after it with the link up, runs on the device and sends nothing.
@Suite(.serialized) struct HomeAssistantSatelliteTests {
    /// A port nobody listens on now.
    static func freePort() throws -> Int {
        let probe = WyomingServer(host: "127.0.0.1", port: 0, logger: .init(label: "probe"), serve: { _ in })
        try probe.start()
        defer { probe.stop() }
        return probe.port
    }

    /// The first event other than a pong for which `wanted` holds; throws
    /// when the link closed or none came within `limit`: the test's own
    /// pings keep the link busy, so the idle timeout alone would never end
    /// the wait, and a daemon that sends nothing must fail the test, not
    /// hang the suite.
    static func next(_ ha: WyomingConnection, within limit: Duration = .seconds(120),
                     _ wanted: (WyomingEvent) -> Bool) throws -> WyomingEvent {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, let event = try ha.receive() {
            if case .pong = event { continue }
            if wanted(event) { return event }
        }
        throw TestFailure("Home Assistant's side: the link closed or nothing awaited came within \(limit)")
    }

    /// Runs `body` off the pool; when it throws, the failure carries the
    /// daemon's log (it is stopped for it), which says where the path broke.
    static func withDaemonLog<T: Sendable>(_ process: ChildProcess, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await offPool(body)
        } catch {
            let log = (try? await EndToEndTests.stop(process)) ?? ""
            throw TestFailure("\(error)\nparleyd's log, last lines:\n\(log.split(separator: "\n").suffix(60).joined(separator: "\n"))")
        }
    }

    @Test func aRejectedCommandGoesToHomeAssistantAndItsAnswerIsPlayed() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        // "computer" (a real recording), then words no app of Parley's knows.
        try await EndToEndTests.run("/usr/bin/espeak-ng", ["-w", dir.file("light-raw.wav"), "turn on the kitchen light"])
        try await EndToEndTests.run("/usr/bin/sox", [dir.file("light-raw.wav"), "-r", "16000", "-c", "1", "-b", "16", dir.file("light.wav")])
        try await EndToEndTests.run("/usr/bin/sox", [LiveMicrophoneTests.computer, dir.file("light.wav"), dir.file("command.wav"), "pad", "0", "1"])
        let port = try Self.freePort()
        let process = try await EndToEndTests.startDaemon(
            dir, settings: "wake: {hey_optional: true, window: 6s}\nhome_assistant: {satellite: true, port: \(port), listen: 127.0.0.1, area: Kitchen}")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        _ = try await EndToEndTests.waitForStatus(socket) { $0.audio.state == "running" && $0.homeAssistant != nil }
        let before = try await EndToEndTests.waitForStatus(socket) { _ in true }
        #expect(before?.homeAssistant?.contains("no audio has left the device") == true)

        let ha = try await offPool { () throws -> WyomingConnection in
            let ha = try WyomingConnection.connect(host: "127.0.0.1", port: port, idleTimeout: .seconds(60))
            try ha.send(.runSatellite)
            try ha.send(.describe)
            return ha
        }
        // As Home Assistant does: a ping 2 s after each, so the satellite
        // (which drops a Home Assistant silent for 30 s) keeps the link.
        let pings = Task {
            while !Task.isCancelled {
                try? ha.send(.ping("keep"))
                try? await Task.sleep(for: .seconds(2))
            }
        }
        defer { pings.cancel() }
        let described = try await offPool { try Self.next(ha) { _ in true } }
        guard case .info(let info) = described else { Issue.record("no info: \(String(describing: described))"); return }
        #expect(info.satellite?.area == "Kitchen")
        #expect(info.satellite?.activeWakeWords == ["hey computer"])

        _ = try await LiveMicrophoneTests.play(dir.file("command.wav"), socket: socket)
        // Home Assistant's side: the pipeline request and the audio of the
        // command. A wait that fails says what the daemon logged.
        let received = try await Self.withDaemonLog(process) { () throws -> (WyomingRunPipeline?, Int) in
            var run: WyomingRunPipeline?
            var bytes = 0
            _ = try Self.next(ha) { event in
                switch event {
                case .runPipeline(let value): run = value
                case .audioChunk(_, let audio): bytes += audio.count
                case .audioStop: return true
                default: break
                }
                return false
            }
            return (run, bytes)
        }
        #expect(received.0 == WyomingRunPipeline(startStage: .asr, endStage: .tts))
        // The words after the wake word: more than a second, less than the whole file.
        #expect(received.1 > 32_000, "\(received.1) bytes")
        let answered = try await offPool { () throws -> WyomingEvent in
            let format = WyomingAudioFormat(rate: 22_050)
            try ha.send(.transcript(text: "turn on the kitchen light", language: "en"))
            try ha.send(.synthesize(text: "Turned on the light"))
            try ha.send(.audioStart(format))
            for _ in 0..<10 { try ha.send(.audioChunk(format, Data(count: 2_048))) }
            try ha.send(.audioStop)
            return try Self.next(ha) { _ in true }
        }
        #expect(answered == .played)
        let after = try await EndToEndTests.waitForStatus(socket) { $0.homeAssistant?.contains("audio last left the device") == true }
        #expect(after?.homeAssistant?.contains("a command Parley did not know") == true, "\(after?.homeAssistant ?? "")")
        ha.close()
        let log = try await EndToEndTests.stop(process)
        #expect(log.contains("rejected command handed on"))
        #expect(log.contains("audio sent to home assistant"))
    }
}

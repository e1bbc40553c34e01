import Foundation
import ParleyStore
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The real daemon with ALSA file devices: the input holds "hey" (espeak-ng)
/// followed by a real recorded coffee order, with silence around it; a
/// simulated press confirms. Checks state, spoken output and LED states.
@Suite(.serialized) struct EndToEndTests {
    /// 1.5 s silence, "hey", a recorded order, 5 s silence, as 16 kHz mono WAV.
    static func makeInput(in dir: TemporaryDirectory) throws -> String {
        let order = SharedData.coffeeClean.appendingPathComponent("0075d273-51bb-47cb-b323-4437bd0de029.wav").path
        guard FileManager.default.fileExists(atPath: order) else { throw TestFailure("missing recording \(order)") }
        try run("/usr/bin/espeak-ng", ["-w", dir.file("hey-raw.wav"), "hey"])
        try run("/usr/bin/sox", [dir.file("hey-raw.wav"), "-r", "16000", "-c", "1", "-b", "16", dir.file("hey.wav")])
        try run("/usr/bin/sox", ["-n", "-r", "16000", "-c", "1", "-b", "16", dir.file("silence.wav"), "trim", "0", "1.5"])
        let input = dir.file("state/capture.wav")
        try FileManager.default.createDirectory(atPath: dir.file("state"), withIntermediateDirectories: true)
        try run("/usr/bin/sox", [dir.file("silence.wav"), dir.file("hey.wav"), order]
            + Array(repeating: dir.file("silence.wav"), count: 4) + [input])
        return input
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("\(tool) \(arguments) failed") }
    }

    /// Starts parleyd on `dir` and returns it with its stderr pipe.
    /// `settings`: more YAML (the defaults here: the input WAV read once, a 2 s confirmation).
    static func startDaemon(
        _ dir: TemporaryDirectory,
        settings: String = "audio: {capture: \"file:capture.wav\"}\ntimeouts: {confirmation: 2s}"
    ) throws -> (Process, Pipe) {
        try """
            state_directory: \(dir.file("state"))
            control_socket: \(dir.file("parley.sock"))
            primary_app: Coffee Maker
            log_level: debug

            """.appending(settings).write(toFile: dir.file("parley.yaml"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = try Executables.url("parleyd")
        process.arguments = ["--config", dir.file("parley.yaml")]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        return (process, errors)
    }

    /// Polls `status` (by attempts, not time) until `done` holds.
    static func waitForStatus(_ socket: String, attempts: Int = 600, _ done: @escaping @Sendable (DaemonStatus) -> Bool)
        async throws -> DaemonStatus?
    {
        try await offPool {
            var last: DaemonStatus?
            for _ in 0..<attempts {
                if let status = try? ControlClient(path: socket).send(.status).status {
                    last = status
                    if done(status) { return status }
                }
                usleep(50_000)
            }
            return last
        }
    }

    static func stop(_ process: Process, _ errors: Pipe) async throws -> String {
        process.terminate()
        return try await offPool {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Samples of a 16-bit mono WAV written by the ALSA file plugin, and
    /// how many 10 ms frames carry speech-level energy.
    static func voicedFrames(_ path: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count > 44 else { return 0 }
        let samples = data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        var voiced = 0
        for start in stride(from: 0, to: samples.count - 160, by: 160) {
            let energy = samples[start..<start + 160].reduce(0.0) { $0 + Double($1) * Double($1) } / 160
            if energy.squareRoot() > 300 { voiced += 1 }
        }
        return voiced
    }

    @Test func spokenOrderConfirmedByPressIsPerformedAndAnswered() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        _ = try Self.makeInput(in: dir)
        let (process, errors) = try Self.startDaemon(dir)
        let socket = dir.file("parley.sock")

        let confirming = try await Self.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        #expect(confirming?.state == "awaiting-confirmation")
        #expect(confirming?.recognitions == 1)
        // Press once the confirmation has been played (as a person would).
        let playback = dir.file("state/playback.wav")
        let voicedBeforePress = try await offPool { () -> Int in
            var voiced = 0
            for _ in 0..<300 {
                voiced = (try? Self.voicedFrames(playback)) ?? 0
                if voiced > 100 { break }
                usleep(50_000)
            }
            return voiced
        }

        _ = try await offPool { try ControlClient(path: socket).send(.press(.short)) }
        let done = try await Self.waitForStatus(socket) { $0.lastIntents.first == "CoffeeMaker/orderDrink" && $0.donations == 1 }
        #expect(done?.donations == 1)
        // Wait until the answer has been played (the playback file stops growing in speech).
        _ = try await Self.waitForStatus(socket, attempts: 100) { _ in false }
        let log = try await Self.stop(process, errors)

        let store = try StateStore(path: dir.file("state/state.db"))
        let orders = try await store.donations(app: "CoffeeMaker", intent: "orderDrink", limit: nil)
        #expect(orders.count == 1)
        #expect(orders.first?.parameters["coffeeDrink"] == "coffee")
        #expect(orders.first?.parameters["size"] == "twelve ounce")
        #expect(orders.first?.parameters["roast"] == "light roast")

        // The confirmation was spoken before the press, the result after it.
        let voicedAfter = try Self.voicedFrames(dir.file("state/playback.wav"))
        #expect(voicedBeforePress > 100)  // > 1 s of speech: the confirmation
        #expect(voicedAfter > voicedBeforePress + 100)  // and the result line
        #expect(log.contains("Press the button to order"))
        #expect(log.contains("spoke text=Ordered."))

        // LEDs: listening, awaiting confirmation, success, in that order.
        let states = log.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "led state=") else { return nil }
            return String(line[range.upperBound...])
        }
        let listening = states.firstIndex(of: "listening")
        let awaiting = states.firstIndex(of: "awaiting-confirmation")
        let success = states.firstIndex(of: "success")
        #expect(listening != nil && awaiting != nil && success != nil)
        if let listening, let awaiting, let success { #expect(listening < awaiting && awaiting < success) }
    }

    @Test func withoutThePressNothingIsOrdered() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        _ = try Self.makeInput(in: dir)
        let (process, errors) = try Self.startDaemon(dir)
        let socket = dir.file("parley.sock")
        let confirming = try await Self.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        #expect(confirming != nil && confirming?.state == "awaiting-confirmation")
        // Asked twice (2 s each), then given up: back to idle with nothing done.
        let after = try await Self.waitForStatus(socket) { $0.state == "idle" }
        #expect(after?.state == "idle")
        #expect(after?.donations == 0)
        #expect(after?.lastIntents.isEmpty == true)
        let log = try await Self.stop(process, errors)
        #expect(log.contains("nothing was done"))
        #expect(!log.contains("performed intent="))
    }
}

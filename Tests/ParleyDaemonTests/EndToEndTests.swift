import Foundation
import ParleyControl
import ParleyStore
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The real daemon with ALSA file devices: the input holds "hey" (espeak-ng)
/// followed by a real recorded coffee order, then "hey" and a second order by
/// another speaker, with silence around them; simulated presses confirm.
/// Checks state, spoken output and LED states.
@Suite(.serialized) struct EndToEndTests {
    /// "Can I have a light roast twelve ounce coffee" (a real recording).
    static let firstOrder = Fixtures.coffeeClean.appendingPathComponent("0075d273-51bb-47cb-b323-4437bd0de029.wav").path
    /// "Can I have a sixteen ounce medium roast house coffee", another speaker.
    static let secondOrder = Fixtures.coffeeClean.appendingPathComponent("0a4e9b1d-e294-40fc-afaa-4a07b9437ff7.wav").path

    /// 1.5 s silence, "hey", a recorded order, 6 s silence, as 16 kHz mono
    /// WAV (state/capture.wav).
    static func makeInput(in dir: TemporaryDirectory) async throws -> String {
        let order = firstOrder
        guard FileManager.default.fileExists(atPath: order) else { throw TestFailure("missing recording \(order)") }
        try await run("/usr/bin/espeak-ng", ["-w", dir.file("hey-raw.wav"), "hey"])
        try await run("/usr/bin/sox", [dir.file("hey-raw.wav"), "-r", "16000", "-c", "1", "-b", "16", dir.file("hey.wav")])
        try await run("/usr/bin/sox", ["-n", "-r", "16000", "-c", "1", "-b", "16", dir.file("silence.wav"), "trim", "0", "1.5"])
        let input = dir.file("state/capture.wav")
        try FileManager.default.createDirectory(atPath: dir.file("state"), withIntermediateDirectories: true)
        try await run("/usr/bin/sox", [dir.file("silence.wav"), dir.file("hey.wav"), order]
            + Array(repeating: dir.file("silence.wav"), count: 4) + [input])
        return input
    }

    /// What the input goes on with: "hey", the second recorded order, 6 s of
    /// silence (after `makeInput`, which makes "hey" and the silence).
    static func makeSecondInput(in dir: TemporaryDirectory) async throws -> String {
        guard FileManager.default.fileExists(atPath: secondOrder) else { throw TestFailure("missing recording \(secondOrder)") }
        let input = dir.file("second.wav")
        try await run("/usr/bin/sox", [dir.file("hey.wav"), secondOrder] + Array(repeating: dir.file("silence.wav"), count: 4) + [input])
        return input
    }

    static func run(_ tool: String, _ arguments: [String]) async throws {
        let exit = try await ChildProcess.run(tool, arguments)
        guard exit.succeeded else { throw TestFailure("\(tool) \(arguments) failed: \(exit)") }
    }

    /// Starts parleyd on `dir`; its standard error (the log) is collected
    /// while it runs.
    /// `settings`: more YAML (the defaults here: the input WAV read once, a 2 s confirmation).
    /// `primaryApp`: parley.yaml's `primary_app`; `environment`: added to the test's for parleyd.
    /// The ask rule (`speech.ask_unsure`) is on, as shipped: an order is
    /// never asked back (its read-back is the check), so the order tests
    /// hear the read-back whatever confidence their recording gets.
    static func startDaemon(
        _ dir: TemporaryDirectory,
        settings: String = "audio: {capture: \"file:capture.wav\"}\ntimeouts: {confirmation: 2s}",
        primaryApp: String = "Coffee Maker", environment: [String: String] = [:],
        speech: String = "acoustic_model: stock"
    ) async throws -> ChildProcess {
        try """
            state_directory: \(dir.file("state"))
            control_socket: \(dir.file("parley.sock"))
            primary_app: \(primaryApp)
            log_level: debug
            speech: {\(speech)}

            """.appending(settings).write(toFile: dir.file("parley.yaml"), atomically: true, encoding: .utf8)
        return try await Executables.start("parleyd", ["--config", dir.file("parley.yaml")],
                                           environment: environment.isEmpty ? nil
                                               : ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }

    /// Polls `status` (by attempts, not time) until `done` holds.
    static func waitForStatus(_ socket: String, attempts: Int = 600, _ done: @escaping @Sendable (DaemonStatus) -> Bool)
        async throws -> DaemonStatus?
    {
        try await offPool {
            var last: DaemonStatus?
            do {
                return try Poll.valueBlocking("parleyd's status on \(socket) to reach the state awaited", polls: attempts,
                                              every: .milliseconds(50)) { () -> DaemonStatus? in
                    guard let status = try? ControlClient(path: socket).send(.status).status else { return nil }
                    last = status
                    return done(status) ? status : nil
                }
            } catch {
                return last  // the caller's expectations say what differs
            }
        }
    }

    /// The lines of a daemon's log that say what it heard, said and
    /// decided, one per line: what a failed expectation shows first, as
    /// the whole log is cut short in CI's summary.
    static func decisions(in log: String) -> String {
        let marks = ["heard", "interrupted", "spoke text=", "woken", "ignored", "stopped speaking", "rejected", "play file="]
        return log.split(separator: "\n").filter { line in marks.contains { line.contains($0) } }.joined(separator: "\n")
    }

    /// Stops the daemon with SIGTERM and returns its log (standard error).
    static func stop(_ process: ChildProcess) async throws -> String {
        try await process.stop().standardError
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

    /// Voiced frames in the playback file once there are more than `count`
    /// (what there are after 300 polls otherwise: the caller's expectations
    /// say what is missing).
    static func voicedFrames(_ path: String, above count: Int) async throws -> Int {
        try await offPool {
            var voiced = 0
            _ = try? Poll.untilBlocking("more than \(count) voiced frames in \(path)", polls: 300, every: .milliseconds(50)) {
                voiced = (try? voicedFrames(path)) ?? 0
                return voiced > count
            }
            return voiced
        }
    }

    /// Voiced frames in the playback file once it has stopped growing in
    /// speech for 20 polls in a row (the device finished its line).
    static func settledVoicedFrames(_ path: String) async throws -> Int {
        try await offPool {
            var last = -1, voiced = 0, unchanged = 0
            for _ in 0..<600 where unchanged < 20 {
                voiced = (try? voicedFrames(path)) ?? 0
                unchanged = voiced == last ? unchanged + 1 : 0
                last = voiced
                usleep(50_000)
            }
            return voiced
        }
    }

    @Test func spokenOrderConfirmedByPressIsPerformedAndAnswered() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let first = try await Self.makeInput(in: dir)
        let second = try await Self.makeSecondInput(in: dir)
        // The microphone is the spool (an ALSA file device read in real
        // time): the input is played into it in two parts, the second once
        // the first order is done. One file with a fixed gap would race the
        // press on a busy machine; meanwhile the device hears silence.
        let process = try await Self.startDaemon(dir, settings: "timeouts: {confirmation: 20s}")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        _ = try await Self.waitForStatus(socket) { $0.audio.state == "running" }
        _ = try await LiveMicrophoneTests.play(first, socket: socket)

        let confirming = try await Self.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        #expect(confirming?.state == "awaiting-confirmation")
        #expect(confirming?.recognitions == 1)
        // Press once the confirmation has been played (as a person would).
        let playback = dir.file("state/playback.wav")
        let voicedBeforePress = try await Self.voicedFrames(playback, above: 100)

        _ = try await offPool { try ControlClient(path: socket).send(.press(.short)) }
        let done = try await Self.waitForStatus(socket) { $0.lastIntents.first == "CoffeeMaker/orderDrink" && $0.donations == 1 }
        #expect(done?.donations == 1)
        // The second order, heard once the first is done, is read back and
        // confirmed in turn.
        let voicedAfterFirst = try await Self.settledVoicedFrames(playback)
        _ = try await LiveMicrophoneTests.play(second, socket: socket)
        let secondRead = try await Self.waitForStatus(socket) { $0.recognitions == 2 && $0.state == "awaiting-confirmation" }
        #expect(secondRead?.recognitions == 2 && secondRead?.state == "awaiting-confirmation")
        #expect(secondRead?.donations == 1)  // not before the press
        let voicedBeforeSecondPress = try await Self.voicedFrames(playback, above: voicedAfterFirst + 100)
        _ = try await offPool { try ControlClient(path: socket).send(.press(.short)) }
        let both = try await Self.waitForStatus(socket) { $0.donations == 2 && $0.state == "idle" }
        #expect(both?.donations == 2)
        // Wait until the answer has been played (the playback file stops growing in speech).
        _ = try await Self.waitForStatus(socket, attempts: 100) { _ in false }
        let log = try await Self.stop(process)

        let store = try StateStore(path: dir.file("state/state.db"))
        let orders = try await store.donations(app: "CoffeeMaker", intent: "orderDrink", limit: nil)  // newest first
        #expect(orders.count == 2)
        #expect(orders.last?.parameters["coffeeDrink"] == "coffee")
        #expect(orders.last?.parameters["size"] == "twelve ounce")
        #expect(orders.last?.parameters["roast"] == "light roast")
        #expect(orders.first?.parameters["coffeeDrink"] == "house coffee")
        #expect(orders.first?.parameters["size"] == "sixteen ounce")
        #expect(orders.first?.parameters["roast"] == "medium roast")

        // The confirmation was spoken before the press, the result after it.
        let voicedAfter = try Self.voicedFrames(dir.file("state/playback.wav"))
        #expect(voicedBeforePress > 100)  // > 1 s of speech: the confirmation
        #expect(voicedAfter > voicedBeforePress + 100)  // and the result line
        #expect(log.contains("Press the button to order"))
        #expect(log.contains("spoke text=Ordered."))
        #expect(voicedBeforeSecondPress > voicedAfterFirst + 100)  // the second read-back before its press
        #expect(log.components(separatedBy: "spoke text=Ordered.").count - 1 == 2)

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

    /// `adaptation.keep_audio`: the recorded order confirmed with the button
    /// is kept with the words heard; `parley adapt` needs more of them and
    /// says so; forgetting the history deletes the audio.
    @Test func aConfirmedOrderIsKeptForTheRoomAndForgottenWithTheHistory() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let first = try await Self.makeInput(in: dir)
        let process = try await Self.startDaemon(
            dir, settings: "timeouts: {confirmation: 20s}\nadaptation: {keep_audio: true}")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        let started = try await Self.waitForStatus(socket) { $0.audio.state == "running" }
        #expect(started?.keepAudio == true && started?.keptRecordings == 0 && started?.roomTransform == nil)
        _ = try await LiveMicrophoneTests.play(first, socket: socket)
        _ = try await Self.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        _ = try await offPool { try ControlClient(path: socket).send(.press(.short)) }
        let kept = try await Self.waitForStatus(socket) { $0.donations == 1 && $0.keptRecordings == 1 }
        #expect(kept?.keptRecordings == 1)
        let words = try String(contentsOfFile: dir.file("state/adaptation/kept/00000001.txt"), encoding: .utf8)
        #expect(words.contains("light roast") && words.contains("twelve ounce"), "kept words: \(words)")
        let audio = try FileManager.default.attributesOfItem(atPath: dir.file("state/adaptation/kept/00000001.wav"))
        #expect((audio[.size] as? Int ?? 0) > 16_000 * 2)  // more than a second of 16 kHz speech

        let refusal = try await offPool { () -> String in
            do { return "answered: \(try ControlClient(path: socket).send(.adapt))" } catch { return "\(error)" }
        }
        #expect(refusal.contains("1 confirmed recording kept") && refusal.contains("at least 5"), "\(refusal)")
        let forgot = try await offPool { try ControlClient(path: socket).send(.forgetDonations(.all)) }
        #expect(forgot.count == 1)
        #expect(forgot.message == "Forgot 1 donation and 1 kept recording with the room transform.")
        let after = try await Self.waitForStatus(socket) { $0.keptRecordings == 0 }
        #expect(after?.keptRecordings == 0 && after?.donations == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.file("state/adaptation/kept/00000001.wav")))
        _ = try await Self.stop(process)
    }

    /// `parley status` says while the device's voice plays (every reply,
    /// typed ones too, is spoken; what is heard meanwhile is listened to for
    /// "stop" only). The soak waits on it before a recorded check: without
    /// it, a check played over a long reply was heard as a barge-in and lost.
    @Test func statusSaysWhileTheDeviceIsSpeaking() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let process = try await Self.startDaemon(dir, settings: "")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        let quiet = try await Self.waitForStatus(socket) { $0.audio.state == "running" }
        #expect(quiet?.audio.speaking == false)
        _ = try await offPool { try ControlClient(path: socket).send(.say("what can i say")) }
        let speaking = try await Self.waitForStatus(socket) { $0.audio.speaking == true }
        #expect(speaking?.audio.speaking == true)
        // The help line lasts seconds; then the device is quiet again.
        let done = try await Self.waitForStatus(socket) { $0.audio.speaking == false }
        #expect(done?.audio.speaking == false)
    }

    @Test func withoutThePressNothingIsOrdered() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        _ = try await Self.makeInput(in: dir)
        let process = try await Self.startDaemon(dir)
        let socket = dir.file("parley.sock")
        let confirming = try await Self.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        #expect(confirming != nil && confirming?.state == "awaiting-confirmation")
        // Asked twice (2 s each), then given up: back to idle with nothing done.
        let after = try await Self.waitForStatus(socket) { $0.state == "idle" }
        #expect(after?.state == "idle")
        #expect(after?.donations == 0)
        #expect(after?.lastIntents.isEmpty == true)
        let log = try await Self.stop(process)
        #expect(log.contains("nothing was done"))
        #expect(!log.contains("performed intent="))
    }
}

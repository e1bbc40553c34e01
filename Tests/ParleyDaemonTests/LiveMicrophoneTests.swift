import Foundation
import ParleyControl
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The real daemon listening to its default stand-in microphone (a `spool:`
/// capture through ALSA's file plugin), with recordings played into it while
/// it runs, as `parley play` does: the named wake opens a window, a command
/// without the wake word is understood in it, and "stop" said over the
/// device's own voice interrupts it.
@Suite(.serialized) struct LiveMicrophoneTests {
    static let computer = Fixtures.wakeComputer.appendingPathComponent("0f39d2ed-e21c-470b-b0ae-9957dbab93e5.wav").path
    static let order = Fixtures.coffeeClean.appendingPathComponent("0075d273-51bb-47cb-b323-4437bd0de029.wav").path

    static func play(_ path: String, socket: String) async throws -> String {
        try await offPool { try ControlClient(path: socket).send(.play(path)).message ?? "" }
    }

    @Test func namedWakeWindowCommandAndBargeIn() async throws {
        for file in [Self.computer, Self.order] where !FileManager.default.fileExists(atPath: file) {
            throw TestFailure("missing recording \(file)")
        }
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        try await EndToEndTests.run("/usr/bin/espeak-ng", ["-w", dir.file("stop-raw.wav"), "stop"])
        try await EndToEndTests.run("/usr/bin/sox", [dir.file("stop-raw.wav"), "-r", "16000", "-c", "1", "-b", "16", dir.file("stop.wav")])
        let process = try await EndToEndTests.startDaemon(
            dir, settings: "wake: {hey_optional: true, window: 6s}\ntimeouts: {confirmation: 20s}")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        // Ready when the recogniser listens to the spool.
        let ready = try await EndToEndTests.waitForStatus(socket) { $0.audio.state == "running" }
        #expect(ready?.audio.capture == "parley_spool_capture")

        // "Computer" alone (a real recording): the wake detector opens a window.
        #expect(try await Self.play(Self.computer, socket: socket).contains("into the microphone"))
        let woken = try await EndToEndTests.waitForStatus(socket) { $0.state == "listening" }
        #expect(woken?.state == "listening")

        // In the window, an order without any wake word is understood.
        _ = try await Self.play(Self.order, socket: socket)
        // Awaited with the read-back under way: on a loaded machine the state
        // alone was sometimes seen only after the read-back had ended, and a
        // "stop" played then is an answer, not an interruption.
        let confirming = try await EndToEndTests.waitForStatus(socket) {
            $0.state == "awaiting-confirmation" && $0.audio.speaking == true
        }
        #expect(confirming?.state == "awaiting-confirmation")
        #expect(confirming?.audio.speaking == true)
        #expect(confirming?.recognitions == 1)

        // "Stop" while the device reads the order back: it is cut short and
        // the order cancelled.
        _ = try await Self.play(dir.file("stop.wav"), socket: socket)
        let idle = try await EndToEndTests.waitForStatus(socket) { $0.state == "idle" }
        let log = try await EndToEndTests.stop(process)
        #expect(idle?.state == "idle", "what the daemon decided: \(EndToEndTests.decisions(in: log))")
        #expect(idle?.donations == 0)
        #expect(log.contains("woken name=computer"))
        #expect(log.contains("interrupted heard=stop"))
        #expect(log.contains("spoke text=Cancelled."))
        #expect(!log.contains("performed intent="))
    }

    /// "Computer", a pause just long enough to decide it alone, then an
    /// order: the order begins about when the wake tone plays. Heard over
    /// the tone as an interruption, it lost its first words when the
    /// utterance started again after it ("may i have …", unsure, 1.8 s
    /// after its end); the tone is not the device talking, so it is heard whole.
    @Test func aCommandBegunDuringTheWakeToneIsHeardWhole() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        // The recording's word ends at 1.93 s; the order's speech starts 0.67 s into its file.
        try await EndToEndTests.run("/usr/bin/sox", [Self.computer, dir.file("computer.wav"), "trim", "0", "2.0"])
        try await EndToEndTests.run("/usr/bin/sox", [dir.file("computer.wav"), Self.order, dir.file("command.wav")])
        let process = try await EndToEndTests.startDaemon(dir, settings: "wake: {hey_optional: true, window: 6s}\ntimeouts: {confirmation: 20s}")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        _ = try await EndToEndTests.waitForStatus(socket) { $0.audio.state == "running" }
        _ = try await Self.play(dir.file("command.wav"), socket: socket)
        let confirming = try await EndToEndTests.waitForStatus(socket) { $0.state == "awaiting-confirmation" }
        #expect(confirming?.recognitions == 1)
        let log = try await EndToEndTests.stop(process)
        #expect(log.contains("woken name=computer"))
        let heard = log.split(separator: "\n").filter { $0.contains("parley.listen: heard") }
        #expect(heard.contains { $0.contains("text=can i have a light roast twelve ounce coffee ") && $0.contains(" unsure=false") },
                "\(log.split(separator: "\n").filter { $0.contains("parley.listen") }.joined(separator: "\n"))")
        // Not started again over the tone (later, over the answer, the
        // recording's tail may be: that is barge-in as it should be).
        let beforeHeard = log.components(separatedBy: "parley.listen: heard").first ?? log
        #expect(!beforeHeard.contains("the utterance starts again"))
    }

    @Test func anOpenTextAnswerIsDictated() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let process = try await EndToEndTests.startDaemon(dir, settings: "")
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        _ = try await EndToEndTests.waitForStatus(socket) { $0.audio.state == "running" }
        let asked = try await offPool { try ControlClient(path: socket).send(.say("add a note to notes")).spoken }
        #expect(asked == ["What should the note say?"])
        // The answer is a real recording; only dictation can take it.
        _ = try await Self.play(Self.order, socket: socket)
        let answered = try await EndToEndTests.waitForStatus(socket) {
            !$0.lastIntents.isEmpty || $0.state == "awaiting-confirmation"
        }
        if answered?.state == "awaiting-confirmation" {
            _ = try await offPool { try ControlClient(path: socket).send(.press(.short)) }
        }
        let done = try await EndToEndTests.waitForStatus(socket) { !$0.lastIntents.isEmpty }
        #expect(done?.lastIntents.first?.hasPrefix("Notes/") == true)
        let log = try await EndToEndTests.stop(process)
        let performed = log.split(separator: "\n").first { $0.contains("performed intent=Notes/") }.map(String.init) ?? ""
        #expect(log.contains("dictation=true"))
        #expect(performed.contains("coffee"), "\(performed)")
    }

    @Test func playIsRefusedWithoutASpoolAndNamesTheBadFile() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let process = try await EndToEndTests.startDaemon(dir)  // file: capture
        defer { process.terminate() }
        let socket = dir.file("parley.sock")
        _ = try await EndToEndTests.waitForStatus(socket) { _ in true }
        let refused = await #expect(throws: (any Error).self) {
            try await offPool { try ControlClient(path: socket).send(.play(Self.order)) }
        }
        #expect("\(refused.map { "\($0)" } ?? "")".contains("spool:<path>"))
        _ = try await EndToEndTests.stop(process)

        let live = try TemporaryDirectory(); defer { live.remove() }
        let daemon = try await EndToEndTests.startDaemon(live, settings: "")
        defer { daemon.terminate() }
        _ = try await EndToEndTests.waitForStatus(live.file("parley.sock")) { _ in true }
        try "not audio".write(toFile: live.file("bad.wav"), atomically: true, encoding: .utf8)
        let bad = await #expect(throws: (any Error).self) {
            try await offPool { try ControlClient(path: live.file("parley.sock")).send(.play(live.file("bad.wav"))) }
        }
        #expect("\(bad.map { "\($0)" } ?? "")".contains(live.file("bad.wav")))
        _ = try await EndToEndTests.stop(daemon)
    }
}

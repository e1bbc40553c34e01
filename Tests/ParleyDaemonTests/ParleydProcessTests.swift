import Foundation
import ParleyControl
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The real `parleyd` binary: starts with a configuration, answers on its
/// socket, stops cleanly on SIGTERM; refuses a bad configuration.
@Suite struct ParleydProcessTests {
    @Test func startsAnswersAndStopsOnSIGTERM() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let configFile = dir.file("parley.yaml")
        try """
            board: sim
            state_directory: \(dir.file("state"))
            control_socket: \(dir.file("run/parley.sock"))
            log_level: debug
            """.write(toFile: configFile, atomically: true, encoding: .utf8)
        let process = try await Executables.start("parleyd", ["--config", configFile])

        let socket = dir.file("run/parley.sock")
        // Ready, and listening: every service is up (the recogniser's models
        // loaded, capture running) so the stop below has all of them to stop.
        let status = try await EndToEndTests.waitForStatus(socket) { $0.audio.state == "running" }
        #expect(status?.configFile == configFile)
        #expect(status?.stateDirectory == dir.file("state"))
        #expect(status?.pid == process.processIdentifier)
        #expect(status?.audio.state == "running")

        // The issue's 2 s limit is a timing figure: scripts/bench-daemon.sh
        // measures it (BENCHMARKS.md, "SIGTERM until exit"); a shared test
        // machine is too noisy for a timed assertion. Here: a clean exit.
        let exit = try await process.stop()  // SIGTERM
        let log = exit.standardError
        #expect(exit.signal == nil)
        #expect(exit.code == 0, "\(exit)")
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(log.contains("NOTICE parleyd: parleyd ready"))
        #expect(log.contains("NOTICE parleyd: parleyd stopped"))
        // LEDs off during the stop, before the daemon says it stopped.
        let ledsOff = log.range(of: "INFO parley.board: simulated board 'sim': LEDs off")
        let stopped = log.range(of: "parleyd stopped")
        #expect(ledsOff != nil, "\(log)")
        if let ledsOff, let stopped { #expect(ledsOff.upperBound < stopped.lowerBound) }
        #expect(FileManager.default.fileExists(atPath: dir.file("state/state.db")))
        // The database was closed cleanly: the WAL was checkpointed away.
        #expect(!FileManager.default.fileExists(atPath: dir.file("state/state.db-wal")))
    }

    @Test func sigtermCancelsAnOpenConversationWithoutPerforming() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        // The question must still be open when SIGTERM comes, however busy
        // the machine: a long answer time-out, not a quick test.
        try "timeouts: {answer: 2min}\nlog_level: debug\n".write(toFile: dir.file("parley.yaml"), atomically: true, encoding: .utf8)
        let process = try await Executables.start("parleyd", [
            "--config", dir.file("parley.yaml"), "--state-directory", dir.file("state"), "--socket", dir.file("parley.sock"),
        ])
        let socket = dir.file("parley.sock")
        let asked = try await offPool { () -> [String]? in
            let response = try? Poll.valueBlocking("parleyd answers `say` on \(socket)", polls: 400, every: .milliseconds(25)) {
                try? ControlClient(path: socket).send(.say("order soup with soup chef"))
            }
            return response?.spoken
        }
        #expect(asked == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        let exit = try await process.stop()
        let log = exit.standardError
        #expect(exit.code == 0, "\(exit)")
        #expect(log.contains("spoke text=Cancelled."))
        #expect(!log.contains("performed intent="))
        // The cancel asks for the commands grammar again; a stopping daemon
        // does not compile it (on a slow CPU that held the stop past the
        // watchdog), and the stop ended by itself, not by the watchdog.
        #expect(log.contains("listening grammar not rebuilt: parleyd is stopping"), "\(log)")
        #expect(!log.contains("stop took longer than"))
        // Each service's end is logged; the database is closed last.
        let ends = log.split(separator: "\n").filter { $0.contains("service ended") }
        #expect(ends.contains { $0.contains("service=ConversationStopper") })
        #expect(ends.last?.contains("service=StoreCloser still-running=") == true, "\(ends)")
        #expect(ends.last?.hasSuffix("still-running=") == true)
        #expect(log.contains("parleyd stopped stop-ms="))
    }

    /// A microphone that is not there (no card 9 on any test machine) must
    /// not stop the device: parleyd stays up, says why once, reports it in
    /// status, and still answers `parley say` and the button.
    @Test func aMissingMicrophoneKeepsTheDeviceRunning() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let configFile = dir.file("parley.yaml")
        try """
            board: sim
            state_directory: \(dir.file("state"))
            control_socket: \(dir.file("parley.sock"))
            audio: {capture: "hw:9,0"}
            """.write(toFile: configFile, atomically: true, encoding: .utf8)
        let process = try await Executables.start("parleyd", ["--config", configFile])
        defer { process.terminate() }
        let socket = dir.file("parley.sock")

        // Reconnecting is reported once the recogniser tried to open the
        // device, which is where parleyd used to exit.
        let missing = try await EndToEndTests.waitForStatus(socket) { $0.audio.state == "reconnecting" }
        #expect(missing?.audio.state == "reconnecting")
        #expect(missing?.audio.capture == "hw:9,0")
        #expect(missing?.audio.problem?.contains("'hw:9,0' not found") == true, "\(String(describing: missing?.audio))")
        // `parley status` says it too.
        let tool = try await Executables.run("parley", ["status", "--socket", socket]).standardOutput
        #expect(tool.contains("audio:        reconnecting, capture hw:9,0"), "\(tool)")
        #expect(tool.contains("microphone:   audio device 'hw:9,0' not found"), "\(tool)")

        let answer = try await offPool { try ControlClient(path: socket).send(.say("what can i say")) }
        #expect(answer.spoken?.first?.hasPrefix("You can say") == true, "\(answer)")
        let pressed = try await offPool { try ControlClient(path: socket).send(.press(.short)) }
        #expect(pressed.ok)
        // Still up and still trying after more status rounds (counted, not timed).
        let later = try await EndToEndTests.waitForStatus(socket, attempts: 20) { _ in false }
        #expect(process.isRunning)
        #expect(later?.audio.state == "reconnecting")

        let exit = try await process.stop()
        let log = exit.standardError
        #expect(exit.code == 0, "\(exit)")
        #expect(!log.contains("parleyd failed"))
        #expect(log.components(separatedBy: "microphone unavailable").count - 1 == 1, "\(log)")
        // libasound's own explanation is in the log's format, not raw on stderr.
        #expect(log.contains("NOTICE parley.alsa: "))
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("ALSA lib") }, "\(log)")
    }

    @Test func aBadConfigurationStopsTheStartWithFileAndLine() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let configFile = dir.file("parley.yaml")
        try "board: sim\nvoice:\n  rate: fast\n".write(toFile: configFile, atomically: true, encoding: .utf8)
        let exit = try await Executables.run("parleyd", ["--check-config"], environment: ["PARLEY_CONFIG": configFile])
        let message = exit.standardError
        #expect(exit.code == 78, "\(exit)")
        #expect(message.contains("\(configFile):3:"))
        #expect(message.contains("voice.rate"))
        #expect(message.contains("whole number"))
    }
}

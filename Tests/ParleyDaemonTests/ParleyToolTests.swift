import Foundation
import ParleyTestKit
import Testing

import ParleyHardware

@testable import ParleyDaemon

/// The `parley` control subcommands as a person runs them.
@Suite struct ParleyToolTests {
    private func parley(_ arguments: [String], user nobody: Bool = false) async throws -> (Int32?, String, String) {
        let tool = try Executables.url("parley").path
        let exit =
            nobody
            ? try await ChildProcess.run(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", tool] + arguments,
                environment: ["PATH": "/usr/bin:/bin"])
            : try await ChildProcess.run(tool, arguments, environment: ["PATH": "/usr/bin:/bin"])
        return (exit.code, exit.standardOutput, exit.standardError)
    }

    @Test func notRunningIsSaidPlainlyWithExit69() async throws {
        let (status, _, stderr) = try await parley(["status", "--socket", "/tmp/parley-none/none.sock"])
        #expect(status == 69)
        #expect(stderr.contains("parleyd is not running"))
        #expect(stderr.contains("/tmp/parley-none/none.sock"))
    }

    @Test func commandsTalkToTheDaemon() async throws {
        let running = try RunningServer(); defer { running.stop() }
        let (status, stdout, _) = try await parley(["status", "--socket", running.socket])
        #expect(status == 0)
        #expect(stdout.contains("board:        sim"))
        let (forgetStatus, forgetOut, _) = try await parley(["donations", "forget", "--all", "--socket", running.socket])
        #expect(forgetStatus == 0 && forgetOut.contains("Forgot 0 donations."))
        let (badStatus, _, badErr) = try await parley(["donations", "forget", "--socket", running.socket])
        #expect(badStatus != 0 && badErr.contains("exactly one"))
        let (jsonStatus, json, _) = try await parley(["phrases", "--json", "--socket", running.socket])
        #expect(jsonStatus == 0 && json.contains("\"ok\" : true"))
    }

    @Test func statusShowsWhatTheLEDsShow() async throws {
        let running = try await RunningServer.wired(); defer { running.stop() }
        let board = try #require(running.controller.components.board as? BoardBridge)
        let simulated = try #require(board.hardware as? SimulatedBoard)
        // The mute switch overrides the engine's idle state on the LEDs.
        simulated.setMuteSwitch(true)
        let (status, stdout, _) = try await parley(["status", "--socket", running.socket])
        #expect(status == 0)
        #expect(stdout.contains("state:        idle\nboard:        sim\nleds:         muted\naudio:"), "\(stdout)")
        #expect(!stdout.contains("button:"))  // said only when the button is not working
        await board.allOff()
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run the tool as another user"))
    func permissionDeniedIsSaidPlainlyWithExit77() async throws {
        let running = try RunningServer(); defer { running.stop() }
        chmod(running.dir.path, 0o755)
        chmod((running.socket as NSString).deletingLastPathComponent, 0o755)
        let (status, _, stderr) = try await parley(["status", "--socket", running.socket], user: true)
        #expect(status == 77)
        #expect(stderr.contains("permission denied on \(running.socket)"))
    }
}

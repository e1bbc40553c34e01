import Foundation
import ParleyTestKit
import Testing

/// The helper every test that starts a program uses (ParleyTestKit's
/// ChildProcess, on swift-subprocess).
@Suite struct ChildProcessTests {
    /// A child that writes far more than a pipe holds (64 KiB) to standard
    /// error and then goes on running: it reaches its next line only because
    /// the output is drained while it runs, not when it is stopped.
    @Test(.timeLimit(.minutes(3))) func outputIsDrainedWhileTheChildRuns() async throws {
        let child = try await ChildProcess.start(
            "/bin/sh", ["-c", "head -c 1048576 /dev/zero | tr '\\0' x >&2; echo written; exec sleep 600"])
        var lines: [String] = []
        for await line in child.outputLines {
            lines.append(line)
            if line == "written" { break }
        }
        #expect(lines == ["written"])
        #expect(child.isRunning)
        let exit = try await child.stop()
        #expect(exit.signal == SIGTERM)
        #expect(exit.code == nil)
        #expect(exit.standardError.utf8.count == 1_048_576)
        #expect(!child.isRunning)
    }

    @Test func inputExitCodeAndEnvironmentArePassed() async throws {
        let echo = try await ChildProcess.run("/bin/cat", input: "one\ntwo\n")
        #expect(echo.standardOutput == "one\ntwo\n")
        #expect(echo.succeeded)
        let failing = try await ChildProcess.run(
            "/bin/sh", ["-c", "echo \"$GREETING\" >&2; exit 3"], environment: ["GREETING": "hello"])
        #expect(failing.code == 3)
        #expect(failing.status == 3)
        #expect(failing.standardError == "hello\n")
        #expect(try await ChildProcess.run("/bin/pwd", workingDirectory: "/usr").standardOutput == "/usr\n")
    }

    /// Input for a child that has already exited: the write fails, the
    /// test runner lives on (SIGPIPE would end it).
    @Test func inputForAChildThatExitedDoesNotEndTheRunner() async throws {
        let big = String(repeating: "x", count: 1 << 20)  // more than a pipe holds
        let exit = try await ChildProcess.run("/bin/sh", ["-c", "exit 4"], input: big)
        #expect(exit.code == 4)
    }

    @Test func aProgramThatCannotStartIsAnError() async throws {
        await #expect(throws: (any Error).self) { try await ChildProcess.start("/nonexistent/parley-tool") }
    }

    @Test func killEndsItWithSIGKILL() async throws {
        let child = try await ChildProcess.start("/bin/sleep", ["600"])
        child.kill()
        let exit = try await child.wait()
        #expect(exit.signal == SIGKILL)
        #expect(exit.status == 128 + SIGKILL)
        child.terminate()  // after the exit: nothing to signal, no error
    }

    /// With a line backlog, a child writing faster than the test reads is
    /// held on the pipe: 200,000 lines (over 1 MiB, far more than a pipe
    /// and a one-line queue hold) cannot all be written while the test reads
    /// one, so the child has not reached its `touch`. Killing it releases
    /// the hold, and the lines still in the pipe arrive in order.
    @Test(.timeLimit(.minutes(3))) func aLineBacklogHoldsAChildThatWritesFasterThanTheTestReads() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let marker = dir.file("finished")
        let child = try await ChildProcess.start(
            // The shell's own echo: a forked `seq` would outlive the kill.
            "/bin/sh", ["-c", "i=1; while [ $i -le 200000 ]; do echo $i; i=$((i + 1)); done; touch '\(marker)'; exec sleep 600"],
            lineBacklog: 1)
        var lines: [String] = []
        for await line in child.outputLines {
            lines.append(line)
            if lines.count == 1 {
                #expect(!FileManager.default.fileExists(atPath: marker))
                #expect(child.isRunning)
                child.kill()
            }
        }
        let exit = try await child.wait()
        #expect(exit.signal == SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: marker))
        #expect(lines.count < 200_000)
        #expect(lines == (1...lines.count).map(String.init))
    }

    /// Output past the limit is counted, not kept, and the text says so; a
    /// line longer than the limit keeps its beginning, and the next line is
    /// whole.
    @Test func outputPastTheLimitIsNotKept() async throws {
        let child = try await ChildProcess.start(
            "/bin/sh", ["-c", "head -c 5000 /dev/zero | tr '\\0' x; echo; echo next; head -c 3000 /dev/zero >&2"],
            outputLimit: 1000)
        var lines: [String] = []
        for await line in child.outputLines { lines.append(line) }
        let exit = try await child.wait()
        #expect(exit.succeeded)
        #expect(lines == [String(repeating: "x", count: 1000), "next"])
        #expect(exit.standardOutput.hasPrefix(String(repeating: "x", count: 1000) + "\n["))
        #expect(exit.standardOutput.contains("4006 more bytes not kept"))
        #expect(exit.standardError.contains("2000 more bytes not kept"))
    }
}

import Foundation
import ParleyTestKit
import Testing

/// scripts/setup.sh, which both README commands run first: it installs what
/// the build, the tests and the scripts use, as root or through sudo. apt-get
/// and sudo are replaced by recording stubs; nothing is installed.
@Suite(.serialized) struct SetupScriptTests {
    static let script = Fixtures.packageRoot.appendingPathComponent("scripts/setup.sh")

    /// The Debian packages in the script's PACKAGES list.
    static func packages() throws -> [String] {
        let text = try String(contentsOf: script, encoding: .utf8)
        guard let start = text.range(of: "PACKAGES=("), let end = text.range(of: "\n)", range: start.upperBound..<text.endIndex)
        else { throw ChatConsoleTests.CLIError("no PACKAGES=( … ) list in \(script.path)") }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").flatMap { line in
            (line.split(separator: "#").first ?? "").split(separator: " ").map(String.init)
        }
    }

    @Test func theToolsTheTestsAndScriptsRunAreInstalled() throws {
        let packages = Set(try Self.packages())
        // python3: ControlSocketTests, bench-daemon.sh, eval-understand.sh; bc: bench-daemon.sh;
        // sox and espeak-ng: the end-to-end tests' input.
        for needed in ["python3", "bc", "sox", "espeak-ng", "sqlite3"] {
            #expect(packages.contains(needed), "\(needed) missing from scripts/setup.sh")
        }
    }

    struct Run {
        var status: Int32
        var recorded: [String]
        var stderr: String
    }

    /// Runs a copy of setup.sh that also wants a package nobody has, with
    /// `apt-get`, `sudo` and `swift` stubs first on PATH; as user `uid`.
    func runSetup(uid: Int?) async throws -> Run {
        let dir = "/tmp/pst-" + String(UUID().uuidString.prefix(8))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bin = dir + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let log = dir + "/calls.log"
        try Data().write(to: URL(fileURLWithPath: log))
        chmod(log, 0o666)
        func stub(_ name: String, _ body: String) throws {
            try writeExecutable("#!/bin/sh\n\(body)\n", toFile: "\(bin)/\(name)")
        }
        try stub("sudo", "echo \"sudo $*\" >> \(log); exec \"$@\"")
        try stub("apt-get", "echo \"apt-get DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*\" >> \(log)")
        try stub("swift", "exit 0")
        // Selenium counts as installed: this test is about apt-get (and pip would reach PyPI).
        try stub("python3", "exit 0")
        let original = try String(contentsOf: Self.script, encoding: .utf8)
        try original.replacingOccurrences(of: "PACKAGES=(", with: "PACKAGES=(\n  parley-test-no-such-package")
            .write(toFile: dir + "/setup.sh", atomically: true, encoding: .utf8)
        chmod(dir, 0o755)
        chmod(dir + "/setup.sh", 0o644)

        let command = uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups", "/bin/bash"] }
            ?? ["/bin/bash"]
        let exit = try await ChildProcess.run(
            command[0], Array(command.dropFirst()) + [dir + "/setup.sh"], environment: ["PATH": "\(bin):/usr/bin:/bin"],
            workingDirectory: dir)
        let recorded = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        return Run(status: exit.status, recorded: recorded, stderr: exit.standardError)
    }

    @Test(.enabled(if: getuid() == 0, "the root case needs root"))
    func asRootItRunsAptGetDirectly() async throws {
        let run = try await runSetup(uid: nil)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.recorded.contains { $0.hasPrefix("sudo") })
        #expect(run.recorded.contains("apt-get DEBIAN_FRONTEND=noninteractive update -qq"))
        #expect(run.recorded.contains {
            $0.hasPrefix("apt-get DEBIAN_FRONTEND=noninteractive install") && $0.hasSuffix(" parley-test-no-such-package")
        }, "\(run.recorded)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run the script as another user"))
    func asAnotherUserItGoesThroughSudoKeepingTheFrontend() async throws {
        let run = try await runSetup(uid: 65534)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.recorded.contains("sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq"), "\(run.recorded)")
        // sudo resets the environment: the frontend still reaches apt-get through env(1).
        #expect(run.recorded.contains {
            $0.hasPrefix("apt-get DEBIAN_FRONTEND=noninteractive install") && $0.hasSuffix(" parley-test-no-such-package")
        }, "\(run.recorded)")
    }
}

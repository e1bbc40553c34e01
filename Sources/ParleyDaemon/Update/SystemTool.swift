import Dispatch
import Foundation
import Synchronization

/// How a system tool (rauc, systemctl) ended, with what it wrote.
struct ToolRun: Sendable {
    var status: Int32
    /// True when a signal ended it (the timeout's SIGTERM among them).
    var signalled: Bool
    var output: String
    var errorOutput: String

    var succeeded: Bool { !signalled && status == 0 }

    /// Why it failed, in its own words: RAUC's `LastError:` line (`rauc
    /// install` prints it on standard output, then "Installing `…` failed"
    /// on standard error), else the last non-empty line of standard error,
    /// else of standard output.
    var lastLine: String {
        let marker = "LastError: "
        if let line = (output + "\n" + errorOutput).split(separator: "\n").last(where: { $0.contains(marker) }),
            let range = line.range(of: marker) {
            return line[range.upperBound...].trimmingCharacters(in: .whitespaces)
        }
        for text in [errorOutput, output] {
            if let line = text.split(separator: "\n").last(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) {
                return line.trimmingCharacters(in: .whitespaces)
            }
        }
        return signalled ? "killed by signal \(status)" : "exited with status \(status), saying nothing"
    }
}

struct ToolError: Error, CustomStringConvertible {
    var description: String
}

/// Runs a system tool to its end on a thread of its own (never the
/// cooperative pool, which the engine and the control socket use): both
/// output streams are read while it runs, so a chatty tool never blocks on a
/// full pipe. With `timeout`, a tool still running is sent SIGTERM.
enum SystemTool {
    static func run(_ executable: String, _ arguments: [String], timeout: Duration? = nil) async throws(ToolError)
        -> ToolRun
    {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ToolError(description: "\(executable) is not an executable file")
        }
        let result: Result<ToolRun, ToolError> = await withCheckedContinuation { done in
            Thread.detachNewThread {
                done.resume(returning: runBlocking(executable, arguments, timeout: timeout))
            }
        }
        return try result.get()
    }

    private final class Collected: Sendable {
        let data = Mutex(Data())
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], timeout: Duration?)
        -> Result<ToolRun, ToolError>
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            return .failure(ToolError(description: "cannot start \(executable): \(error.localizedDescription)"))
        }
        if let timeout {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                if process.isRunning { process.terminate() }
            }
        }
        let collected = Collected()
        let reader = DispatchGroup()
        DispatchQueue.global().async(group: reader) {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            collected.data.withLock { $0 = data }
        }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        reader.wait()
        process.waitUntilExit()
        return .success(ToolRun(
            status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
            output: String(decoding: out, as: UTF8.self),
            errorOutput: collected.data.withLock { String(decoding: $0, as: UTF8.self) }))
    }
}

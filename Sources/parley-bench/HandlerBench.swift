import ArgumentParser
import Foundation
import Logging
import ParleyExternal

/// `parley-bench handler`: the round trip of a `perform` to a trivial
/// external-app handler through the real supervisor (JSON-RPC line out,
/// line back, answer matched and decoded), as the engine makes it.
struct HandlerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handler",
        abstract: "Times perform round trips to a trivial handler (median and p99).")

    @Option(help: "Round trips measured (after the warm-up).") var count = 5000
    @Option(help: "Round trips before measuring.") var warmUp = 200
    @Option(help: "The handler's argv, run in a temporary folder holding handler.py (a Python json echo).")
    var handler = "python3 handler.py"
    @Option(help: "Start the handler through the sandbox's socket (parley-app.socket: /run/parley-app.sock), as parleyd does with handler_sandbox.")
    var sandbox: String?

    /// Reads a request, answers "Done." with the parameters it got: the least a real handler does.
    static let trivialHandler = """
        import json, sys
        for line in sys.stdin:
            m = json.loads(line)
            if m.get("method") == "shutdown": break
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"dialog": "Done.", "output": m["params"]["parameters"]}}) + "\\n")
            sys.stdout.flush()
        """

    func validate() throws {
        guard count > 0, warmUp >= 0 else { throw ValidationError("--count must be > 0 and --warm-up >= 0") }
    }

    func run() async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("parley-bench-handler-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.trivialHandler.write(to: folder.appendingPathComponent("handler.py"), atomically: true, encoding: .utf8)
        var limits = HandlerLimits()
        limits.sandbox = sandbox
        let supervisor = HandlerSupervisor(app: "Bench", argv: handler.split(separator: " ").map(String.init), directory: folder, limits: limits,
                                           logger: Logger(label: "bench") { _ in StreamLogHandler.standardError(label: "bench") })
        let clock = ContinuousClock()
        let started = clock.now
        await supervisor.start()
        let params: JSONValue = ["intent": "SetLight", "parameters": ["room": "kitchen", "state": "on"]]
        _ = try await supervisor.call(.perform, params: params)
        let firstAnswer = clock.now - started
        for _ in 0..<warmUp { _ = try await supervisor.call(.perform, params: params) }
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = clock.now
            let result = try await supervisor.call(.perform, params: params)
            samples.append(Double((clock.now - start).components.attoseconds) / 1e12 + Double((clock.now - start).components.seconds) * 1e6)
            guard result["dialog"] == .string("Done.") else { throw ValidationError("unexpected answer \(result)") }
        }
        await supervisor.stop()
        samples.sort()
        func percentile(_ p: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count - 1) * p))] }
        let start = firstAnswer.components
        print(String(format: "start to first answer %.0f ms%@; perform round trip, %d calls (handler: %@): median %.0f µs, p90 %.0f µs, p99 %.0f µs, max %.0f µs",
                     Double(start.seconds) * 1e3 + Double(start.attoseconds) / 1e15, sandbox.map { " (sandbox \($0))" } ?? "",
                     count, handler, percentile(0.5), percentile(0.9), percentile(0.99), samples.last ?? 0))
    }
}

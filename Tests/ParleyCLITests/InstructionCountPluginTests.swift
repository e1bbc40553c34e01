import Foundation
import ParleyTestKit
import Testing

/// scripts/lib/qemu-instructions.c, the TCG plugin behind the arm64 counts
/// (scripts/lib/arm64-count.sh, training/bin/cost-arm64.sh): held to
/// valgrind's callgrind on the one architecture both can run, this
/// machine's. The same x86_64 program under `qemu-x86_64` with the plugin
/// and under callgrind must cost the same per unit of work (the totals'
/// difference between two sizes); start-up may differ (the emulated CPU has
/// other features, so libc picks other routines), which the difference
/// cancels, as the benchmarks' own method does.
@Suite struct InstructionCountPluginTests {
    let folder: TemporaryDirectory
    let plugin: String

    init() async throws {
        folder = try TemporaryDirectory()
        plugin = folder.file("qemu-instructions.so")
        let source = Fixtures.packageRoot.appendingPathComponent("scripts/lib/qemu-instructions.c").path
        let built = try await ChildProcess.run(
            "/usr/bin/gcc", ["-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-fvisibility=hidden", "-pthread", "-o", plugin, source])
        #expect(built.status == 0, "gcc: \(built.standardError)")
    }

    func counted(_ arguments: [String], ticks: String? = nil) async throws -> UInt64 {
        let out = folder.file("count")
        let spec = plugin + ",out=" + out + (ticks.map { ",ticks=" + $0 } ?? "")
        let run = try await ChildProcess.run("/usr/bin/qemu-x86_64", ["-plugin", spec] + arguments)
        #expect(run.status == 0, "qemu-x86_64: \(run.standardError)")
        let text = try String(contentsOfFile: out, encoding: .utf8)
        let words = text.split(separator: " ")
        #expect(words.first == "instructions", "the plugin wrote '\(text)'")
        return try #require(UInt64(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
    }

    func callgrind(_ arguments: [String]) async throws -> UInt64 {
        let out = folder.file("callgrind.out")
        let run = try await ChildProcess.run("/usr/bin/valgrind", ["--tool=callgrind", "--callgrind-out-file=" + out] + arguments)
        #expect(run.status == 0, "valgrind: \(run.standardError)")
        let line = try #require(try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
            .first { $0.hasPrefix("summary:") || $0.hasPrefix("totals:") })
        return try #require(UInt64(line.split(separator: " ")[1]))
    }

    @Test func aProgramCostsWhatCallgrindCounts() async throws {
        let small = ["/usr/bin/seq", "20000"], large = ["/usr/bin/seq", "60000"]
        let plugin = Double(try await counted(large) - counted(small))
        let valgrind = Double(try await callgrind(large) - callgrind(small))
        // 40,000 numbers printed: some hundreds of instructions each.
        #expect(valgrind > 40_000 * 50)
        #expect(abs(plugin / valgrind - 1) < 0.01, "plugin \(plugin), callgrind \(valgrind) for 40,000 more lines")
    }

    @Test func ticksCountWhileTheProgramRuns() async throws {
        let ticks = folder.file("ticks")
        let total = try await counted(["/bin/sh", "-c", "sleep 1.5; seq 100000 >/dev/null"], ticks: ticks)
        let lines = try String(contentsOfFile: ticks, encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        #expect(lines.count >= 2, "a line a second over 1.5 s: \(lines)")
        let seconds = lines.compactMap { Double($0[0]) }, counts = lines.compactMap { UInt64($0[1]) }
        #expect(seconds.count == lines.count && counts.count == lines.count)
        #expect(zip(seconds, seconds.dropFirst()).allSatisfy { $1 - $0 > 0.9 && $1 - $0 < 1.5 })
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 <= $1 })
        #expect((counts.last ?? .max) <= total)
    }

    /// Sixty children exiting at once send their parent sixty SIGCHLDs; the
    /// kernel hands a process-wide signal to any thread not blocking it, and
    /// qemu-user crashed (status 139, no count) whenever the plugin's ticks
    /// thread took one, as a daemon that runs espeak-ng would.
    @Test func childrenExitingDoNotReachTheTicksThread() async throws {
        let script = "for i in $(seq 20); do /bin/true & /bin/true & /bin/true & done; wait; seq 1000 >/dev/null"
        let total = try await counted(["/bin/sh", "-c", script], ticks: folder.file("ticks"))
        #expect(total > 1000 * 50)
    }

    @Test func anUnknownArgumentIsRefusedByName() async throws {
        let run = try await ChildProcess.run("/usr/bin/qemu-x86_64", ["-plugin", plugin + ",every=2", "/bin/true"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("'every=2'") && run.standardError.contains("out=FILE or ticks=FILE"), "\(run.standardError)")
    }
}

import Foundation
import ParleyTestKit
import Testing

@testable import ParleyStore

/// Kills a writer process with SIGKILL at random moments during a stream of
/// writes, restarts it, and checks that every acknowledged write is present
/// and the database is intact. (SIGKILL loses the process, not the page
/// cache; power-loss safety comes from synchronous=FULL, checked separately.)
@Suite struct CrashDurabilityTests {
    /// `parleyd`, built beside the test bundle in the same build folder.
    static func parleydURL() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("parleyd") }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CrashTestError("parleyd not found beside the tests (looked in \(candidates.map(\.path))); "
                + "build all products with `swift build --build-tests`")
        }
        return found
    }

    struct CrashTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Every write the test checks is kept: the writer's count limit is
    /// far above what 8 runs can acknowledge (each at most `killAfter` plus
    /// what the pipe holds, about 6,500 lines, past its kill point).
    static let keptDonations = 1_000_000

    /// Starts the writer and returns the acknowledged write numbers it printed
    /// before being killed after `killAfter` acknowledgements.
    private func runAndKill(_ parleyd: URL, database: String, start: Int, killAfter: Int) async throws -> [Int] {
        // lineBacklog: while the test is behind, the writer blocks on its
        // output instead of running thousands of writes past the kill point.
        let writer = try await ChildProcess.start(
            parleyd.path,
            ["store-stress", "--database", database, "--start", String(start),
             "--max-donations", String(Self.keptDonations)],
            outputLimit: 1 << 20, lineBacklog: 1)
        var acked: [Int] = []
        for await line in writer.outputLines {
            if line.hasPrefix("ack "), let n = Int(line.dropFirst(4)) { acked.append(n) }
            if acked.count == killAfter {
                // A random extra delay so the kill lands anywhere in a write.
                try await Task.sleep(for: .microseconds(Int.random(in: 0...3_000)))
                writer.kill()
            }
        }
        let exit = try await writer.wait()
        #expect(exit.signal == SIGKILL, "writer ended by itself: \(exit)")
        return acked
    }

    /// Copies the database and its -wal and -shm files (what a killed writer
    /// leaves) into `folder`, before anything opens them: opening and closing
    /// the store checkpoints the WAL and removes it.
    private func copyDatabase(_ database: String, to folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: database + suffix) {
            let name = (database as NSString).lastPathComponent + suffix
            try FileManager.default.copyItem(atPath: database + suffix, toPath: (folder as NSString).appendingPathComponent(name))
        }
    }

    @Test func everyAcknowledgedWriteSurvivesSIGKILL() async throws {
        let parleyd = try Self.parleydURL()
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let database = dir.file("state.db")
        var acknowledged: [Int] = []
        var next = 0
        let runs = 8
        for _ in 0..<runs {
            let acked = try await runAndKill(parleyd, database: database, start: next, killAfter: Int.random(in: 1...40))
            #expect(!acked.isEmpty)
            acknowledged += acked
            next = (acked.last ?? next) + 1
        }
        #expect(acknowledged.count < Self.keptDonations)
        let asKilled = dir.file("as-killed")
        try copyDatabase(database, to: asKilled)
        let store = try StateStore(path: database, clock: .unsynchronised)
        let integrity = try await store.integrityCheck()
        let identifiers = Set(try await store.donations(app: "Stress", intent: nil, limit: nil).compactMap(\.identifier))
        let missingDonations = acknowledged.filter { !identifiers.contains("w\($0)") }
        var missingValues: [Int] = []
        for n in acknowledged where try await store.value(app: "Stress", key: "k\(n)") != Data("v\(n)".utf8) {
            missingValues.append(n)
        }
        // When something is lost, the files as the last kill left them (the
        // -wal holds the writes not yet checkpointed) are kept, and what the
        // table holds says why.
        var evidence = ""
        if integrity != ["ok"] || !missingDonations.isEmpty || !missingValues.isEmpty {
            let kept = FileManager.default.temporaryDirectory
                .appendingPathComponent("parley-crash-durability-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
            try? FileManager.default.moveItem(atPath: asKilled, toPath: kept)
            let table = (try? await ChildProcess.run("/usr/bin/sqlite3", [database, """
                SELECT count(*), typeof(date), min(date), max(date), min(id), max(id) FROM donation GROUP BY typeof(date);
                SELECT 'app_data', count(*) FROM app_data; SELECT 'user_version', user_version FROM pragma_user_version;
                """]).standardOutput) ?? "sqlite3 failed"
            evidence = "; table: \(table); the database, -wal and -shm as the last kill left them are kept in \(kept)"
        }
        #expect(integrity == ["ok"], "integrity check: \(integrity)\(evidence)")
        #expect(missingDonations.isEmpty,
                "acknowledged donations lost: \(missingDonations.count) of \(acknowledged.count), first \(missingDonations.prefix(10))\(evidence)")
        #expect(missingValues.isEmpty,
                "acknowledged app data lost: \(missingValues.count) of \(acknowledged.count), first \(missingValues.prefix(10))\(evidence)")
        #expect(acknowledged.count >= runs)
    }
}

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

    /// Starts the writer and returns the acknowledged write numbers it printed
    /// before being killed after `killAfter` acknowledgements.
    private func runAndKill(_ parleyd: URL, database: String, start: Int, killAfter: Int) async throws -> [Int] {
        let writer = try await ChildProcess.start(
            parleyd.path, ["store-stress", "--database", database, "--start", String(start)])
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
        let store = try StateStore(path: database)
        #expect(try await store.integrityCheck() == ["ok"])
        let identifiers = Set(try await store.donations(app: "Stress", intent: nil, limit: nil).compactMap(\.identifier))
        // The store keeps the newest `maximumCount` donations and deletes the
        // oldest past it, by design (`DonationRetention`). On a loaded machine
        // the writer can run thousands of writes past the kill point before
        // the test has read their acknowledgements (10,495 acknowledged in one
        // whole-suite run, the 502 oldest then gone: 495 past the bound and 7
        // newer writes committed as the kills landed, never acknowledged). So
        // the acknowledged donations that must be there are the newest, less
        // one per run for such a write; every app value must be.
        let mustHold = acknowledged.suffix(max(0, DonationRetention().maximumCount - runs))
        let missingDonations = mustHold.filter { !identifiers.contains("w\($0)") }
        // When some are missing, what the table holds and a copy of the
        // database say why.
        var table = ""
        if !missingDonations.isEmpty {
            let kept = "/tmp/parley-crash-durability-\(getpid()).db"
            try? FileManager.default.removeItem(atPath: kept)
            try? FileManager.default.copyItem(atPath: database, toPath: kept)
            table = (try? await ChildProcess.run("/usr/bin/sqlite3", [database, """
                SELECT count(*), typeof(date), min(date), max(date), min(identifier), max(identifier) FROM donation GROUP BY typeof(date);
                SELECT 'app_data', count(*) FROM app_data; SELECT 'user_version', user_version FROM pragma_user_version;
                """]).standardOutput) ?? "sqlite3 failed"
            table += " (database kept at \(kept))"
        }
        #expect(missingDonations.isEmpty, "acknowledged donations lost: \(missingDonations.count) of the newest \(mustHold.count) of \(acknowledged.count); table: \(table)")
        var missingValues: [Int] = []
        for n in acknowledged where try await store.value(app: "Stress", key: "k\(n)") != Data("v\(n)".utf8) {
            missingValues.append(n)
        }
        #expect(missingValues.isEmpty, "acknowledged app data lost: \(missingValues)")
        #expect(acknowledged.count >= 8)
    }
}

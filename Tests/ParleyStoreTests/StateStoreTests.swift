import Foundation
import GRDB
import ParleyCore
import ParleyTestKit
import Testing

@testable import ParleyStore

@Suite struct StateStoreTests {
    private func donation(_ app: String, _ intent: String, id: String? = nil, group: String? = nil,
                          at seconds: Double, _ parameters: [String: String] = [:]) -> Donation {
        Donation(identifier: id, groupIdentifier: group, app: app, intent: intent, parameters: parameters,
                 date: Date(timeIntervalSince1970: seconds), trigger: "voice")
    }

    @Test func donationsRoundTripNewestFirstAndFilter() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(directory: dir.path)
        let a = try await store.record(donation("Soup Chef", "OrderSoup", at: 100, ["soup": "tomato", "quantity": "2"]))
        let b = try await store.record(donation("Soup Chef", "OrderSoup", at: 300, ["soup": "clamChowder"]))
        let c = try await store.record(donation("Timer", "StartTimer", at: 200, ["duration": "600"]))
        #expect(Set([a, b, c]).count == 3)

        let all = try await store.donations(app: nil, intent: nil, limit: nil)
        #expect(all.map(\.rowID) == [b, c, a])
        #expect(all.last?.parameters == ["soup": "tomato", "quantity": "2"])
        #expect(all.last?.date == Date(timeIntervalSince1970: 100))
        #expect(all.last?.trigger == "voice")

        #expect(try await store.donations(app: "Soup Chef", intent: nil, limit: nil).map(\.rowID) == [b, a])
        #expect(try await store.donations(app: "Soup Chef", intent: "OrderSoup", limit: 1).map(\.rowID) == [b])
        #expect(try await store.donations(app: "Timer", intent: "OrderSoup", limit: nil).isEmpty)
    }

    @Test func forgetByIdentifierGroupAppAndAll() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(directory: dir.path)
        try await store.record(donation("Soup Chef", "OrderSoup", id: "o1", group: "g1", at: 1))
        try await store.record(donation("Soup Chef", "OrderSoup", id: "o2", group: "g1", at: 2))
        try await store.record(donation("Soup Chef", "OrderSoup", id: "o3", group: "g2", at: 3))
        try await store.record(donation("Timer", "StartTimer", at: 4))
        try await store.record(donation("Notes", "AddNote", at: 5))

        #expect(try await store.delete(.identifier("o3")) == 1)
        #expect(try await store.delete(.identifier("o3")) == 0)
        #expect(try await store.delete(.group("g1")) == 2)
        #expect(try await store.delete(.app("Timer")) == 1)
        #expect(try await store.donations(app: nil, intent: nil, limit: nil).map(\.app) == ["Notes"])
        let remaining = try #require(try await store.donations(app: nil, intent: nil, limit: nil).first?.rowID)
        #expect(try await store.deleteDonation(rowID: remaining))
        try await store.record(donation("Notes", "AddNote", at: 6))
        #expect(try await store.delete(.all) == 1)
        #expect(try await store.donations(app: nil, intent: nil, limit: nil).isEmpty)
    }

    @Test func customPhrasesKeyedByNormalisedText() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(directory: dir.path)
        let created = Date(timeIntervalSince1970: 1_000)
        try await store.save(CustomPhrase(phrase: "Coffee time", app: "Coffee Maker", intent: "OrderDrink",
                                          parameters: ["drink": "latte", "size": "large"], created: created))
        try await store.save(CustomPhrase(phrase: "soup please", app: "Soup Chef", intent: "OrderSoup",
                                          parameters: [:], created: created))
        // Same normalised text replaces, it does not duplicate.
        try await store.save(CustomPhrase(phrase: "coffee  TIME!", app: "Coffee Maker", intent: "OrderDrink",
                                          parameters: ["drink": "americano"], created: created))
        let phrases = try await store.customPhrases()
        #expect(phrases.map(\.phrase) == ["coffee  TIME!", "soup please"])
        #expect(phrases.first?.parameters == ["drink": "americano"])
        #expect(phrases.first?.created == created)

        #expect(try await store.deletePhrase("Coffee Time"))
        #expect(try await store.deletePhrase("coffee time") == false)
        #expect(try await store.customPhrases().map(\.phrase) == ["soup please"])
    }

    @Test func appDataValuesAndPrefixedKeys() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(directory: dir.path)
        try await store.setValue(Data("milk".utf8), app: "Notes", key: "note/2")
        try await store.setValue(Data("eggs".utf8), app: "Notes", key: "note/1")
        try await store.setValue(Data(), app: "Notes", key: "empty")
        try await store.setValue(Data("x".utf8), app: "Other", key: "note/9")
        try await store.setValue(Data("%".utf8), app: "Notes", key: "n%te")

        #expect(try await store.value(app: "Notes", key: "note/1") == Data("eggs".utf8))
        #expect(try await store.value(app: "Notes", key: "empty") == Data())
        #expect(try await store.value(app: "Notes", key: "missing") == nil)
        #expect(try await store.keys(app: "Notes", prefix: "note/") == ["note/1", "note/2"])
        #expect(try await store.keys(app: "Notes", prefix: "n%") == ["n%te"])
        #expect(try await store.keys(app: "Notes", prefix: "") == ["empty", "n%te", "note/1", "note/2"])

        try await store.setValue(Data("bread".utf8), app: "Notes", key: "note/1")
        #expect(try await store.value(app: "Notes", key: "note/1") == Data("bread".utf8))
        try await store.removeValue(app: "Notes", key: "note/1")
        #expect(try await store.value(app: "Notes", key: "note/1") == nil)
        #expect(try await store.value(app: "Other", key: "note/9") == Data("x".utf8))
    }

    @Test func stateSurvivesReopenAndSchemaIsCurrent() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        do {
            let store = try StateStore(directory: dir.path)
            try await store.record(donation("Timer", "StartTimer", id: "t", at: 5))
            await store.close()
        }
        let reopened = try StateStore(directory: dir.path)
        #expect(try await reopened.schemaVersion() == Migrations.latestVersion)
        #expect(try await reopened.donations(app: nil, intent: nil, limit: nil).map(\.identifier) == ["t"])
        #expect(try await reopened.integrityCheck() == ["ok"])
    }

    @Test func walModeWithFullSynchronousIsActive() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(path: dir.file("x.db"))
        #expect(try await store.pragma("journal_mode") == "wal")
        // 2 = FULL (GRDB's own WAL setting would leave NORMAL, 1).
        #expect(try await store.pragma("synchronous") == "2")
    }

    @Test func newerSchemaIsRefused() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        try DatabaseQueue(path: dir.file("state.db")).write { db in
            try db.execute(sql: "PRAGMA user_version=\(Migrations.latestVersion + 1)")
        }
        let error = #expect(throws: StateStoreError.self) { try StateStore(path: dir.file("state.db")) }
        #expect(error?.problem.contains("newer than this Parley") == true)
        #expect(error?.description.contains(dir.file("state.db")) == true)
    }

    @Test func aMigrationThisParleyDoesNotKnowIsRefused() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        _ = try StateStore(path: dir.file("state.db"))
        try DatabaseQueue(path: dir.file("state.db")).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        let error = #expect(throws: StateStoreError.self) { try StateStore(path: dir.file("state.db")) }
        #expect(error?.problem.contains("newer than this Parley") == true)
    }

    /// A database written by the hand-written SQLite layer before GRDB:
    /// schema version 1 in `user_version`, no `grdb_migrations` table. It
    /// opens with its rows intact, NULL identifiers stay nil.
    @Test func aDatabaseFromTheHandWrittenStoreOpensWithItsData() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        try await DatabaseQueue(path: dir.file("state.db")).write { db in
            try db.execute(sql: Self.handWrittenSchemaVersion1)
            try db.execute(
                sql: """
                    INSERT INTO donation (identifier, group_identifier, app, intent, parameters, date, trigger)
                    VALUES (NULL, 'g', 'Soup Chef', 'OrderSoup', '{"quantity":"2","soup":"tomato"}', 100.5, 'voice');
                    INSERT INTO custom_phrase VALUES ('coffee time', 'Coffee time', 'Coffee Maker', 'OrderDrink', '{}', 7);
                    INSERT INTO app_data VALUES ('Notes', 'note/1', x'6d696c6b');
                    PRAGMA user_version = 1;
                    """)
        }
        let store = try StateStore(path: dir.file("state.db"))
        #expect(try await store.schemaVersion() == Migrations.latestVersion)
        let donations = try await store.donations(app: nil, intent: nil, limit: nil)
        #expect(donations.count == 1)
        #expect(donations.first?.identifier == nil)
        #expect(donations.first?.groupIdentifier == "g")
        #expect(donations.first?.parameters == ["soup": "tomato", "quantity": "2"])
        #expect(donations.first?.date == Date(timeIntervalSince1970: 100.5))
        #expect(try await store.customPhrases().map(\.phrase) == ["Coffee time"])
        #expect(try await store.value(app: "Notes", key: "note/1") == Data("milk".utf8))
        #expect(try await store.integrityCheck() == ["ok"])
    }

    /// Rows are written in the format the hand-written store used (REAL
    /// seconds, sorted-key JSON), so an older Parley could still read them.
    @Test func rowsKeepTheirStoredFormat() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(path: dir.file("state.db"))
        try await store.record(donation("Soup Chef", "OrderSoup", at: 12.25, ["soup": "a/b", "quantity": "2"]))
        await store.close()
        let row = try DatabaseQueue(path: dir.file("state.db")).read { db in
            try Row.fetchOne(db, sql: "SELECT typeof(date) AS kind, date, parameters FROM donation")
        }
        #expect(row?["kind"] == "real")
        #expect(row?["date"] == 12.25)
        #expect(row?["parameters"] == #"{"quantity":"2","soup":"a/b"}"#)
    }

    /// A NULL where the schema says NOT NULL (a damaged or hand-edited file)
    /// is an error naming the column, not an empty string.
    @Test func aNullInARequiredColumnIsAnErrorNotAnEmptyString() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        try await DatabaseQueue(path: dir.file("state.db")).write { db in
            // The same table without NOT NULL, as a damaged file might have it.
            try db.execute(
                sql: Self.handWrittenSchemaVersion1.replacingOccurrences(of: "app TEXT NOT NULL", with: "app TEXT")
                    + "INSERT INTO donation (app, intent, parameters, date, trigger) VALUES (NULL, 'I', '{}', 1, 'voice');"
                    + "PRAGMA user_version = 1;")
        }
        let store = try StateStore(path: dir.file("state.db"))
        let error = await #expect(throws: (any Error).self) { try await store.donations(app: nil, intent: nil, limit: nil) }
        #expect(String(describing: error).contains("app"), "\(String(describing: error))")
    }

    @Test func errorsNameTheSQLAndSQLiteMessage() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(path: dir.file("x.db"))
        let error = await #expect(throws: DatabaseError.self) { try await store.pragma("no_such_pragma = (") }
        #expect(error?.sql?.contains("no_such_pragma") == true)
        #expect(error?.description.contains("syntax error") == true, "\(String(describing: error))")
    }

    @Test func unopenablePathIsReportedWithThePath() throws {
        let error = #expect(throws: StateStoreError.self) {
            try StateStore(path: "/nonexistent-parley-dir/state.db")
        }
        #expect(error?.path == "/nonexistent-parley-dir/state.db")
        #expect(error?.description.contains("/nonexistent-parley-dir/state.db") == true)
    }

    @Test func aClosedStoreRefusesWrites() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(path: dir.file("state.db"))
        await store.close()
        await #expect(throws: DatabaseError.self) { try await store.setValue(Data(), app: "Notes", key: "k") }
        // Closed cleanly: the WAL was checkpointed into the file and removed.
        #expect(!FileManager.default.fileExists(atPath: dir.file("state.db-wal")))
    }

    /// The schema exactly as the hand-written store (before GRDB) created it.
    /// Kept as text, not taken from `Migrations`: it is what devices in the
    /// field have, and must not follow a change to a migration.
    static let handWrittenSchemaVersion1 = """
        CREATE TABLE donation (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            identifier TEXT,
            group_identifier TEXT,
            app TEXT NOT NULL,
            intent TEXT NOT NULL,
            parameters TEXT NOT NULL,          -- JSON object, keys sorted
            date REAL NOT NULL,                -- seconds since 1970
            trigger TEXT NOT NULL
        );
        CREATE INDEX donation_by_app ON donation(app, intent, date);
        CREATE INDEX donation_by_identifier ON donation(identifier);
        CREATE INDEX donation_by_group ON donation(group_identifier);
        CREATE TABLE custom_phrase (
            key TEXT PRIMARY KEY,              -- normalised phrase
            phrase TEXT NOT NULL,
            app TEXT NOT NULL,
            intent TEXT NOT NULL,
            parameters TEXT NOT NULL,
            created REAL NOT NULL
        );
        CREATE TABLE app_data (
            app TEXT NOT NULL,
            key TEXT NOT NULL,
            value BLOB NOT NULL,
            PRIMARY KEY (app, key)
        ) WITHOUT ROWID;

        """
}

/// `donations.keep` and `donations.max_entries`: the table stays bounded.
@Suite struct DonationRetentionTests {
    private func donation(_ n: Int, at seconds: Double) -> Donation {
        Donation(identifier: "d\(n)", groupIdentifier: nil, app: "Timer", intent: "TimeLeft", parameters: [:],
                 date: Date(timeIntervalSince1970: seconds), trigger: "voice")
    }

    @Test func theOldestGoPastTheCountLimit() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(directory: dir.path, retention: DonationRetention(maximumCount: 5))
        for n in 0..<5 { try await store.record(donation(n, at: 1000 + Double(n))) }
        #expect(try await store.donationCount() == 5)   // at the limit: all kept
        for n in 5..<12 { try await store.record(donation(n, at: 1000 + Double(n))) }
        #expect(try await store.donationCount() == 5)
        let kept = try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
        #expect(kept == ["d11", "d10", "d9", "d8", "d7"])
    }

    @Test func donationsOlderThanTheAgeLimitGo() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let day = 86_400.0
        let store = try StateStore(
            directory: dir.path, retention: DonationRetention(maximumAge: .seconds(30 * 86_400)), clock: .synchronised)
        try await store.record(donation(0, at: 0))
        try await store.record(donation(1, at: 10 * day))
        try await store.record(donation(2, at: 30 * day))           // d0 is exactly 30 days old: kept
        #expect(try await store.donationCount() == 3)
        try await store.record(donation(3, at: 30 * day + 1))       // d0 is now past the limit
        let kept = try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
        #expect(kept == ["d3", "d2", "d1"])
        #expect(try await store.integrityCheck() == ["ok"])
    }

    /// The count limit deletes the earliest recorded, whatever their dates:
    /// after the clock is set back the newest donations carry the smallest
    /// dates, and ordering by date deleted exactly those.
    @Test func theCountLimitGoesByInsertionOrderNotByDate() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let store = try StateStore(directory: dir.path, retention: DonationRetention(maximumCount: 5), clock: .synchronised)
        let dates: [Double] = [5000, 6000, 7000, 100, 200, 300, 9000, 50]   // set back twice, forward once
        for (n, date) in dates.enumerated() { try await store.record(donation(n, at: date)) }
        let kept = try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
        #expect(Set(kept) == ["d3", "d4", "d5", "d6", "d7"])
    }

    /// Without timesyncd's flag (a Pi before it reaches a server, or a
    /// machine without timesyncd) nothing is deleted by age, however far the
    /// clock jumps; with it, the same record deletes the old row.
    @Test func noAgePruningUntilTimesyncdHasSynchronisedTheClock() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let day = 86_400.0
        let flag = dir.file("synchronized")
        let store = try StateStore(
            directory: dir.file("state"), retention: DonationRetention(maximumAge: .seconds(30 * 86_400)),
            clock: .systemdTimesync(flag: flag))
        try await store.record(donation(0, at: 1000 * day))
        try await store.record(donation(1, at: 1000 * day + 1))
        try await store.record(donation(2, at: 2000 * day))         // forward 1000 days, not synchronised
        #expect(try await store.donationCount() == 3)
        #expect(FileManager.default.createFile(atPath: flag, contents: Data()))
        try await store.record(donation(3, at: 2000 * day + 1))     // synchronised: d2's date is believed...
        let kept = try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
        // ...but d0 and d1 were recorded under the same unsynchronised clock: kept.
        #expect(kept == ["d3", "d2", "d1", "d0"])
        try await store.record(donation(4, at: 2100 * day))         // 100 days on: d3, recorded synchronised, goes
        #expect(try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
            == ["d4", "d2", "d1", "d0"])
    }

    /// A synchronised clock set back (by hand, or stepped back by
    /// timesyncd): the new row is dated before rows kept, deletes nothing by
    /// age, and is not itself deleted by its doubtful date later.
    @Test func aRowDatedBeforeTheNewestKeptDeletesNothingByAge() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let day = 86_400.0
        let store = try StateStore(
            directory: dir.path, retention: DonationRetention(maximumAge: .seconds(30 * 86_400)), clock: .synchronised)
        try await store.record(donation(0, at: 100 * day))
        try await store.record(donation(1, at: 120 * day))
        try await store.record(donation(2, at: 10 * day))           // set back 110 days
        try await store.record(donation(3, at: 11 * day))
        #expect(try await store.donationCount() == 4)
        // Time passes d1 again: the cutoff counts back from the newest (d4),
        // and d0, trusted and 31 days older, goes; d2 and d3 stay.
        try await store.record(donation(4, at: 131 * day))
        let kept = try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
        #expect(kept == ["d4", "d1", "d3", "d2"])
    }

    /// A Pi without a real-time clock, booted 20 times: each boot starts
    /// unsynchronised at a wrong time (set back to 1970 or to the last saved
    /// time, or set forward up to two years), records donations, then
    /// timesyncd sets the true time and raises its flag, and some boots see
    /// the synchronised clock set back by hand. Every donation recorded
    /// stays: none is older than the age limit in true time.
    @Test func noDonationIsLostAcrossTwentyClockJumps() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let day = 86_400.0
        let flag = dir.file("synchronized")
        let store = try StateStore(directory: dir.file("state"), clock: .systemdTimesync(flag: flag))
        var trueTime = 1_800_000_000.0
        // Deterministic "random" offsets: back (negative) and forward, in days.
        let wrongClock: [Double] = [-20_000, 400, -95, 730, -1, 91, -365, 180, -20_800, 95,
                                    -200, 500, -91, 120, -3_000, 89, -45, 700, -20_000, 365]
        var recorded: [String] = []
        var n = 0
        func record(at date: Double) async throws {
            try await store.record(donation(n, at: date))
            recorded.append("d\(n)")
            n += 1
        }
        for (boot, offset) in wrongClock.enumerated() {
            try? FileManager.default.removeItem(atPath: flag)                 // /run is empty at boot
            let wrong = offset <= -20_000 ? Double(boot) * 60 : trueTime + offset * day
            for second in 0..<3 { try await record(at: wrong + Double(second)) }
            #expect(FileManager.default.createFile(atPath: flag, contents: Data()))  // timesyncd reached a server
            for second in 0..<3 { try await record(at: trueTime + Double(second)) }
            if boot % 4 == 1 {
                // Set back by hand while synchronised, then put right.
                try await record(at: trueTime - 200 * day)
                try await record(at: trueTime + 10)
            }
            trueTime += 3_600 * 7                                             // an evening's use
        }
        let kept = try await store.donations(app: nil, intent: nil, limit: nil).compactMap(\.identifier)
        #expect(recorded.count == 130)   // 20 boots of 6, and 5 of them 2 more
        let lost = Set(recorded).subtracting(kept)
        #expect(lost.isEmpty, "lost \(lost.count) of \(recorded.count): \(lost.sorted())")
        #expect(try await store.integrityCheck() == ["ok"])
    }
}

import Foundation
import ParleyCore
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

    @Test func walModeWithFullSynchronousIsActive() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let db = try SQLiteDatabase(path: dir.file("x.db"))
        #expect(try db.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
        // 2 = FULL
        #expect(try db.query("PRAGMA synchronous") { $0.int64(0) } == [2])
    }

    @Test func newerSchemaIsRefused() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        do {
            let db = try SQLiteDatabase(path: dir.file("state.db"))
            try db.execute("PRAGMA user_version=\(Migrations.latestVersion + 1)")
        }
        let error = #expect(throws: SQLiteError.self) { try StateStore(path: dir.file("state.db")) }
        #expect(error?.message.contains("newer than this Parley") == true)
    }

    @Test func errorsNameTheSQLAndSQLiteMessage() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let db = try SQLiteDatabase(path: dir.file("x.db"))
        let error = #expect(throws: SQLiteError.self) { try db.execute("SELECT * FROM no_such_table") }
        #expect(error?.sql == "SELECT * FROM no_such_table")
        #expect(error?.message.contains("no such table") == true)
        #expect(error?.description.contains("no_such_table") == true)
    }

    @Test func unopenablePathIsReportedWithThePath() throws {
        let error = #expect(throws: SQLiteError.self) {
            try StateStore(path: "/nonexistent-parley-dir/state.db")
        }
        #expect(error?.sql.contains("/nonexistent-parley-dir/state.db") == true)
    }
}

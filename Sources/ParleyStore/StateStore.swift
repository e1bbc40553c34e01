import Foundation
import ParleyCore
import ParleyIntents

/// Parley's durable state in one SQLite file: donations, custom phrases and
/// the key-value data apps keep (the Notes app's notes).
///
/// An actor so every call on the one connection is serialised. Each write is
/// its own transaction in WAL mode with `synchronous=FULL`: when a write
/// method returns, the change is on disk and survives power loss.
public actor StateStore: DonationStore, CustomPhraseStore, AppDataStore {
    private var db: SQLiteDatabase?
    /// The database file.
    public nonisolated let path: String

    /// Opens (creating if needed) the database at `path` and migrates it.
    /// The directory must exist.
    public init(path: String) throws {
        let db = try SQLiteDatabase(path: path)
        try Migrations.apply(to: db)
        self.db = db
        self.path = path
    }

    /// Opens `state.db` in `directory`, creating the directory (mode 0750).
    public init(directory: String) throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        try self.init(path: (directory as NSString).appendingPathComponent("state.db"))
    }

    /// Closes the connection (the daemon does so at shutdown); later calls throw.
    public func close() {
        db = nil
    }

    private func database() throws -> SQLiteDatabase {
        guard let db else { throw SQLiteError(code: 21, message: "the state store is closed", sql: "") }
        return db
    }

    /// `PRAGMA integrity_check`: ["ok"] for an intact database.
    public func integrityCheck() throws -> [String] {
        try database().query("PRAGMA integrity_check") { $0.text(0) ?? "" }
    }

    /// The schema version (`PRAGMA user_version`).
    public func schemaVersion() throws -> Int {
        Int(try database().query("PRAGMA user_version") { $0.int64(0) }.first ?? 0)
    }

    // MARK: DonationStore

    @discardableResult
    public func record(_ donation: Donation) throws -> Int64 {
        let db = try database()
        try db.run(
            """
            INSERT INTO donation (identifier, group_identifier, app, intent, parameters, date, trigger)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .optionalText(donation.identifier), .optionalText(donation.groupIdentifier),
                .text(donation.app), .text(donation.intent), .text(try Self.encode(donation.parameters)),
                .real(donation.date.timeIntervalSince1970), .text(donation.trigger),
            ])
        return db.lastInsertRowID
    }

    public func donations(app: String?, intent: String?, limit: Int?) throws -> [Donation] {
        var sql = "SELECT id, identifier, group_identifier, app, intent, parameters, date, trigger FROM donation"
        var conditions: [String] = []
        var values: [SQLiteValue] = []
        if let app { conditions.append("app = ?"); values.append(.text(app)) }
        if let intent { conditions.append("intent = ?"); values.append(.text(intent)) }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY date DESC, id DESC"
        if let limit { sql += " LIMIT ?"; values.append(.integer(Int64(max(0, limit)))) }
        return try database().query(sql, values) { row in
            Donation(
                rowID: row.int64(0), identifier: row.text(1), groupIdentifier: row.text(2),
                app: row.text(3) ?? "", intent: row.text(4) ?? "",
                parameters: try Self.decode(row.text(5) ?? "{}"),
                date: Date(timeIntervalSince1970: row.double(6)), trigger: row.text(7) ?? "")
        }
    }

    /// How many donations are stored (for `parley status`).
    public func donationCount() throws -> Int {
        Int(try database().query("SELECT count(*) FROM donation") { $0.int64(0) }.first ?? 0)
    }

    @discardableResult
    public func delete(_ scope: DonationScope) throws -> Int {
        let db = try database()
        switch scope {
        case .identifier(let id): return try db.run("DELETE FROM donation WHERE identifier = ?", [.text(id)])
        case .group(let group): return try db.run("DELETE FROM donation WHERE group_identifier = ?", [.text(group)])
        case .app(let app): return try db.run("DELETE FROM donation WHERE app = ?", [.text(app)])
        case .all: return try db.run("DELETE FROM donation")
        }
    }

    /// Deletes one donation by its row identifier (what `parley donations`
    /// lists); true if it existed.
    @discardableResult
    public func deleteDonation(rowID: Int64) throws -> Bool {
        try database().run("DELETE FROM donation WHERE id = ?", [.integer(rowID)]) > 0
    }

    // MARK: CustomPhraseStore

    public func customPhrases() throws -> [CustomPhrase] {
        try database().query(
            "SELECT phrase, app, intent, parameters, created FROM custom_phrase ORDER BY key"
        ) { row in
            CustomPhrase(
                phrase: row.text(0) ?? "", app: row.text(1) ?? "", intent: row.text(2) ?? "",
                parameters: try Self.decode(row.text(3) ?? "{}"), created: Date(timeIntervalSince1970: row.double(4)))
        }
    }

    /// Saves a phrase, replacing any phrase with the same normalised text.
    public func save(_ phrase: CustomPhrase) throws {
        try database().run(
            """
            INSERT INTO custom_phrase (key, phrase, app, intent, parameters, created) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET phrase = excluded.phrase, app = excluded.app,
                intent = excluded.intent, parameters = excluded.parameters, created = excluded.created
            """,
            [
                .text(Self.phraseKey(phrase.phrase)), .text(phrase.phrase), .text(phrase.app), .text(phrase.intent),
                .text(try Self.encode(phrase.parameters)), .real(phrase.created.timeIntervalSince1970),
            ])
    }

    @discardableResult
    public func deletePhrase(_ phrase: String) throws -> Bool {
        try database().run("DELETE FROM custom_phrase WHERE key = ?", [.text(Self.phraseKey(phrase))]) > 0
    }

    /// The key a phrase is stored under: lower-case words, punctuation
    /// dropped, single spaces ("Coffee  time!" and "coffee time" are one).
    public static func phraseKey(_ phrase: String) -> String {
        phrase.lowercased()
            .split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "'") })
            .joined(separator: " ")
    }

    // MARK: AppDataStore

    public func value(app: String, key: String) throws -> Data? {
        try database().query("SELECT value FROM app_data WHERE app = ? AND key = ?", [.text(app), .text(key)]) {
            $0.blob(0) ?? Data()
        }.first
    }

    public func setValue(_ value: Data, app: String, key: String) throws {
        try database().run(
            "INSERT INTO app_data (app, key, value) VALUES (?, ?, ?) ON CONFLICT(app, key) DO UPDATE SET value = excluded.value",
            [.text(app), .text(key), .blob(value)])
    }

    public func removeValue(app: String, key: String) throws {
        try database().run("DELETE FROM app_data WHERE app = ? AND key = ?", [.text(app), .text(key)])
    }

    public func keys(app: String, prefix: String) throws -> [String] {
        // substr comparison instead of LIKE: keys may contain % and _.
        try database().query(
            "SELECT key FROM app_data WHERE app = ? AND substr(key, 1, ?) = ? ORDER BY key",
            [.text(app), .integer(Int64(prefix.unicodeScalars.count)), .text(prefix)]
        ) { $0.text(0) ?? "" }
    }

    // MARK: Parameters as canonical JSON

    private static func encode(_ parameters: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(parameters), as: UTF8.self)
    }

    private static func decode(_ json: String) throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
    }
}

import Foundation
import GRDB
import ParleyCore
import ParleyIntents

/// Parley's durable state in one SQLite file: donations, custom phrases and
/// the key-value data apps keep (the Notes app's notes).
///
/// One GRDB `DatabaseQueue`: a single connection whose accesses GRDB runs one
/// at a time on its own dispatch queue, so a write waiting for the disk
/// (`fsync`) suspends the caller instead of holding a thread of Swift's
/// cooperative pool (two threads on the device). Each write is its own
/// transaction in WAL mode with `synchronous=FULL`: when a write method
/// returns, the change is on disk and survives power loss.
public final class StateStore: DonationStore, CustomPhraseStore, AppDataStore {
    private let queue: DatabaseQueue
    /// The database file.
    public let path: String
    /// Donations kept: the oldest go as each new one is recorded.
    public let retention: DonationRetention
    /// Asked before deleting by age (`ClockTrust`).
    public let clock: ClockTrust

    /// Opens (creating if needed) the database at `path` and migrates it.
    /// The directory must exist. `clock` says when age pruning may run
    /// (by default while systemd-timesyncd has synchronised the clock).
    public init(
        path: String, retention: DonationRetention = DonationRetention(),
        clock: ClockTrust = .systemdTimesync()
    ) throws {
        self.retention = retention
        self.clock = clock
        do {
            queue = try DatabaseQueue(path: path, configuration: Self.configuration)
        } catch let error as DatabaseError {
            throw StateStoreError(path: path, problem: "cannot open: \(error.message ?? "\(error.resultCode)")")
        }
        self.path = path
        try Migrations.apply(to: queue, path: path)
    }

    /// Opens `state.db` in `directory`, creating the directory (mode 0750).
    public convenience init(
        directory: String, retention: DonationRetention = DonationRetention(),
        clock: ClockTrust = .systemdTimesync()
    ) throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        try self.init(
            path: (directory as NSString).appendingPathComponent("state.db"), retention: retention, clock: clock)
    }

    /// WAL with `synchronous=FULL`, set on the connection before anything
    /// else runs. In WAL mode FULL syncs the log on every commit, so a commit
    /// that returned survives power loss; NORMAL, which GRDB's own WAL
    /// setting picks, would not. Hence WAL is set here, not with
    /// `journalMode = .wal`.
    static var configuration: Configuration {
        var configuration = Configuration()
        configuration.label = "parley.state"
        // Another process (a backup, the sqlite3 shell) holding a lock: wait
        // for it instead of failing at once.
        configuration.busyMode = .timeout(5)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else {
                throw DatabaseError(
                    message: "journal mode is \(mode ?? "unknown"), not wal", sql: "PRAGMA journal_mode=WAL")
            }
            try db.execute(sql: "PRAGMA synchronous=FULL")
        }
        return configuration
    }

    /// Closes the connection (the daemon does so at shutdown), after any
    /// write in progress; later calls throw. Closing checkpoints the WAL
    /// into the database file and removes it.
    public func close() async {
        let queue = self.queue
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // close() waits for GRDB's queue: on a thread of its own, not the pool.
            Thread {
                try? queue.close()
                done.resume()
            }.start()
        }
    }

    /// `PRAGMA integrity_check`: ["ok"] for an intact database.
    public func integrityCheck() async throws -> [String] {
        try await queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
    }

    /// The schema version (`PRAGMA user_version`).
    public func schemaVersion() async throws -> Int {
        try await queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
    }

    /// A setting of the connection, such as "journal_mode" or "synchronous"
    /// (`PRAGMA <name>`), for tests and `parley status`.
    func pragma(_ name: String) async throws -> String? {
        try await queue.read { try String.fetchOne($0, sql: "PRAGMA \(name)") }
    }

    // MARK: DonationStore

    /// Records a donation and, in the same transaction, deletes those past
    /// `retention`: the earliest recorded beyond its count, and, while the
    /// clock is synchronised, those older than its age limit.
    @discardableResult
    public func record(_ donation: Donation) async throws -> Int64 {
        var record = DonationRecord(donation)
        // Asked outside the transaction: a file check has no business inside
        // the database's queue.
        record.dateTrusted = clock.isSynchronised
        let retention = self.retention
        return try await queue.write { [record] db in
            try record.insert(db)
            let id = db.lastInsertedRowID
            try Self.prune(db, retention: retention, newID: id, new: record)
            return id
        }
    }

    /// Deletes what `retention` no longer keeps, given the row `new` just
    /// inserted as `newID`.
    ///
    /// The count limit goes by row id (AUTOINCREMENT, so insertion order):
    /// dates come from a clock that can jump, and ordering by them deleted
    /// the newest donations after the clock was set back.
    ///
    /// The age limit deletes only rows whose date is trusted, and runs only
    /// when the new row's is. A date from an unsynchronised clock (a Pi
    /// boots at the time last saved, or 1970) says nothing of the row's age:
    /// deleting by it lost the donations made before timesyncd set the clock.
    /// A new row dated before a trusted row kept means the clock went back
    /// though synchronised (set by hand, or stepped back by timesyncd): which
    /// date is right cannot be told, so the new row's date is not trusted
    /// either and nothing is deleted by age. So the cutoff is always the
    /// newest trusted date kept less the age limit, never later.
    static func prune(_ db: Database, retention: DonationRetention, newID: Int64, new: DonationRecord) throws {
        typealias Columns = DonationRecord.Columns
        if new.dateTrusted {
            // Dates are stored as REAL seconds (Records.swift); a `Date`
            // operand would be bound as text, which SQLite sorts after every number.
            let newSeconds = new.date.timeIntervalSince1970
            let newestBefore = try Double.fetchOne(
                db, sql: "SELECT max(date) FROM donation WHERE date_trusted AND id <> ?", arguments: [newID])
            if let newestBefore, newestBefore > newSeconds {
                try db.execute(sql: "UPDATE donation SET date_trusted = 0 WHERE id = ?", arguments: [newID])
            } else {
                let cutoff = newSeconds - retention.maximumAgeSeconds
                try DonationRecord.filter(Columns.dateTrusted == true && Columns.date < cutoff).deleteAll(db)
            }
        }
        let excess = try DonationRecord.fetchCount(db) - retention.maximumCount
        if excess > 0 {
            let earliest = DonationRecord.select(Columns.id).order(Columns.id.asc).limit(excess)
            try DonationRecord.filter(earliest.contains(Columns.id)).deleteAll(db)
        }
    }

    public func donations(app: String?, intent: String?, limit: Int?) async throws -> [Donation] {
        typealias Columns = DonationRecord.Columns
        var request = DonationRecord.order(Columns.date.desc, Columns.id.desc)
        if let app { request = request.filter(Columns.app == app) }
        if let intent { request = request.filter(Columns.intent == intent) }
        if let limit { request = request.limit(max(0, limit)) }
        return try await queue.read { [request] db in try request.fetchAll(db).map(\.donation) }
    }

    /// How many donations are stored (for `parley status`).
    public func donationCount() async throws -> Int {
        try await queue.read { try DonationRecord.fetchCount($0) }
    }

    @discardableResult
    public func delete(_ scope: DonationScope) async throws -> Int {
        typealias Columns = DonationRecord.Columns
        let request: QueryInterfaceRequest<DonationRecord> =
            switch scope {
            case .identifier(let id): DonationRecord.filter(Columns.identifier == id)
            case .group(let group): DonationRecord.filter(Columns.groupIdentifier == group)
            case .app(let app): DonationRecord.filter(Columns.app == app)
            case .all: DonationRecord.all()
            }
        return try await queue.write { db in try request.deleteAll(db) }
    }

    /// Deletes one donation by its row identifier (what `parley donations`
    /// lists); true if it existed.
    @discardableResult
    public func deleteDonation(rowID: Int64) async throws -> Bool {
        try await queue.write { db in try DonationRecord.deleteOne(db, key: rowID) }
    }

    // MARK: CustomPhraseStore

    public func customPhrases() async throws -> [CustomPhrase] {
        try await queue.read { db in
            try CustomPhraseRecord.order(Column("key")).fetchAll(db).map(\.customPhrase)
        }
    }

    /// Saves a phrase, replacing any phrase with the same normalised text.
    public func save(_ phrase: CustomPhrase) async throws {
        let record = CustomPhraseRecord(phrase)
        try await queue.write { db in try record.upsert(db) }
    }

    @discardableResult
    public func deletePhrase(_ phrase: String) async throws -> Bool {
        let key = Self.phraseKey(phrase)
        return try await queue.write { db in try CustomPhraseRecord.deleteOne(db, key: key) }
    }

    /// The key a phrase is stored under: lower-case words, punctuation
    /// dropped, single spaces ("Coffee  time!" and "coffee time" are one).
    public static func phraseKey(_ phrase: String) -> String {
        phrase.lowercased()
            .split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "'") })
            .joined(separator: " ")
    }

    // MARK: AppDataStore

    public func value(app: String, key: String) async throws -> Data? {
        try await queue.read { db in
            try AppDataRecord.fetchOne(db, key: ["app": app, "key": key])?.value
        }
    }

    public func setValue(_ value: Data, app: String, key: String) async throws {
        let record = AppDataRecord(app: app, key: key, value: value)
        // REPLACE rather than GRDB's upsert, which asks for a rowid that a
        // WITHOUT ROWID table does not have; the row is all key and value.
        try await queue.write { db in try record.insert(db, onConflict: .replace) }
    }

    public func removeValue(app: String, key: String) async throws {
        _ = try await queue.write { db in try AppDataRecord.deleteOne(db, key: ["app": app, "key": key]) }
    }

    public func keys(app: String, prefix: String) async throws -> [String] {
        typealias Columns = AppDataRecord.Columns
        // substr comparison instead of LIKE: keys may contain % and _.
        let length = prefix.unicodeScalars.count
        return try await queue.read { db in
            try String.fetchAll(
                db,
                AppDataRecord.select(Columns.key)
                    .filter(Columns.app == app)
                    .filter(sql: "substr(key, 1, ?) = ?", arguments: [length, prefix])
                    .order(Columns.key))
        }
    }
}

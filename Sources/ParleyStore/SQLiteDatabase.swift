import CSQLite
import Foundation

/// An error from SQLite, naming the SQL that failed and SQLite's own message.
public struct SQLiteError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The extended result code (`sqlite3_extended_errcode`).
    public var code: Int32
    /// SQLite's message (`sqlite3_errmsg`) at the time of the failure.
    public var message: String
    /// The statement (or operation, such as "open /var/lib/parley/state.db").
    public var sql: String

    public var description: String { "SQLite error \(code) in `\(sql)`: \(message)" }
}

/// One connection to a database file (C: `sqlite3 *`), closed in `deinit`.
///
/// Not thread-safe by itself: the owner (``StateStore``, an actor) serialises
/// every call. Opened with `SQLITE_OPEN_NOMUTEX` for that reason.
final class SQLiteDatabase {
    private let handle: OpaquePointer
    let path: String

    /// Opens (creating if needed) the database at `path`, then sets WAL mode
    /// and `synchronous=FULL`: in WAL mode FULL syncs the log on every commit,
    /// so a commit that returned survives power loss (NORMAL would not).
    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, sql: "open \(path)")
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        // Another process (a backup, the sqlite3 shell) holding a lock: wait
        // for it instead of failing at once.
        sqlite3_busy_timeout(db, 5_000)
        let mode = try query("PRAGMA journal_mode=WAL") { $0.text(0) }.first ?? nil
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(
                code: SQLITE_ERROR, message: "journal mode is \(mode ?? "unknown"), not wal",
                sql: "PRAGMA journal_mode=WAL")
        }
        try execute("PRAGMA synchronous=FULL")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// The one place SQLite result codes become Swift errors.
    @discardableResult
    func check(_ rc: Int32, _ sql: @autoclosure () -> String) throws -> Int32 {
        switch rc {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return rc
        default:
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: sql())
        }
    }

    /// Runs one or more statements without results (schema, pragmas).
    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var stmt: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &stmt, nil), sql)
        guard let stmt else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "empty statement", sql: sql)
        }
        return SQLiteStatement(handle: stmt, database: self, sql: sql)
    }

    /// Runs a statement with bound values; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        while try stmt.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps every row.
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        var result: [T] = []
        while try stmt.step() { result.append(try row(stmt)) }
        return result
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back on error.
    /// The COMMIT is where the write becomes durable.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    static func optionalText(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
}

/// A prepared statement (C: `sqlite3_stmt *`), finalised in `deinit`.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let database: SQLiteDatabase
    let sql: String

    init(handle: OpaquePointer, database: SQLiteDatabase, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// SQLITE_TRANSIENT (a macro Swift cannot import): SQLite copies the bytes
    /// before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ values: [SQLiteValue]) throws {
        try database.check(sqlite3_reset(handle), sql)
        try database.check(sqlite3_clear_bindings(handle), sql)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
            case .real(let v): rc = sqlite3_bind_double(handle, index, v)
            case .text(let v): rc = sqlite3_bind_text(handle, index, v, -1, Self.transient)
            case .blob(let v):
                rc = v.withUnsafeBytes { raw in
                    // A zero-length blob needs zeroblob: a nil pointer would bind NULL.
                    guard let base = raw.baseAddress, raw.count > 0 else {
                        return sqlite3_bind_zeroblob(handle, index, 0)
                    }
                    return sqlite3_bind_blob(handle, index, base, Int32(raw.count), Self.transient)
                }
            }
            try database.check(rc, sql)
        }
    }

    /// Advances one row; true while a row is available.
    func step() throws -> Bool {
        try database.check(sqlite3_step(handle), sql) == SQLITE_ROW
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard let cString = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: cString)
    }

    func blob(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

/// Schema versions, applied in order; `PRAGMA user_version` records how many
/// have run. Append new steps, never edit old ones: a device upgraded from
/// any earlier version replays exactly the steps it lacks.
enum Migrations {
    static let steps: [String] = [
        // 1: donations, custom phrases, app data.
        """
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
        """,
    ]

    /// Brings the database to the latest version, one transaction per step.
    /// Refuses a database written by a newer Parley rather than guessing.
    static func apply(to db: SQLiteDatabase) throws {
        let current = try db.query("PRAGMA user_version") { $0.int64(0) }.first ?? 0
        guard current <= steps.count else {
            throw SQLiteError(
                code: 1, message: "database schema version \(current) is newer than this Parley (\(steps.count))",
                sql: "PRAGMA user_version")
        }
        for version in Int(current)..<steps.count {
            try db.transaction {
                try db.execute(steps[version])
                try db.execute("PRAGMA user_version=\(version + 1)")
            }
        }
    }

    static var latestVersion: Int { steps.count }
}

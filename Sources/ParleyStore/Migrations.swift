import GRDB

/// The schema, as GRDB migrations applied in order. Append new migrations,
/// never edit old ones: a device upgraded from any earlier version replays
/// exactly the ones it lacks.
///
/// GRDB records applied migrations in its own `grdb_migrations` table; the
/// hand-written store before it counted them in `PRAGMA user_version`. Both
/// are kept: every migration also sets `user_version` to its number, so a
/// database from a newer Parley is recognised by either record, and an older
/// Parley (which reads only `user_version`) still refuses a newer database.
enum Migrations {
    /// Identifiers in order; `user_version` after migration `i` is `i + 1`.
    static let identifiers = ["v1-donations-phrases-app-data", "v2-donation-date-trusted"]

    static var latestVersion: Int { identifiers.count }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // 1: donations, custom phrases, app data. `IF NOT EXISTS` because a
        // database made by the hand-written store (user_version 1, no
        // grdb_migrations table) already has these tables: for it this
        // migration only records itself.
        migrator.registerMigration(identifiers[0]) { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS donation (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        identifier TEXT,
                        group_identifier TEXT,
                        app TEXT NOT NULL,
                        intent TEXT NOT NULL,
                        parameters TEXT NOT NULL,          -- JSON object, keys sorted
                        date REAL NOT NULL,                -- seconds since 1970
                        trigger TEXT NOT NULL
                    );
                    CREATE INDEX IF NOT EXISTS donation_by_app ON donation(app, intent, date);
                    CREATE INDEX IF NOT EXISTS donation_by_identifier ON donation(identifier);
                    CREATE INDEX IF NOT EXISTS donation_by_group ON donation(group_identifier);
                    CREATE TABLE IF NOT EXISTS custom_phrase (
                        key TEXT PRIMARY KEY,              -- normalised phrase
                        phrase TEXT NOT NULL,
                        app TEXT NOT NULL,
                        intent TEXT NOT NULL,
                        parameters TEXT NOT NULL,
                        created REAL NOT NULL
                    );
                    CREATE TABLE IF NOT EXISTS app_data (
                        app TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB NOT NULL,
                        PRIMARY KEY (app, key)
                    ) WITHOUT ROWID;
                    PRAGMA user_version = 1;
                    """)
        }
        // 2: whether a donation's date is believed when deleting by age: its
        // clock was synchronised (`ClockTrust`) and had not gone back
        // (StateStore.prune). Rows from before are believed, as version 1
        // believed them.
        migrator.registerMigration(identifiers[1]) { db in
            try db.execute(
                sql: """
                    ALTER TABLE donation ADD COLUMN date_trusted INTEGER NOT NULL DEFAULT 1;
                    PRAGMA user_version = 2;
                    """)
        }
        return migrator
    }

    /// Brings the database to the latest version, one transaction per
    /// migration. Refuses a database written by a newer Parley rather than
    /// guessing what its tables mean.
    static func apply(to writer: some DatabaseWriter, path: String) throws {
        let migrator = migrator
        try writer.read { db in
            let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            let superseded = try migrator.hasBeenSuperseded(db)
            if version > latestVersion || superseded {
                throw StateStoreError(
                    path: path,
                    problem: "database schema version \(version) is newer than this Parley (\(latestVersion))")
            }
        }
        try migrator.migrate(writer)
    }
}

/// A state database that cannot be used, naming its file and why. Errors
/// from SQLite itself arrive as GRDB's `DatabaseError`, which names the SQL
/// and SQLite's message.
public struct StateStoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The database file.
    public var path: String
    public var problem: String

    public var description: String { "state database \(path): \(problem)" }
}

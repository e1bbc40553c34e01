import Foundation

/// Durable key-value storage the runtime hands to apps (the Notes app keeps its
/// notes here). The daemon backs it with SQLite (ParleyStore); writes are
/// durable when the call returns.
public protocol AppDataStore: Sendable {
    func value(app: String, key: String) async throws -> Data?
    func setValue(_ value: Data, app: String, key: String) async throws
    func removeValue(app: String, key: String) async throws
    /// Keys of one app with the given prefix, sorted.
    func keys(app: String, prefix: String) async throws -> [String]
}

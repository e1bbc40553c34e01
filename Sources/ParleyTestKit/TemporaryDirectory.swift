import Foundation

/// A fresh directory for one test, under /tmp with a short name: Unix socket
/// paths inside it must stay under 108 bytes. Removed by `remove()`, or when
/// the last reference to it goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    public init() throws {
        path = "/tmp/ptk-" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12))
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { remove() }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

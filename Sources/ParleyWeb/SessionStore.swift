import Foundation
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import ParleyDevice
import Synchronization

/// The browsers paired with the page, in `<state>/web/sessions.json` (mode
/// 0600). Only each token's SHA-256 is kept: the file read off a card gives
/// no session. A token is 32 random bytes (getrandom), URL-safe base64.
/// A session unused for ``maximumIdle`` (30 days) ends on the server, whatever
/// the browser's cookie says: a phone lost or sold stops being a way in.
public final class SessionStore: Sendable {
    public static let maximumSessions = 20
    public static let maximumIdle: TimeInterval = 30 * 86_400
    /// lastUsed is written back at most this often, not on every request.
    static let touchInterval: TimeInterval = 300

    struct Record: Codable, Equatable {
        var hash: String
        var created: Date
        var lastUsed: Date
        var browser: String
    }

    public let file: URL
    private let records: Mutex<[Record]>

    public init(directory: URL) {
        file = directory.appendingPathComponent("sessions.json")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let loaded = (try? Data(contentsOf: file)).flatMap { try? decoder.decode([Record].self, from: $0) } ?? []
        records = Mutex(loaded)
    }

    /// A new session for a browser that typed the right code; the token goes
    /// into its cookie and nowhere else.
    public func create(browser: String, at now: Date) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let agent = String(browser.filter { !$0.isNewline }.prefix(80))
        try update { list in
            list.removeAll { Self.expired($0, at: now) }
            list.append(Record(hash: SHA256.hex(token), created: now, lastUsed: now, browser: agent))
            if list.count > Self.maximumSessions { list.removeFirst(list.count - Self.maximumSessions) }
        }
        return token
    }

    /// Whether `token` is a live session (and notes its use). One unused
    /// past ``maximumIdle`` is deleted here, so it never works again.
    public func validate(_ token: String, at now: Date) -> Bool {
        guard token.count >= 40, token.count <= 64 else { return false }
        let hash = SHA256.hex(token)
        var touched = false
        let found = records.withLock { list -> Bool in
            guard let index = list.firstIndex(where: { PairingGate.constantTimeEqual($0.hash, hash) }) else { return false }
            if Self.expired(list[index], at: now) {
                list.remove(at: index)
                touched = true
                return false
            }
            if now.timeIntervalSince(list[index].lastUsed) > Self.touchInterval {
                list[index].lastUsed = now
                touched = true
            }
            return true
        }
        if touched { try? update { _ in } }
        return found
    }

    /// The live sessions (expired ones are not listed; the next write drops them).
    public func list(at now: Date = Date()) -> [WebTokenSummary] {
        records.withLock { list in
            list.filter { !Self.expired($0, at: now) }.map { WebTokenSummary(id: Self.id(of: $0.hash), created: $0.created, lastUsed: $0.lastUsed, browser: $0.browser) }
        }
    }

    /// Ends the session with this id (from ``list()``); false when there is none.
    public func revoke(id: String) throws -> Bool {
        var removed = false
        try update { list in
            let before = list.count
            list.removeAll { Self.id(of: $0.hash) == id }
            removed = list.count < before
        }
        return removed
    }

    /// Unused for longer than ``maximumIdle``. A clock set back (a Pi
    /// without a real-time clock before it syncs) makes no session expire.
    static func expired(_ record: Record, at now: Date) -> Bool {
        now.timeIntervalSince(record.lastUsed) > maximumIdle
    }

    /// The id a session is listed and revoked by: the start of its hash.
    public static func id(of hash: String) -> String { String(hash.prefix(12)) }
    public static func id(ofToken token: String) -> String { id(of: SHA256.hex(token)) }

    private func update(_ change: (inout [Record]) -> Void) throws {
        try records.withLock { list in
            change(&list)
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(list)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try data.write(to: file, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }
    }
}

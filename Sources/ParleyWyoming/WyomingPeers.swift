import Foundation
import Logging
import Synchronization

/// Which addresses may speak Wyoming to this device: the satellite (the
/// microphone's commands and the speaker) and the handle role (Parley's
/// apps) share one list, so nobody else on the LAN reaches either.
///
/// With `home_assistant.allow` set, those addresses and no others. Without
/// it, the first address that sends a well-formed event is kept (in
/// `file`, so a restart keeps it) and from then on only it is served: Home
/// Assistant finds the device and links first, as when pairing. Deleting the
/// file (or setting `allow`) pairs again. Only the socket's address counts,
/// never anything a peer says.
public final class WyomingPeers: Sendable {
    public enum Decision: Sendable, Equatable {
        case allowed
        case refused(String)
    }

    private let configured: [String]
    private let file: URL?
    private let paired: Mutex<String?>
    private let logger: Logger

    /// `allow`: the configured addresses (empty: the first peer is kept);
    /// `file`: where the first peer is kept (nil: in memory only, tests).
    public init(allow: [String], file: URL?, logger: Logger) {
        configured = allow
        self.file = file
        self.logger = logger
        let stored = file.flatMap { try? String(contentsOf: $0, encoding: .utf8) }?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        paired = Mutex(allow.isEmpty && stored?.isEmpty == false ? stored : nil)
    }

    /// The addresses served now (empty: none paired yet, anyone may pair).
    public var allowed: [String] { configured.isEmpty ? paired.withLock { $0.map { [$0] } ?? [] } : configured }

    /// Whether a connection from `host` is served at all.
    public func admit(_ host: String) -> Decision {
        let list = allowed
        if list.isEmpty || list.contains(host) { return .allowed }
        return .refused(Self.refusal(host, list, configured: !configured.isEmpty))
    }

    /// A connection's first well-formed event: keeps its address when none
    /// is kept yet; refuses it when another was kept meanwhile (two peers
    /// connecting before either spoke).
    public func firstEvent(from host: String) -> Decision {
        guard configured.isEmpty else { return admit(host) }
        let (decision, pairedNow) = paired.withLock { current -> (Decision, Bool) in
            if let current { return current == host ? (.allowed, false) : (.refused(Self.refusal(host, [current], configured: false)), false) }
            current = host
            return (.allowed, true)
        }
        if pairedNow {
            logger.notice("home assistant paired: only this address is served from now on (home_assistant.allow changes it)",
                          metadata: ["address": "\(host)", "kept-in": "\(file?.path ?? "memory")"])
            if let file {
                try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try? (host + "\n").write(to: file, atomically: true, encoding: .utf8)
            }
        }
        return decision
    }

    static func refusal(_ host: String, _ list: [String], configured: Bool) -> String {
        let source = configured ? "home_assistant.allow" : "the Home Assistant this device paired with"
        return "\(host) may not use this device: it serves only \(list.joined(separator: ", ")) (\(source))"
    }
}

/// A connection closed because its address is not on the allow list (the
/// peer was sent an `error` event with code "not-allowed" first).
public struct WyomingNotAllowed: Error, CustomStringConvertible {
    public let description: String
}

import Foundation
import Logging
import ParleySocket
import Synchronization

/// What Parley answers to a `transcript` from another satellite (role 2).
public enum WyomingHandleOutcome: Sendable, Equatable {
    /// Parley ran it; the text is what it would have said.
    case handled(String)
    /// Not Parley's, or refused; the text is said by the other satellite.
    case notHandled(String)

    var isHandled: Bool {
        if case .handled = self { return true }
        return false
    }

    var event: WyomingEvent {
        switch self {
        case .handled(let text): .handled(text: text)
        case .notHandled(let text): .notHandled(text: text)
        }
    }
}

/// Runs a transcript through Parley's engine (``EngineTranscriptHandler`` in the daemon).
public protocol WyomingTranscriptHandling: Sendable {
    func handle(transcript: String) async -> WyomingHandleOutcome
}

/// What the `handle` service has seen, for `parley status`: who is
/// connected and the last transcript. Shared by its connections' threads.
public final class WyomingHandleLink: Sendable {
    /// A transcript received: when, from whom, and whether Parley handled it.
    public struct Transcript: Sendable, Equatable {
        public var at: Date
        public var peer: String
        public var handled: Bool

        public init(at: Date, peer: String, handled: Bool) {
            self.at = at
            self.peer = peer
            self.handled = handled
        }
    }

    public struct Status: Sendable, Equatable {
        /// "host:port" of each connected client, in the order they came.
        public var peers: [String]
        public var lastTranscript: Transcript?

        public init(peers: [String] = [], lastTranscript: Transcript? = nil) {
            self.peers = peers
            self.lastTranscript = lastTranscript
        }
    }

    private let state = Mutex(Status())

    public init() {}

    public var status: Status { state.withLock { $0 } }

    func connected(_ peer: String) { state.withLock { $0.peers.append(peer) } }

    func disconnected(_ peer: String) {
        state.withLock { status in
            if let index = status.peers.firstIndex(of: peer) { status.peers.remove(at: index) }
        }
    }

    func transcript(from peer: String, handled: Bool, at date: Date = Date()) {
        state.withLock { $0.lastTranscript = Transcript(at: date, peer: peer, handled: handled) }
    }
}

/// One connection of the `handle` service: `describe` → `info` with Parley
/// as a handle program, `ping` → `pong`, `transcript` → `handled` or
/// `not-handled`. Other events are ignored; a malformed one gets an
/// `error` event naming what was wrong, and the connection is closed.
public enum WyomingHandleSession {
    /// `link`, when given, is told of the connection and its transcripts.
    public static func run(_ connection: WyomingConnection, info: WyomingInfo, handler: any WyomingTranscriptHandling,
                           link: WyomingHandleLink? = nil, logger: Logger) {
        link?.connected(connection.peer)
        defer { link?.disconnected(connection.peer) }
        do {
            while let event = try connection.receive() {
                switch event {
                case .describe: try connection.send(.info(info))
                case .ping(let text): try connection.send(.pong(text))
                case .transcript(let text, _):
                    let outcome = ConnectionThread.run { await handler.handle(transcript: text) }
                    logger.info("wyoming transcript", metadata: ["text": "\(text)", "outcome": "\(outcome)"])
                    link?.transcript(from: connection.peer, handled: outcome.isHandled)
                    try connection.send(outcome.event)
                default: continue
                }
            }
        } catch let error as WyomingProtocolError {
            logger.warning("wyoming: malformed event; closing the connection", metadata: [
                "peer": "\(connection.peer)", "error": "\(error)",
            ])
            try? connection.send(.error(text: error.description, code: "malformed"))
        } catch {
            logger.info("wyoming connection ended", metadata: ["peer": "\(connection.peer)", "error": "\(error)"])
        }
    }
}

import Dispatch
import Foundation
import Logging
import Synchronization

/// What Parley answers to a `transcript` from another satellite (role 2).
public enum WyomingHandleOutcome: Sendable, Equatable {
    /// Parley ran it; the text is what it would have said.
    case handled(String)
    /// Not Parley's, or refused; the text is said by the other satellite.
    case notHandled(String)

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

/// One connection of the `handle` service: `describe` → `info` with Parley
/// as a handle program, `ping` → `pong`, `transcript` → `handled` or
/// `not-handled`. Other events are ignored; a malformed one gets an
/// `error` event naming what was wrong, and the connection is closed.
public enum WyomingHandleSession {
    public static func run(_ connection: WyomingConnection, info: WyomingInfo, handler: any WyomingTranscriptHandling,
                           logger: Logger) {
        do {
            while let event = try connection.receive() {
                switch event {
                case .describe: try connection.send(.info(info))
                case .ping(let text): try connection.send(.pong(text))
                case .transcript(let text, _):
                    let outcome = waitFor { await handler.handle(transcript: text) }
                    logger.info("wyoming transcript", metadata: ["text": "\(text)", "outcome": "\(outcome)"])
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

/// Runs async work from a connection thread and waits for it (never called
/// from the cooperative pool: only Wyoming's own threads use it).
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

import Foundation
import Logging
import Synchronization

/// At most `logLinesPerWindow` standard-error lines per window reach the log;
/// the rest are counted and the count logged, so a chatty handler cannot
/// flood the journal.
struct LogBudget {
    let limits: HandlerLimits
    var windowStart = ContinuousClock.now
    var logged = 0
    var dropped = 0

    init(limits: HandlerLimits) { self.limits = limits }

    mutating func log(_ bytes: [UInt8], truncated: Bool, app: String, logger: Logger) {
        let now = ContinuousClock.now
        if now - windowStart > limits.logWindow {
            flush(app: app, logger: logger)
            windowStart = now
            logged = 0
        }
        guard logged < limits.logLinesPerWindow else {
            dropped += 1
            return
        }
        logged += 1
        let text = String(decoding: bytes, as: UTF8.self)
        logger.notice("[\(app)] \(text)\(truncated ? " …(cut)" : "")")
    }

    mutating func flush(app: String, logger: Logger) {
        if dropped > 0 { logger.notice("[\(app)] \(dropped) more lines of standard error not logged") }
        dropped = 0
    }
}

/// The last lines a handler wrote to standard error, whatever the log's
/// budget let through (the page shows them beside the handler's state):
/// at most `capacity` lines, each at most the log's line length.
public final class LineTail: Sendable {
    public let capacity: Int
    private let lines: Mutex<[String]>

    public init(capacity: Int = 20) {
        self.capacity = max(1, capacity)
        lines = Mutex([])
    }

    func append(_ bytes: [UInt8], truncated: Bool) {
        let text = String(decoding: bytes, as: UTF8.self) + (truncated ? " …(cut)" : "")
        lines.withLock { current in
            current.append(text)
            if current.count > capacity { current.removeFirst(current.count - capacity) }
        }
    }

    /// Oldest first.
    public var recent: [String] { lines.withLock { $0 } }
}

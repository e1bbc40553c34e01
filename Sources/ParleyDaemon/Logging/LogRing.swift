import Synchronization

/// The most recent log lines, kept in memory for `parley logs`.
/// Bounded: the oldest line is dropped when full.
public final class LogRing: Sendable {
    private struct Storage {
        var lines: [String] = []
        var next = 0
        var dropped = 0
    }

    private let storage = Mutex(Storage())
    public let capacity: Int

    public init(capacity: Int = 500) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    public func append(_ line: String) {
        storage.withLock { s in
            if s.lines.count < capacity {
                s.lines.append(line)
            } else {
                s.lines[s.next] = line
                s.next = (s.next + 1) % capacity
                s.dropped += 1
            }
        }
    }

    /// The last `limit` lines, oldest first.
    public func recent(_ limit: Int) -> [String] {
        storage.withLock { s in
            let ordered = Array(s.lines[s.next...] + s.lines[..<s.next])
            return Array(ordered.suffix(max(0, limit)))
        }
    }
}

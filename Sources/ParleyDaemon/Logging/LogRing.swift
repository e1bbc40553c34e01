import Synchronization

/// The most recent log lines, kept in memory for `parley logs`.
/// Bounded: the oldest line is dropped when full, and a line longer than
/// `maximumLineBytes` (a `parley say` of a megabyte is logged with its text)
/// is cut there, so the ring holds at most capacity × maximumLineBytes.
public final class LogRing: Sendable {
    private struct Storage {
        var lines: [String] = []
        var next = 0
        var dropped = 0
    }

    private let storage = Mutex(Storage())
    public let capacity: Int
    public let maximumLineBytes: Int

    public init(capacity: Int = 500, maximumLineBytes: Int = 2048) {
        precondition(capacity > 0 && maximumLineBytes > 0)
        self.capacity = capacity
        self.maximumLineBytes = maximumLineBytes
    }

    public func append(_ text: String) {
        let line = text.utf8.count <= maximumLineBytes ? text : Self.cut(text, to: maximumLineBytes)
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

    /// `text` cut to at most `bytes` UTF-8 bytes on a character boundary, marked with "…".
    static func cut(_ text: String, to bytes: Int) -> String {
        let budget = bytes - 3   // "…" is three bytes
        var end = text.startIndex, used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= budget else { break }
            used += size
            end = text.index(after: end)
        }
        return text[..<end] + "…"
    }

    /// The last `limit` lines, oldest first.
    public func recent(_ limit: Int) -> [String] {
        storage.withLock { s in
            let ordered = Array(s.lines[s.next...] + s.lines[..<s.next])
            return Array(ordered.suffix(max(0, limit)))
        }
    }
}

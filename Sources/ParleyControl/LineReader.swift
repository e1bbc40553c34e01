import Foundation
import ParleySocket

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: which call, on what, and errno (ParleySocket's,
/// shared with Wyoming; the control socket's name for it).
public typealias SystemCallError = SocketCallError

/// Reads newline-terminated lines from a descriptor, buffering the rest.
struct LineReader {
    let fd: Int32
    let path: String
    var buffer = Data()
    /// Longest accepted line: a request is small; a runaway client is cut off.
    var maxLine = 1 << 20
    /// How long one line may take to arrive once its first byte has: a
    /// client dripping a byte at a time must not keep its connection forever
    /// (the socket's idle timeout alone restarts with every byte).
    var lineTimeLimit: Duration?
    private var lineStarted: ContinuousClock.Instant?

    init(fd: Int32, path: String, maxLine: Int = 1 << 20, lineTimeLimit: Duration? = nil) {
        self.fd = fd
        self.path = path
        self.maxLine = maxLine
        self.lineTimeLimit = lineTimeLimit
    }

    /// The next line without its newline, or nil at end of stream.
    mutating func next() throws -> Data? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[buffer.index(after: newline)...])
                lineStarted = buffer.isEmpty ? nil : .now
                return Data(line)
            }
            guard buffer.count <= maxLine else {
                throw SystemCallError(call: "read (line too long)", path: path, errno: EMSGSIZE)
            }
            if let lineTimeLimit, let lineStarted, ContinuousClock.now - lineStarted > lineTimeLimit {
                throw SystemCallError(call: "read (line too slow)", path: path, errno: ETIMEDOUT)
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = try chunk.withUnsafeMutableBytes { raw throws in
                try systemCall("read", path) { Int32(truncatingIfNeeded: read(fd, raw.baseAddress, raw.count)) }
            }
            if count == 0 { return nil }
            if buffer.isEmpty { lineStarted = .now }
            buffer.append(contentsOf: chunk[..<Int(count)])
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: which call, on what, and errno.
public struct SystemCallError: Error, Equatable, CustomStringConvertible {
    public var call: String
    public var path: String
    public var errno: Int32
    public var description: String { "\(call) \(path): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The one place socket calls become Swift errors: retries on EINTR and
/// reads errno immediately after the call.
@discardableResult
func systemCall(_ name: String, _ path: String, _ body: () -> Int32) throws(SystemCallError) -> Int32 {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call: name, path: path, errno: code)
    }
}

/// Unix stream socket helpers (C: `socket(AF_UNIX)`, `struct sockaddr_un`).
package enum UnixSocket {
    /// `sun_path` holds 108 bytes including the terminating NUL.
    package static let maxPathLength = 107

    static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) throws -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= maxPathLength else {
            throw SystemCallError(call: "socket path too long", path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    static func makeSocket(_ path: String) throws -> Int32 {
        #if canImport(Glibc)
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_STREAM
        #endif
        return try systemCall("socket", path) { socket(AF_UNIX, type, 0) }
    }

    /// Connects to the socket at `path`; the caller owns the descriptor.
    static func connect(to path: String) throws -> Int32 {
        let fd = try makeSocket(path)
        do {
            let rc = try withAddress(path) { address, length in
                #if canImport(Glibc)
                    Glibc.connect(fd, address, length)
                #else
                    Darwin.connect(fd, address, length)
                #endif
            }
            if rc < 0 { throw SystemCallError(call: "connect", path: path, errno: errno) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Writes all of `data`, retrying on EINTR and short writes.
    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        var offset = 0
        while offset < data.count {
            let written = try data.withUnsafeBytes { raw throws in
                try systemCall("write", path) {
                    Int32(truncatingIfNeeded: send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)))
                }
            }
            offset += Int(written)
        }
    }
}

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

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call on a socket: which call, on what, and errno. The
/// control socket knows it as `SystemCallError`, Wyoming as
/// `WyomingSocketError`; one type, so both say a failure the same way.
public struct SocketCallError: Error, Equatable, CustomStringConvertible {
    public var call: String
    /// What the call was made on: a socket file's path, or `host:port`.
    public var path: String
    public var errno: Int32

    public init(call: String, path: String, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// Wyoming's name for ``path``: a TCP socket has an address, not a path.
    public init(call: String, address: String, errno: Int32) {
        self.init(call: call, path: address, errno: errno)
    }

    public var address: String { path }

    public var description: String { "\(call) \(path): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The one place socket calls become Swift errors: retries on EINTR and
/// reads errno immediately after the call.
@discardableResult
package func systemCall<Result: BinaryInteger>(_ name: String, _ path: String, _ body: () -> Result) throws(SocketCallError)
    -> Result
{
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SocketCallError(call: name, path: path, errno: code)
    }
}

package enum SocketOptions {
    /// Reads and writes on `fd` give up after `timeout` (EAGAIN), so a peer
    /// that goes silent, or never reads, does not hold its thread forever.
    package static func setIdleTimeout(_ fd: Int32, _ timeout: Duration) {
        let c = timeout.components
        var value = timeval(tv_sec: Int(c.seconds), tv_usec: Int(c.attoseconds / 1_000_000_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}

import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A failed socket call: which call, on what, and errno.
public struct WyomingSocketError: Error, CustomStringConvertible, Equatable {
    public var call: String
    public var address: String
    public var errno: Int32
    public var description: String { "\(call) \(address): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Retries on EINTR; reads errno straight after the call.
@discardableResult
func socketCall(_ name: String, _ address: String, _ body: () -> Int) throws(WyomingSocketError) -> Int {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw WyomingSocketError(call: name, address: address, errno: code)
    }
}

/// One TCP connection speaking Wyoming. One thread reads (`receive`), any
/// thread may `send` (whole events, never interleaved). Reads give up after
/// `idleTimeout` of silence, so a peer that vanished without closing (Home
/// Assistant's host switched off) ends the connection.
public final class WyomingConnection: Sendable {
    public let fd: Int32
    /// "host:port" of the peer, for logs and errors.
    public let peer: String
    private let decoder: Mutex<WyomingDecoder>
    private let writing = Mutex(())
    private let closed = Atomic<Bool>(false)

    public init(fd: Int32, peer: String, limits: WyomingLimits = WyomingLimits(), idleTimeout: Duration = .seconds(30)) {
        self.fd = fd
        self.peer = peer
        decoder = Mutex(WyomingDecoder(limits: limits))
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let c = idleTimeout.components
        var value = timeval(tv_sec: Int(c.seconds), tv_usec: Int(c.attoseconds / 1_000_000_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { Glibc.close(fd) }

    /// Connects to `host:port` (a numeric IPv4 address or a name).
    public static func connect(host: String, port: Int, limits: WyomingLimits = WyomingLimits(),
                               idleTimeout: Duration = .seconds(30)) throws -> WyomingConnection {
        let fd = try TCPAddress.connect(host: host, port: port)
        return WyomingConnection(fd: fd, peer: "\(host):\(port)", limits: limits, idleTimeout: idleTimeout)
    }

    /// Sends one event whole.
    public func send(_ event: WyomingEvent) throws {
        try sendBytes(WyomingEncoder.encode(event.frame))
    }

    /// Sends bytes as they are (tests send malformed input this way).
    public func sendBytes(_ bytes: Data) throws {
        let peer = self.peer
        let fd = self.fd
        try writing.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                offset += try bytes.withUnsafeBytes { raw in
                    try socketCall("send", peer) { Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
                }
            }
        }
    }

    /// The next event, or nil when the peer closed the connection. A
    /// malformed event throws ``WyomingProtocolError``; silence beyond the
    /// idle timeout and socket failures throw ``WyomingSocketError``.
    public func receive() throws -> WyomingEvent? {
        guard let frame = try receiveFrame() else { return nil }
        return try WyomingEvent(frame: frame)
    }

    public func receiveFrame() throws -> WyomingFrame? {
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            if let frame = try decoder.withLock({ decoder throws(WyomingProtocolError) in try decoder.next() }) { return frame }
            let fd = self.fd
            let count = try chunk.withUnsafeMutableBytes { raw throws(WyomingSocketError) in
                try socketCall("recv", peer) { recv(fd, raw.baseAddress, raw.count, 0) }
            }
            if count == 0 {
                let leftover = decoder.withLock { $0.bufferedBytes }
                if leftover > 0 { throw WyomingProtocolError("connection closed in the middle of an event (\(leftover) bytes unread)") }
                return nil
            }
            decoder.withLock { $0.append(chunk[..<count]) }
        }
    }

    /// Ends the connection both ways; a blocked `receive` returns.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }
}

/// IPv4 TCP addresses: listening and connecting.
enum TCPAddress {
    static func withAddress<T>(host: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) throws(WyomingSocketError) -> T {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        if inet_pton(AF_INET, host, &address.sin_addr) != 1 {
            // A name: the first IPv4 address it resolves to.
            var hints = addrinfo()
            hints.ai_family = AF_INET
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list, let found = first.pointee.ai_addr else {
                throw WyomingSocketError(call: "resolve", address: host, errno: EHOSTUNREACH)
            }
            defer { freeaddrinfo(list) }
            found.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address.sin_addr = $0.pointee.sin_addr }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    static func makeSocket(_ address: String) throws(WyomingSocketError) -> Int32 {
        Int32(try socketCall("socket", address) { Int(socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)) })
    }

    static func connect(host: String, port: Int) throws -> Int32 {
        let name = "\(host):\(port)"
        let fd = try makeSocket(name)
        do {
            let rc = try withAddress(host: host, port: port) { Glibc.connect(fd, $0, $1) }
            if rc < 0 { throw WyomingSocketError(call: "connect", address: name, errno: errno) }
            return fd
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// A listening socket on `host:port` (port 0: any free one) and the port it got.
    static func listen(host: String, port: Int) throws -> (fd: Int32, port: Int) {
        let name = "\(host):\(port)"
        let fd = try makeSocket(name)
        do {
            var on: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            let rc = try withAddress(host: host, port: port) { bind(fd, $0, $1) }
            if rc < 0 { throw WyomingSocketError(call: "bind", address: name, errno: errno) }
            try socketCall("listen", name) { Int(Glibc.listen(fd, 8)) }
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return (fd, Int(UInt16(bigEndian: bound.sin_port)))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }
}

import Foundation
import ParleySocket
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A failed socket call: which call, on what, and errno (ParleySocket's,
/// shared with the control socket; Wyoming's name for it).
public typealias WyomingSocketError = SocketCallError

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
    /// Asked once, at the first well-formed event (the allow list keeps the
    /// first Home Assistant that speaks); a refusal ends the connection.
    private let onFirstEvent = Mutex<(@Sendable () -> WyomingPeers.Decision)?>(nil)

    public init(fd: Int32, peer: String, limits: WyomingLimits = WyomingLimits(), idleTimeout: Duration = .seconds(30)) {
        self.fd = fd
        self.peer = peer
        decoder = Mutex(WyomingDecoder(limits: limits))
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        SocketOptions.setIdleTimeout(fd, idleTimeout)
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { Glibc.close(fd) }

    /// Connects to `host:port` (a numeric IPv4 address or a name).
    /// `source`: the local address to connect from (nil: the system's choice).
    public static func connect(host: String, port: Int, from source: String? = nil, limits: WyomingLimits = WyomingLimits(),
                               idleTimeout: Duration = .seconds(30)) throws -> WyomingConnection {
        let fd = try TCPAddress.connect(host: host, port: port, from: source)
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
                    try systemCall("send", peer) { Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
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

    /// `check` runs at the first well-formed event, before it is handled.
    public func checkFirstEvent(_ check: @escaping @Sendable () -> WyomingPeers.Decision) {
        onFirstEvent.withLock { $0 = check }
    }

    /// The peer's IP address (``peer`` without its port).
    public var peerHost: String { peer.lastIndex(of: ":").map { String(peer[..<$0]) } ?? peer }

    public func receiveFrame() throws -> WyomingFrame? {
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            if let frame = try decoder.withLock({ decoder throws(WyomingProtocolError) in try decoder.next() }) {
                if let check = onFirstEvent.withLock({ f in defer { f = nil }; return f }), case .refused(let reason) = check() {
                    try? send(.error(text: reason, code: "not-allowed"))
                    throw WyomingNotAllowed(description: reason)
                }
                return frame
            }
            let fd = self.fd
            let count = try chunk.withUnsafeMutableBytes { raw throws(WyomingSocketError) in
                try systemCall("recv", peer) { recv(fd, raw.baseAddress, raw.count, 0) }
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

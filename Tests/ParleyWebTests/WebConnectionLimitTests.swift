import Foundation
import Logging
import ParleySocket
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyWeb

#if canImport(Glibc)
    import Glibc
#endif

/// The page's server on a real socket, with LAN peers played from other
/// loopback addresses (127.0.0.2, .3, ...: the whole 127/8 answers on Linux).
@Suite(.serialized) struct WebConnectionLimitTests {
    /// A raw client connection from `source`, reads giving up after 30 s so
    /// a broken server fails the test rather than hanging it.
    static func open(_ port: Int, from source: String) throws -> Int32 {
        let fd = try TCPAddress.connect(host: "127.0.0.1", port: port, from: source)
        SocketOptions.setIdleTimeout(fd, .seconds(30))
        return fd
    }

    /// Everything the server sends until it closes or resets (nil: the read timed out).
    static func readToEnd(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            if count < 0 {
                if errno == EINTR { continue }
                return errno == ECONNRESET ? String(decoding: bytes, as: UTF8.self) : nil
            }
            bytes += chunk[..<count]
        }
    }

    /// Runs a blocking socket call on a thread of its own: the page's
    /// handlers run on Swift's cooperative pool (two threads on two cores),
    /// which a blocked recv must not hold while the server needs it.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static func get(_ port: Int, _ path: String, from source: String) async throws -> String? {
        try await blocking { try getBlocking(port, path, from: source) }
    }

    static func getBlocking(_ port: Int, _ path: String, from source: String) throws -> String? {
        let fd = try open(port, from: source)
        defer { close(fd) }
        let request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        return readToEnd(fd)
    }

    /// Runs the page's server on 127.0.0.1 with `limits` while `body` runs.
    static func serving(_ limits: PageLimits, _ body: (WebService, Int) async throws -> Void) async throws {
        let fixture = try await WebPageTests.Fixture()
        defer { fixture.cleanUp() }
        let port = Atomic<Int>(0)
        let service = WebService(page: fixture.page, port: 0, listen: "127.0.0.1", logger: Logger(label: "test"), limits: limits,
                                 onListening: { port.store($0, ordering: .releasing) })
        let server = Task { try await service.run() }
        defer { server.cancel() }
        try await Poll.until("the page listens") { port.load(ordering: .acquiring) != 0 }
        try await body(service, port.load(ordering: .acquiring))
        server.cancel()
        _ = try? await server.value
    }

    /// One address opening many connections holds at most `perAddress` of
    /// them (the rest are closed at once); the owner's phone at another
    /// address is still answered; idle connections and unfinished headers
    /// are closed by the idle timeout, so nothing stays held.
    @Test func oneAddressCannotHoldThePage() async throws {
        var limits = PageLimits()
        limits.perAddress = 4
        limits.idleTimeout = .seconds(1)
        try await Self.serving(limits) { service, port in
            var flood: [Int32] = []
            defer { flood.forEach { close($0) } }
            var most = 0
            for _ in 0..<40 {
                flood.append(try Self.open(port, from: "127.0.0.2"))
                most = max(most, service.connections.count("127.0.0.2"))
            }
            // Headers never finished (a slow-loris client).
            let slow = try Self.open(port, from: "127.0.0.4")
            defer { close(slow) }
            _ = "GET / HTTP/1.1\r\nHost: loc".withCString { send(slow, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            try await Poll.until("the flood's connections are counted") {
                most = max(most, service.connections.count("127.0.0.2"))
                return most == limits.perAddress
            }
            let page = try #require(try await Self.get(port, "/pair", from: "127.0.0.3"), "the page did not answer beside the flood")
            #expect(page.hasPrefix("HTTP/1.1 200"), "\(page.prefix(200))")
            #expect(most == limits.perAddress, "one address held \(most) connections, more than the \(limits.perAddress) allowed")
            // Idle ones go: nothing from the flood or the slow client stays open.
            try await Poll.until("idle connections are closed") {
                service.connections.count("127.0.0.2") == 0 && service.connections.count("127.0.0.4") == 0
            }
            // Closed by the server already (counted out above): these reads end at once.
            for fd in flood + [slow] { #expect(Self.readToEnd(fd) != nil, "a connection was never closed by the server") }
        }
    }

    /// Connections held open from many addresses cannot lock the owner out:
    /// at the total, the connection idle longest is closed to make room.
    @Test func theIdleLongestMakesRoomAtTheTotal() async throws {
        var limits = PageLimits()
        limits.perAddress = 4
        limits.total = 6
        // Room is made at the total, not by the idle time-out: a loaded
        // machine took over its 10 s between the first connection and the
        // last check, and the time-out had closed the others meanwhile.
        limits.idleTimeout = .seconds(600)
        try await Self.serving(limits) { service, port in
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            for n in 0..<6 {
                held.append(try Self.open(port, from: "127.0.0.\(10 + n)"))
                // One at a time, so "idle longest" is the order they came in.
                try await Poll.until("connection \(n) is counted") { service.connections.total == n + 1 }
            }
            let page = try #require(try await Self.get(port, "/pair", from: "127.0.0.20"), "the owner was not answered at the total")
            #expect(page.hasPrefix("HTTP/1.1 200"), "\(page.prefix(200))")
            #expect(service.connections.count("127.0.0.10") == 0, "the idle-longest connection was not the one closed")
            let first = held[0]
            #expect(try await Self.blocking { Self.readToEnd(first) } != nil, "the connection closed for room is still open")
            #expect((11...15).allSatisfy { service.connections.count("127.0.0.\($0)") == 1 })
            #expect(service.connections.total <= limits.total)
        }
    }
}

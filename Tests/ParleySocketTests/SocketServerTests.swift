import Foundation
import Logging
import ParleySocket
import ParleyTestKit
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The piece the control socket and Wyoming share, on its own: the
/// connection limit, the refusal, what `stop()` wakes and releases, and the
/// socket calls' errors. Both servers' own suites (ControlSocketTests,
/// ControlLimitsTests, the Wyoming and Home Assistant suites) test it
/// through them.
@Suite struct SocketServerTests {
    /// What the server did with its connections, in order.
    final class Record: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        func count(_ prefix: String) -> Int { lines.withLock { $0.filter { $0.hasPrefix(prefix) }.count } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// A server whose connections are descriptors, each served by reading to
    /// its end, recording every step.
    static func server(maximum: Int, record: Record) -> (SocketServer<Int32>, SocketServer<Int32>.Handlers) {
        let server = SocketServer<Int32>(
            names: .init(acceptThread: "test-accept", connectionThread: "test-connection", acceptFailed: "test accept failed",
                         busyAtShutdown: "test connections still busy at shutdown"),
            maximumConnections: maximum, logger: Logger(label: "test"))
        let handlers = SocketServer<Int32>.Handlers(
            open: { fd, peer in
                record.add("open \(peer)")
                return fd
            },
            serve: { fd in
                record.add("serve")
                var byte: UInt8 = 0
                while read(fd, &byte, 1) > 0 {}
                record.add("served")
            },
            refuse: { fd, maximum in
                record.add("refuse")
                _ = "busy \(maximum)\n".withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            },
            interrupt: { fd in
                record.add("interrupt")
                shutdown(fd, Int32(SHUT_RDWR))
            },
            release: { fd in
                record.add("release")
                close(fd)
            })
        return (server, handlers)
    }

    /// Everything `fd` receives until the peer closes (bounded by a 30 s idle timeout).
    static func readToEnd(_ fd: Int32) -> String {
        SocketOptions.setIdleTimeout(fd, .seconds(30))
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func localPort(_ fd: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func oneMoreThanTheLimitIsRefusedAndStopWakesAndReleasesTheServed() throws {
        let record = Record()
        let (server, handlers) = Self.server(maximum: 1, record: record)
        let (listener, port) = try TCPAddress.listen(host: "127.0.0.1", port: 0)
        #expect(port > 0)
        server.start(listener: listener, handlers: handlers)

        let first = try TCPAddress.connect(host: "127.0.0.1", port: port)
        defer { close(first) }
        try Poll.untilBlocking("the first connection is served") { record.count("serve") == 1 }
        #expect(record.all.first == "open 127.0.0.1:\(Self.localPort(first))", "the peer is named host:port")

        let second = try TCPAddress.connect(host: "127.0.0.1", port: port)
        defer { close(second) }
        #expect(Self.readToEnd(second) == "busy 1\n", "told why, then closed")
        #expect(record.count("release") == 1 && record.count("serve") == 1, "refused without being served")

        #expect(server.stop(timeout: .seconds(30)))
        #expect(record.count("interrupt") == 1, "stop wakes the served connection")
        #expect(record.count("served") == 1 && record.count("release") == 2, "its thread ended and released it")
        #expect(Self.readToEnd(first) == "", "the served client sees its connection end")
        #expect(!server.stop(timeout: .seconds(30)), "a second stop has nothing to stop")
        #expect(throws: SocketCallError.self, "the listening socket is closed") {
            _ = try TCPAddress.connect(host: "127.0.0.1", port: port)
        }
    }

    @Test func aServerNeverStartedHasNothingToStop() {
        let (server, _) = Self.server(maximum: 1, record: Record())
        #expect(!server.stop(timeout: .seconds(1)))
    }

    @Test func aUnixListenerGetsItsModeAndBadPathsNameTheCallAndPath() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("s")
        let fd = try UnixSocket.listen(path: path, mode: 0o660, group: nil, backlog: 4)
        defer { close(fd) }
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o660)

        let long = folder.file(String(repeating: "x", count: UnixSocket.maxPathLength))
        #expect(throws: SocketCallError(call: "socket path too long", path: long, errno: ENAMETOOLONG)) {
            _ = try UnixSocket.listen(path: long, mode: 0o660, group: nil, backlog: 4)
        }
        let missing = folder.file("missing/s")
        #expect(throws: SocketCallError(call: "bind", path: missing, errno: ENOENT)) {
            _ = try UnixSocket.listen(path: missing, mode: 0o660, group: nil, backlog: 4)
        }
        #expect(SocketCallError(call: "bind", path: missing, errno: ENOENT).description
            == "bind \(missing): No such file or directory (errno 2)")
    }

    @Test func wyomingsAddressIsThePath() {
        let error = SocketCallError(call: "connect", address: "10.0.0.9:10700", errno: ECONNREFUSED)
        #expect(error == SocketCallError(call: "connect", path: "10.0.0.9:10700", errno: ECONNREFUSED))
        #expect(error.address == "10.0.0.9:10700")
        #expect(error.description == "connect 10.0.0.9:10700: Connection refused (errno 111)")
    }
}

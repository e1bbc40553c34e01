import Foundation
@testable import ParleyControl
import ParleySocket
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The control socket's bounds (``ControlLimits``): connections, request
/// size, and clients that connect and then stall.
@Suite struct ControlLimitsTests {
    /// A server answering "none" with small limits, in its own folder.
    /// The idle limit of tests that are not about it: long, because a test
    /// task starved by a busy machine (the parallel suite, CI's other jobs)
    /// can wait half a minute between connecting and writing, and the server
    /// then rightly closes the connection (a run failed on "Broken pipe").
    static let untested: Duration = .seconds(600)

    struct SmallServer {
        let folder: String
        let server: ControlServer
        var socket: String { server.path }

        init(clients: Int = 4, requestBytes: Int = 1024, idle: Duration = .milliseconds(300)) throws {
            folder = NSTemporaryDirectory() + "parley-limits-\(UUID().uuidString.prefix(8))"
            var limits = ControlLimits()
            limits.maximumClients = clients
            limits.maximumRequestBytes = requestBytes
            limits.idleTimeout = idle
            server = ControlServer(path: folder + "/c.sock", handler: NoHandler(), logger: .init(label: "t"), limits: limits)
            try server.start()
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// One request on a fresh connection.
        func status() async throws -> ControlResponse {
            let socket = self.socket
            return try await offPool { try ControlClient(path: socket).send(.status) }
        }
    }

    /// Reads until the server closes the connection; the lines it sent before.
    static func linesUntilClosed(_ fd: Int32, _ path: String) async throws -> [String] {
        try await offPool {
            var reader = LineReader(fd: fd, path: path)
            var lines: [String] = []
            while let line = try? reader.next() { lines.append(String(decoding: line, as: UTF8.self)) }
            return lines
        }
    }

    @Test func defaultsBoundEverything() {
        let limits = ControlLimits()
        #expect(limits.maximumClients == 16)
        #expect(limits.maximumRequestBytes == 64 * 1024)
        #expect(limits.idleTimeout == .seconds(10))
    }

    @Test func silentAndHalfLineClientsDoNotHoldUpOthersAndAreClosed() async throws {
        let small = try SmallServer(idle: .milliseconds(300)); defer { small.stop() }
        let silent = try UnixSocket.connect(to: small.socket)
        defer { close(silent) }
        let half = try UnixSocket.connect(to: small.socket)
        defer { close(half) }
        try UnixSocket.writeAll(half, Data("{\"command\":\"sta".utf8), path: small.socket)
        // Another client is answered while both stall.
        #expect(try await small.status().message == "none")
        // Both stalled connections are closed by the server, with no answer.
        #expect(try await Self.linesUntilClosed(silent, small.socket).isEmpty)
        #expect(try await Self.linesUntilClosed(half, small.socket).isEmpty)
        #expect(try await small.status().message == "none")
    }

    @Test func aClientDrippingOneLineIsCutOff() async throws {
        let small = try SmallServer(idle: .milliseconds(300)); defer { small.stop() }
        let socket = small.socket
        let fd = try UnixSocket.connect(to: socket)
        defer { close(fd) }
        // A byte every 50 ms keeps the idle timer alive; the line's own limit
        // (the same 300 ms) ends it. Writing stops at the first refused byte.
        let sent = try await offPool { () -> Int in
            var sent = 0
            for byte in Array("{\"command\":\"status\"}".utf8) + Array(repeating: UInt8(ascii: " "), count: 400) {
                guard (try? UnixSocket.writeAll(fd, Data([byte]), path: socket)) != nil else { break }
                sent += 1
                usleep(50_000)
            }
            return sent
        }
        #expect(sent < 400)
        #expect(try await Self.linesUntilClosed(fd, socket).isEmpty)
    }

    /// Found by the limits test failing under load: the daemon writes its
    /// refusal and closes before the client's request goes out, the write
    /// fails (EPIPE) and the tool said "Broken pipe" instead of the reason.
    @Test func aRefusalIsReportedEvenWhenTheRequestMeetsAClosedConnection() async throws {
        let small = try SmallServer(clients: 1, idle: Self.untested); defer { small.stop() }
        let first = try UnixSocket.connect(to: small.socket)
        defer { close(first) }
        let socket = small.socket
        let error = await #expect(throws: ControlClientError.self) {
            try await offPool {
                let client = try ControlClient(path: socket)
                // The refusal and the close must arrive before the request is
                // written. The server accepts in order: once a later
                // connection has been refused and closed, so has this one.
                let probe = try UnixSocket.connect(to: socket)
                defer { close(probe) }
                var reader = LineReader(fd: probe, path: socket)
                while try reader.next() != nil {}
                return try client.send(.status)
            }
        }
        #expect(error == .refused("too many control connections (1 open); try again"))
    }

    @Test func connectionsPastTheLimitAreRefusedWithAReason() async throws {
        let small = try SmallServer(clients: 2, idle: Self.untested); defer { small.stop() }
        let first = try UnixSocket.connect(to: small.socket)
        let second = try UnixSocket.connect(to: small.socket)
        defer { close(second) }
        // Both are served (an answered request proves each has its thread).
        for fd in [first, second] {
            try UnixSocket.writeAll(fd, Data("{\"command\":\"status\"}\n".utf8), path: small.socket)
            let socket = small.socket
            let line = try await offPool { var reader = LineReader(fd: fd, path: socket); return try reader.next() }
            #expect(line.map { String(decoding: $0, as: UTF8.self) }?.contains("none") == true)
        }
        let error = await #expect(throws: ControlClientError.self) { try await small.status() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("too many control connections (2 open)"))
        // A slot freed is a slot available again (the server notices the close first).
        close(first)
        let answered = try await Poll.holds("a request answered in the freed slot", polls: 200, every: .milliseconds(10)) {
            (try? await small.status())?.message == "none"
        }
        #expect(answered)
    }

    @Test func anOversizedRequestEndsOnlyItsConnection() async throws {
        let small = try SmallServer(requestBytes: 1024, idle: Self.untested); defer { small.stop() }
        let socket = small.socket
        let fd = try UnixSocket.connect(to: socket)
        defer { close(fd) }
        let big = Data(repeating: UInt8(ascii: "a"), count: 8 * 1024)
        _ = try? UnixSocket.writeAll(fd, big, path: socket)
        #expect(try await Self.linesUntilClosed(fd, socket).isEmpty)
        #expect(try await small.status().message == "none")
        // A request just under the limit is still read and answered.
        let padded = "{\"command\":\"status\"" + String(repeating: " ", count: 1000) + "}"
        let answer = try await offPool { () throws -> String in
            let fd = try UnixSocket.connect(to: socket)
            defer { close(fd) }
            try UnixSocket.writeAll(fd, Data((padded + "\n").utf8), path: socket)
            var reader = LineReader(fd: fd, path: socket)
            return try reader.next().map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        #expect(answer.contains("none"))
    }
}

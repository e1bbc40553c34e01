import Foundation
@testable import ParleyControl
import ParleySocket
import ParleyCore
import ParleyTestKit
import Testing

@testable import ParleyDaemon

@Suite struct ControlSocketTests {
    @Test func socketAndDirectoryAreRestricted() async throws {
        let running = try RunningServer(); defer { running.stop() }
        let socketMode = try FileManager.default.attributesOfItem(atPath: running.socket)[.posixPermissions] as? Int
        let dirMode = try FileManager.default.attributesOfItem(
            atPath: (running.socket as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        #expect(socketMode == 0o660)
        #expect(dirMode == 0o750)
    }

    @Test func statusReportsStateAndWhatIsNotWired() async throws {
        let beforeStart = ContinuousClock.now
        let running = try RunningServer(); defer { running.stop() }
        try await running.store.record(Donation(app: "Timer", intent: "StartTimer", parameters: [:], date: Date(), trigger: "voice"))
        let status = try #require(try await running.send(.status).status)
        let sinceStart = DaemonController.seconds(ContinuousClock.now - beforeStart)
        #expect(status.donations == 1)
        #expect(status.board == "sim")
        #expect(status.pid == getpid())
        // Uptime counts from the daemon's start: positive, no more than the
        // time since before the server was made, and growing from one status
        // to the next (orderings, not a time limit).
        #expect(status.uptimeSeconds > 0)
        #expect(status.uptimeSeconds <= sinceStart, "uptime \(status.uptimeSeconds) s, started \(sinceStart) s ago")
        let later = try #require(try await running.send(.status).status)
        #expect(later.uptimeSeconds > status.uptimeSeconds)
        #expect(status.notWired.contains("conversation"))
        #expect(status.audio.state == "not wired")
        #expect(status.stateDirectory == running.dir.file("state"))
    }

    @Test func donationsAreListedAndForgottenByEveryScope() async throws {
        let running = try RunningServer(); defer { running.stop() }
        func add(_ app: String, id: String? = nil, group: String? = nil) async throws -> Int64 {
            try await running.store.record(Donation(
                identifier: id, groupIdentifier: group, app: app, intent: "Do", parameters: ["k": "v"],
                date: Date(), trigger: "voice"))
        }
        let first = try await add("A")
        _ = try await add("A", id: "x")
        _ = try await add("B", group: "g")
        _ = try await add("B", group: "g")
        _ = try await add("C")
        _ = try await add("D")

        let listed = try #require(try await running.send(.donations(app: nil, limit: nil)).donations)
        #expect(listed.count == 6)
        #expect(listed.first?.parameters == ["k": "v"])
        #expect(try await running.send(.donations(app: "B", limit: 1)).donations?.count == 1)

        #expect(try await running.send(.forgetDonations(.row(first))).count == 1)
        #expect(try await running.send(.forgetDonations(.identifier("x"))).count == 1)
        let group = try await running.send(.forgetDonations(.group("g")))
        #expect(group.count == 2 && group.message == "Forgot 2 donations.")
        #expect(try await running.send(.forgetDonations(.app("C"))).count == 1)
        #expect(try await running.send(.forgetDonations(.all)).count == 1)
        #expect(try await running.store.donationCount() == 0)
    }

    @Test func phrasesAreListedAndDeleted() async throws {
        let running = try RunningServer(); defer { running.stop() }
        try await running.store.save(CustomPhrase(
            phrase: "coffee time", app: "Coffee Maker", intent: "OrderDrink", parameters: ["size": "large"],
            created: Date(timeIntervalSince1970: 0)))
        let phrases = try #require(try await running.send(.phrases).phrases)
        #expect(phrases.map(\.phrase) == ["coffee time"])
        #expect(phrases.first?.parameters == ["size": "large"])
        #expect(try await running.send(.deletePhrase("Coffee Time")).message == "Deleted \"Coffee Time\".")
        await #expect(throws: ControlClientError.refused("no custom phrase \"coffee time\"")) {
            try await running.send(.deletePhrase("coffee time"))
        }
    }

    @Test func commandsNeedingAMissingComponentSaySo() async throws {
        let running = try RunningServer(); defer { running.stop() }
        for request: ControlRequest in [.say("coffee time"), .press(.short), .apps, .shortcuts,
                                        .addPhrase(phrase: "p", app: "a", intent: "i", parameters: [:])] {
            let error = await #expect(throws: ControlClientError.self) { try await running.send(request) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("not wired"), "\(request)")
        }
    }

    @Test func logsReturnTheRecentLines() async throws {
        let running = try RunningServer(); defer { running.stop() }
        for n in 0..<15 { running.logs.append("line \(n)") }
        #expect(try await running.send(.logs(limit: 3)).logs == ["line 12", "line 13", "line 14"])
        #expect(try await running.send(.logs(limit: 100)).logs?.count == 10)
    }

    @Test func oneConnectionCarriesManyRequestsAndBadLinesGetErrors() async throws {
        let running = try RunningServer(); defer { running.stop() }
        let socket = running.socket
        let responses = try await offPool { () throws -> [ControlResponse] in
            let fd = try UnixSocket.connect(to: socket)
            defer { close(fd) }
            let lines = "{\"command\":\"phrases\"}\nnot json\n{\"command\":\"fly\"}\n{\"command\":\"say\"}\n"
                + "{\"command\":\"forget\",\"scope\":\"row\",\"value\":\"abc\"}\n{\"command\":\"logs\",\"limit\":1}\n"
            try UnixSocket.writeAll(fd, Data(lines.utf8), path: socket)
            var reader = LineReader(fd: fd, path: socket)
            var responses: [ControlResponse] = []
            while responses.count < 6, let line = try reader.next() {
                responses.append(try ControlCoding.decode(ControlResponse.self, from: line))
            }
            return responses
        }
        #expect(responses.map(\.ok) == [true, false, false, false, false, true])
        #expect(responses[1].error?.contains("JSON") == true)
        #expect(responses[2].error == "unknown command \"fly\"")
        #expect(responses[3].error == "say needs \"text\"")
        #expect(responses[4].error == "forget row needs a numeric value")
    }

    @Test func everyRequestSurvivesTheWireUnchanged() async throws {
        let requests: [ControlRequest] = [
            .status, .say("order a latte"), .press(.short), .press(.long), .press(.double), .apps, .shortcuts,
            .logs(limit: 20), .donations(app: "Soup Chef", limit: 5), .donations(app: nil, limit: nil),
            .forgetDonations(.row(7)), .forgetDonations(.identifier("i")), .forgetDonations(.group("g")),
            .forgetDonations(.app("a")), .forgetDonations(.all), .phrases,
            .addPhrase(phrase: "coffee time", app: "Coffee Maker", intent: "OrderDrink", parameters: ["size": "large"]),
            .deletePhrase("coffee time"), .setAppEnabled(identifier: "KitchenLights", enabled: false),
            .installApp(name: "home-assistant"), .installApp(name: nil),
        ]
        for request in requests {
            let line = try ControlCoding.encode(request.wire)
            let decoded = try ControlRequest(wire: try ControlCoding.decode(WireRequest.self, from: line.dropLast()))
            #expect(decoded == request)
        }
    }

    @Test func notRunningWhenNoSocketOrNobodyListens() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let missing = dir.file("none.sock")
        #expect(throws: ControlClientError.notRunning(path: missing)) { try ControlClient(path: missing) }

        // A socket file left behind by a dead daemon: ECONNREFUSED.
        let stale = dir.file("stale.sock")
        let fd = try UnixSocket.makeSocket(stale)
        let bound = try UnixSocket.withAddress(stale) { bind(fd, $0, $1) }
        #expect(bound == 0)
        close(fd)
        let error = #expect(throws: ControlClientError.notRunning(path: stale)) { try ControlClient(path: stale) }
        #expect(error?.description.contains("parleyd is not running") == true)
    }

    @Test func permissionDeniedIsExplained() {
        let error = ControlClientError(connectFailure: SystemCallError(call: "connect", path: "/run/parley/parley.sock", errno: EACCES))
        #expect(error == .permissionDenied(path: "/run/parley/parley.sock"))
        #expect(error.description.contains("control_group"))
    }

    // Root bypasses file permissions, so the test connects as `nobody` from a
    // child, which only root may start.
    @Test(.enabled(if: getuid() == 0, "needs root to run a client as another user"))
    func otherUsersAreRefusedByTheSocketPermissions() async throws {
        let running = try RunningServer(); defer { running.stop() }
        // Let nobody traverse to the socket, so the socket's own 0660 decides.
        chmod(running.dir.path, 0o755)
        chmod((running.socket as NSString).deletingLastPathComponent, 0o755)
        let output = try await ChildProcess.run("/usr/bin/setpriv", [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
            "import socket,sys\ntry:\n socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print('connected')\n"
                + "except PermissionError: print('EACCES')", running.socket,
        ]).standardOutput
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "EACCES")
    }

    @Test func aSecondServerOnALiveSocketIsRefusedAndAStaleOneReplaced() async throws {
        let running = try RunningServer(); defer { running.stop() }
        let second = ControlServer(path: running.socket, handler: NoHandler(), logger: .init(label: "t"))
        let error = #expect(throws: ControlServerError.self) { try second.start() }
        #expect(error?.description.contains("already listening") == true)

        running.server.stop()
        // Leave a stale socket file: a new server takes its place.
        let fd = try UnixSocket.makeSocket(running.socket)
        _ = try UnixSocket.withAddress(running.socket) { bind(fd, $0, $1) }
        close(fd)
        let third = ControlServer(path: running.socket, handler: NoHandler(), logger: .init(label: "t"))
        try third.start()
        defer { third.stop() }
        #expect(try await offPool { try ControlClient(path: running.socket).send(.status) }.message == "none")
    }

    @Test func stopEndsOpenConnectionsAndRemovesTheSocket() async throws {
        let running = try RunningServer()
        let socket = running.socket
        let idle = try UnixSocket.connect(to: socket)  // connected, never sends
        defer { close(idle) }
        running.stop()
        #expect(!FileManager.default.fileExists(atPath: socket))
        // The server shut the connection: reading gives end of stream.
        let line = try await offPool { var reader = LineReader(fd: idle, path: socket); return try reader.next() }
        #expect(line == nil)
    }
}

/// Answers everything with the message "none" (a server that is not parleyd's).
struct NoHandler: ControlHandling {
    func handle(_ request: ControlRequest) async -> ControlResponse { .message("none") }
}

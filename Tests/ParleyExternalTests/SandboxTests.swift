import CParleyProcess
import Foundation
import ParleyExternal
import ParleySandbox
import ParleySocket
import ParleyTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Handlers started through the sandbox runner (`parley-app-runner`), as
/// systemd's parley-app.socket starts it on the device: the same requests,
/// limits and failures as a handler the daemon starts itself.
@Suite struct SandboxTests {
    let handlers = HandlerTests()

    func sandboxed(_ activator: SandboxActivator) -> HandlerLimits {
        var limits = handlers.patient
        limits.sandbox = activator.socket
        return limits
    }

    /// The parent of `pid`, from /proc.
    func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { pid_t($0) }
    }

    func alive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return !["Z", "X"].contains(stat[stat.index(after: close)...].split(separator: " ").first ?? "")
    }

    @Test func aRequestIsAnsweredByAHandlerTheRunnerStarted() async throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        let (handler, folder) = try handlers.supervisor("good", limits: sandboxed(activator))
        defer { folder.remove() }
        await handler.start()
        let result = await handlers.perform(handler, "Echo")
        #expect(result.map { $0["dialog"] } == .success(.string("Done.")))
        guard case .running(let pid) = await handler.status, pid > 0 else {
            Issue.record("no handler pid reported: \(await handler.status)")
            return
        }
        // The runner is its parent, not this process; and it ran in the app's folder.
        let runner = try #require(activator.started.first)
        #expect(parent(of: pid) == runner)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") == folder.url.path)
        #expect(handlers.log.contains("[Tester] handler started in the sandbox (pid \(pid)): python3 handler.py good"))
        #expect(handlers.log.contains("[Tester] started in mode good"), "standard error reaches the log through the handed-over pipe")
        await handler.stop()
        #expect(try await Poll.holds("the handler ends with the stop") { !alive(pid) })
        #expect(try await Poll.holds("its runner ends with it") { !alive(runner) })
    }

    @Test func anExitStatusComesBackFromTheRunner() async throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        try await handlers.expectFailureThenRecovery("Exit", { $0 == .exited(HandlerExit(status: 1, signal: nil)) },
                                                     logged: "handler exited with status 1; restarting", limits: sandboxed(activator))
    }

    @Test func aCrashComesBackAsItsSignal() async throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        try await handlers.expectFailureThenRecovery("Crash", { $0 == .exited(HandlerExit(status: nil, signal: SIGSEGV)) },
                                                     logged: "was killed by signal 11 (SIGSEGV)", limits: sandboxed(activator))
    }

    /// The runner sets the handler's RLIMIT_DATA from the request, as the
    /// daemon does for a handler it starts itself.
    @Test func theMemoryCapHoldsInTheSandbox() async throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        try await handlers.expectFailureThenRecovery("Hog", { $0 == .exited(HandlerExit(status: 1, signal: nil)) },
                                                     logged: "MemoryError", limits: sandboxed(activator))
    }

    /// A hang past the time limit: the daemon hangs up on the runner, which
    /// kills the handler; a new one answers.
    @Test func aHangIsKilledThroughTheRunner() async throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        try await handlers.expectFailureThenRecovery("Hang", { if case .timedOut(method: "perform", _) = $0 { true } else { false } },
                                                     logged: "did not answer perform within 0.3 s", limits: sandboxed(activator),
                                                     timeLimit: .milliseconds(300))
        #expect(activator.started.count >= 2, "a second runner for the restarted handler")
    }

    @Test func aProgramThatIsNotThereIsNamed() async throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        let folder = try AppFolder()
        defer { folder.remove() }
        var limits = sandboxed(activator)
        limits.restartDelays = [.seconds(30)]
        let handler = HandlerSupervisor(app: "Ghost", argv: ["/nonexistent/program"], directory: folder.url, limits: limits, logger: handlers.log.logger)
        await handler.start()
        #expect(try await Poll.holds("the runner's refusal is logged") {
            handlers.log.contains("[Ghost] the sandbox could not start the handler: no such program '/nonexistent/program'")
        })
        #expect(try await Poll.holds("the handler is marked for a restart") {
            if case .restarting(let why) = await handler.status { why == "exited with status 127" } else { false }
        })
        await handler.stop()
    }

    @Test func noSandboxSocketIsAClearStartFailure() async throws {
        let folder = try AppFolder()
        defer { folder.remove() }
        var limits = HandlerLimits()
        limits.sandbox = "/tmp/pxs-missing.sock"
        limits.restartDelays = [.seconds(30)]
        let handler = HandlerSupervisor(app: "Lost", argv: ["true"], directory: folder.url, limits: limits, logger: handlers.log.logger)
        await handler.start()
        guard case .restarting(let why) = await handler.status else {
            Issue.record("expected a restart, got \(await handler.status)")
            return
        }
        #expect(why.hasPrefix("cannot start it in the sandbox (/tmp/pxs-missing.sock): "), "\(why)")
        #expect(why.contains("No such file"), "\(why)")
        await handler.stop()
    }

    // MARK: The runner's side of the conversation

    /// Connects to the activator and returns the socket.
    func connect(_ activator: SandboxActivator) throws -> Int32 { try UnixSocket.connect(to: activator.socket) }

    func readLine(_ fd: Int32) -> String {
        var bytes = [UInt8](), byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 && byte != 0x0A { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aRequestWithoutDescriptorsIsRefused() throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        let fd = try connect(activator)
        defer { close(fd) }
        let line = try SandboxRequest(app: "Bare", argv: ["true"]).line()
        #expect(line.withUnsafeBytes { parley_send_with_fds(fd, $0.baseAddress, $0.count, nil, 0) } == 0)
        let answer = readLine(fd)
        #expect(answer.hasPrefix("failed \(EPROTO) "), "\(answer)")
        #expect(answer.contains("0 descriptors came with it, not 4"), "\(answer)")
    }

    @Test func aRequestThatIsNotJSONIsRefused() throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        let fd = try connect(activator)
        defer { close(fd) }
        let fds = [0, 1, 2, 0] as [Int32]
        let junk = Array("{not json\n".utf8)
        #expect(parley_send_with_fds(fd, junk, junk.count, fds, 4) == 0)
        #expect(readLine(fd).hasPrefix("failed \(EPROTO) the request is not a JSON object"))
    }

    /// Starts `argv` through the runner with the folder `handed` (by
    /// descriptor) and `named` (by path); the connection and the pid.
    func start(_ activator: SandboxActivator, _ argv: [String], handed: String = "/tmp", named: String? = nil) throws -> (socket: Int32, pid: pid_t) {
        let fd = try connect(activator)
        var parent = [Int32](repeating: -1, count: 3), child = [Int32](repeating: -1, count: 3)
        #expect(parley_handler_pipes(&parent, &child) == 0)
        let folder = open(handed, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let line = try SandboxRequest(app: "T", argv: argv, directory: named).line()
        let descriptors = child + [folder]
        #expect(line.withUnsafeBytes { parley_send_with_fds(fd, $0.baseAddress, $0.count, descriptors, 4) } == 0)
        (descriptors + parent).forEach { close($0) }
        let started = readLine(fd)
        guard case .started(let pid) = SandboxReport(line: Substring(started)) else {
            Issue.record("expected started, got \(started)")
            return (fd, 0)
        }
        return (fd, pid)
    }

    /// The handler's exit is reported with the runner's last line; hanging
    /// up is the kill.
    @Test func theRunnerReportsTheEndAndKillsOnHangUp() throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        let quick = try start(activator, ["sh", "-c", "exit 4"])
        #expect(SandboxReport(line: Substring(readLine(quick.socket))) == .exited(status: 4))
        close(quick.socket)
        let slow = try start(activator, ["sleep", "600"])
        #expect(slow.pid > 0 && alive(slow.pid))
        close(slow.socket)
        #expect(Poll.holdsBlocking("the handler ends with the hang-up") { !alive(slow.pid) })
    }

    /// The handler starts in its folder by path (so it can name it from the
    /// runner's mount namespace) only when the path is the folder handed
    /// over; otherwise in the handed folder, by descriptor.
    @Test func theFolderNamedMustBeTheFolderHanded() throws {
        let activator = try SandboxActivator()
        defer { activator.stop() }
        for (named, expected) in [("/tmp", "/tmp"), ("/var", "/tmp"), ("/nonexistent", "/tmp")] {
            let run = try start(activator, ["sleep", "600"], handed: "/tmp", named: named)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(run.pid)/cwd") == expected, "named \(named)")
            close(run.socket)
            #expect(Poll.holdsBlocking("the handler ends with the hang-up") { !alive(run.pid) })
        }
    }
}

@Suite struct SandboxWireTests {
    @Test func aRequestGoesAsOneJSONLineAndComesBack() throws {
        let request = SandboxRequest(app: "ShoppingList", argv: ["./handler.sh"], environment: ["PARLEY_APP_DATA": "/var/lib/parley/app-data/ShoppingList"],
                                     directory: "/var/lib/parley/apps/shopping-list", memoryBytes: 256 * 1_048_576)
        let line = try request.line()
        #expect(line.last == 0x0A && line.dropLast().allSatisfy { $0 != 0x0A })
        #expect(String(decoding: line.dropLast(), as: UTF8.self)
            == #"{"app":"ShoppingList","argv":[".\/handler.sh"],"directory":"\/var\/lib\/parley\/apps\/shopping-list","#
            + #""environment":{"PARLEY_APP_DATA":"\/var\/lib\/parley\/app-data\/ShoppingList"},"memoryBytes":268435456}"#)
        #expect(try SandboxRequest.parse(line.dropLast()) == request)
    }

    @Test func badRequestsSayWhy() {
        #expect(throws: SandboxRequest.Problem.noCommand) { try SandboxRequest.parse(Data(#"{"app":"A","argv":[],"environment":{}}"#.utf8)) }
        #expect(throws: SandboxRequest.Problem.noCommand) { try SandboxRequest.parse(Data(#"{"app":"A","argv":[""],"environment":{}}"#.utf8)) }
        #expect(throws: SandboxRequest.Problem.tooLong) { try SandboxRequest.parse(Data(repeating: 0x20, count: SandboxWire.maximumRequestBytes + 1)) }
        do {
            _ = try SandboxRequest.parse(Data(#"{"app":"A"}"#.utf8))
            Issue.record("a request without argv was read")
        } catch {
            #expect(error.description.hasPrefix("the request is not a JSON object with app, argv and environment"))
        }
    }

    @Test func reportsReadBackAndNothingElseIsOne() {
        for report in [SandboxReport.started(pid: 42), .exited(status: 0), .exited(status: 3), .killed(signal: 9),
                       .failed(errno: 2, reason: "no such program './handler.sh'")] {
            #expect(SandboxReport(line: Substring(report.line.dropLast())) == report)
        }
        #expect(SandboxReport.failed(errno: 1, reason: "two\nlines").line == "failed 1 two lines\n")
        for junk in ["", "started", "started 0", "started x", "exited 1 2", "hello 3", "killed"] {
            #expect(SandboxReport(line: Substring(junk)) == nil, "\(junk)")
        }
    }
}

@Suite struct SandboxAccessTests {
    /// The sandbox's group (here the test user's own group) gets read on an
    /// app's folder and read-write on its data, and nothing is followed out.
    @Test func anAppFolderIsReadableAndItsDataWritableByTheGroup() throws {
        let root = URL(fileURLWithPath: "/tmp/pxa-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let app = root.appendingPathComponent("apps/shop"), data = root.appendingPathComponent("app-data/Shop")
        for folder in [app, data] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
        try "#!/bin/sh\n".write(to: app.appendingPathComponent("handler.sh"), atomically: true, encoding: .utf8)
        try "{}".write(to: app.appendingPathComponent("manifest.yaml"), atomically: true, encoding: .utf8)
        try "milk\n".write(to: data.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
        chmod(app.appendingPathComponent("handler.sh").path, 0o700)
        chmod(app.appendingPathComponent("manifest.yaml").path, 0o600)
        chmod(data.appendingPathComponent("list.txt").path, 0o600)
        let outside = root.appendingPathComponent("secret")
        try "x".write(to: outside, atomically: true, encoding: .utf8)
        chmod(outside.path, 0o600)
        symlink(outside.path, app.appendingPathComponent("link").path)
        let access = SandboxAccess(groupName: "own", group: getgid())
        #expect(access.grant(app, writable: false).isEmpty)
        #expect(access.grant(data, writable: true).isEmpty)
        #expect(access.pass(root.appendingPathComponent("apps")) == nil)
        func mode(_ url: URL) -> mode_t {
            var info = stat()
            _ = lstat(url.path, &info)
            return info.st_mode & 0o7777
        }
        #expect(mode(app) == 0o750)
        #expect(mode(app.appendingPathComponent("handler.sh")) == 0o750)
        #expect(mode(app.appendingPathComponent("manifest.yaml")) == 0o640)
        #expect(mode(data) == 0o770)
        #expect(mode(data.appendingPathComponent("list.txt")) == 0o660)
        #expect(mode(root.appendingPathComponent("apps")) & 0o070 == 0o010, "passage only: the folder of apps is not listed")
        #expect(mode(outside) == 0o600, "a symbolic link in the app folder is not followed")
        #expect(SandboxAccess.lookup(group: "no-such-group-here") == nil)
    }

    /// What a handler may leave in its data folder to be given what is not
    /// its own: a symbolic link to a folder of the daemon's, and a second
    /// name (hard link) of a file outside. Neither is changed. And an app
    /// copied in group-writable is made read-only to the group.
    @Test func linksInTheDataFolderAreNotFollowedAndAnAppIsNotLeftWritable() throws {
        let root = URL(fileURLWithPath: "/tmp/pxa-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let app = root.appendingPathComponent("apps/shop"), data = root.appendingPathComponent("app-data/Shop")
        let state = root.appendingPathComponent("state")
        for folder in [app, data, state] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let database = state.appendingPathComponent("state.db")
        try "db".write(to: database, atomically: true, encoding: .utf8)
        chmod(database.path, 0o600)
        symlink(state.path, data.appendingPathComponent("d").path)
        #expect(link(database.path, data.appendingPathComponent("copy.db").path) == 0)
        try "x".write(to: app.appendingPathComponent("handler.py"), atomically: true, encoding: .utf8)
        chmod(app.appendingPathComponent("handler.py").path, 0o770)
        let access = SandboxAccess(groupName: "own", group: getgid())
        #expect(access.grant(app, writable: false).isEmpty)
        let problems = access.grant(data, writable: true)
        #expect(problems.count == 1 && problems.first?.contains("copy.db: has 2 names") == true, "\(problems)")
        func mode(_ url: URL) -> mode_t {
            var info = stat()
            _ = lstat(url.path, &info)
            return info.st_mode & 0o7777
        }
        #expect(mode(state) == 0o700, "the daemon's folder behind the link is left as it was")
        #expect(mode(database) == 0o600, "the daemon's file behind a second name is left as it was")
        #expect(mode(app.appendingPathComponent("handler.py")) == 0o750, "group write taken from the app")
        #expect(mode(data) == 0o770)
    }
}

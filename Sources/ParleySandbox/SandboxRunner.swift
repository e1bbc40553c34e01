import CParleyProcess
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The body of `parley-app-runner`: serves one connection (its standard
/// input, as systemd's Accept=yes hands it over) as ``SandboxWire`` says.
/// Runs as the sandbox's user inside the instance's cgroup; everything it
/// starts stays there.
public enum SandboxRunner {
    /// How long parleyd has to send its request after connecting.
    static let requestTimeoutMilliseconds: Int32 = 10_000

    /// Serves `connection` until the handler ends or parleyd hangs up; the
    /// exit status for the runner (0: the handler ran, whatever its end).
    public static func serve(connection: Int32, log: (String) -> Void) -> Int32 {
        let received: (request: SandboxRequest, descriptors: [Int32])
        switch receive(connection) {
        case .success(let value): received = value
        case .failure(let problem):
            log("refused a request: \(problem)")
            report(.failed(errno: EPROTO, reason: problem.description), on: connection)
            return 2
        }
        let (request, descriptors) = received
        if let bytes = request.memoryBytes, bytes > 0 {
            // On the runner itself, before the spawn: the handler inherits it
            // from its first instruction. The runner needs a few MiB.
            var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
            if setrlimit(Int32(RLIMIT_DATA.rawValue), &limit) != 0 {
                log("[\(request.app)] could not cap the handler's memory: \(String(cString: strerror(errno)))")
            }
        }
        let environment = ProcessInfo.processInfo.environment.merging(request.environment) { _, requested in requested }
        let directory = request.directory.flatMap { sameFolder($0, as: descriptors[3]) ? $0 : nil }
        if let named = request.directory, directory == nil {
            log("[\(request.app)] \(named) is not the folder that came with the request here; the handler starts in that one, by descriptor")
        }
        var pid: pid_t = 0
        let spawned = CStrings.with(request.argv) { argv in
            CStrings.with(CStrings.environment(environment)) { envp in
                descriptors.withUnsafeBufferPointer { fds in
                    parley_spawn_with_fds(argv, envp, directory, descriptors[3], fds.baseAddress!, &pid)
                }
            }
        }
        // Only the handler holds its pipes and folder from here: parleyd sees
        // the end of its output when the handler (and its children) end.
        descriptors.forEach { close($0) }
        guard spawned == 0 else {
            let reason = spawned == ENOENT ? "no such program '\(request.argv[0])'" : String(cString: strerror(spawned))
            log("[\(request.app)] cannot start '\(request.argv[0])': \(reason)")
            report(.failed(errno: spawned, reason: reason), on: connection)
            return 1
        }
        report(.started(pid: pid), on: connection)
        // Whatever is left of its group goes too when it ends (`watch`);
        // systemd takes the rest of the cgroup once this process exits.
        let ending = watch(pid: pid, connection: connection)
        if let ending { report(ending, on: connection) }
        return 0
    }

    /// Whether `path`, seen from here, is the folder `descriptor` is open on.
    private static func sameFolder(_ path: String, as descriptor: Int32) -> Bool {
        var named = stat(), handed = stat()
        guard stat(path, &named) == 0, fstat(descriptor, &handed) == 0 else { return false }
        return named.st_dev == handed.st_dev && named.st_ino == handed.st_ino
    }

    /// The handler's end, or nil when parleyd hung up first (it was killed).
    private static func watch(pid: pid_t, connection: Int32) -> SandboxReport? {
        let pidfd = parley_pidfd_open(pid)
        defer { if pidfd >= 0 { close(pidfd) } }
        var polls = [pollfd(fd: connection, events: Int16(POLLIN), revents: 0)]
        if pidfd >= 0 { polls.append(pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)) }
        var scratch = [UInt8](repeating: 0, count: 256)
        while true {
            if pidfd < 0, let ended = reap(pid, wait: false) {
                // Without a pidfd (a kernel before 5.3) the child is looked at
                // every 200 ms, and its group is killed after it was reaped.
                _ = kill(-pid, SIGKILL)
                return ended
            }
            let ready = poll(&polls, nfds_t(polls.count), pidfd >= 0 ? -1 : 200)
            if ready < 0 && errno != EINTR { break }
            if pidfd >= 0 && polls[1].revents != 0 {
                // It ended, and is not reaped yet: its pid (its group's id)
                // cannot be another process's until it is, so the group's
                // leftovers are killed first.
                _ = kill(-pid, SIGKILL)
                return reap(pid, wait: true)
            }
            if polls[0].revents != 0 {
                // Anything from parleyd, or its hang-up, means "stop it now".
                let count = read(connection, &scratch, scratch.count)
                if count < 0 && errno == EINTR { continue }
                break
            }
        }
        _ = kill(-pid, SIGKILL)
        _ = kill(pid, SIGKILL)
        _ = reap(pid, wait: true)
        return nil
    }

    private static func reap(_ pid: pid_t, wait: Bool) -> SandboxReport? {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, wait ? 0 : WNOHANG) } while result < 0 && errno == EINTR
        guard result == pid else { return nil }
        // WIFEXITED / WTERMSIG by hand: the macros are not imported.
        let signal = status & 0x7F
        return signal == 0 ? .exited(status: (status >> 8) & 0xFF) : .killed(signal: signal)
    }

    private static func receive(_ connection: Int32) -> Result<(request: SandboxRequest, descriptors: [Int32]), SandboxRequest.Problem> {
        var waiting = [pollfd(fd: connection, events: Int16(POLLIN), revents: 0)]
        var line = Data()
        var descriptors: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = ContinuousClock.now + .milliseconds(Int(requestTimeoutMilliseconds))
        while !line.contains(0x0A) {
            let left = Int32(max(0, (deadline - .now) / .milliseconds(1)))
            guard poll(&waiting, 1, left) > 0 else {
                descriptors.forEach { close($0) }
                return .failure(.incomplete("nothing arrived within \(requestTimeoutMilliseconds / 1000) s"))
            }
            var fds = [Int32](repeating: -1, count: SandboxWire.descriptorCount)
            var count: Int32 = 0
            let read = parley_receive_with_fds(connection, &buffer, buffer.count, &fds, Int32(fds.count), &count)
            descriptors += fds.prefix(Int(count))
            if read < 0 && -read == Int(EINTR) { continue }
            guard read > 0 else {
                descriptors.forEach { close($0) }
                return .failure(.incomplete("the connection closed before a whole line arrived"))
            }
            line.append(contentsOf: buffer[0..<Int(read)])
            if line.count > SandboxWire.maximumRequestBytes + 1 {
                descriptors.forEach { close($0) }
                return .failure(.tooLong)
            }
        }
        guard descriptors.count == SandboxWire.descriptorCount else {
            descriptors.forEach { close($0) }
            return .failure(.incomplete("\(descriptors.count) descriptors came with it, not \(SandboxWire.descriptorCount) (standard input, output, error, the app's folder)"))
        }
        do throws(SandboxRequest.Problem) {
            return .success((try SandboxRequest.parse(line.prefix { $0 != 0x0A }), descriptors))
        } catch {
            descriptors.forEach { close($0) }
            return .failure(error)
        }
    }

    private static func report(_ report: SandboxReport, on connection: Int32) {
        let bytes = Array(report.line.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return }
            offset += sent
        }
    }

}

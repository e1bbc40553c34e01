import CParleyProcess
import Foundation
import ParleySandbox
import ParleySocket
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What systemd's parley-app.socket (Accept=yes) does on the device, for
/// tests on a machine without systemd: listens on a Unix socket and starts
/// `parley-app-runner` for each connection, the connection as its standard
/// input and output. (No cgroup, no other user: what the runner itself does
/// is what is tested.)
final class SandboxActivator: Sendable {
    let socket: String
    private let listener: Int32
    private let runners = Mutex<[pid_t]>([])

    /// `parley-app-runner`, built beside the test bundle.
    static func runner() throws -> String {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("parley-app-runner").path }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ActivatorError(description: "parley-app-runner not found beside the tests (looked in \(candidates)); build with `swift build --build-tests`")
        }
        return found
    }

    struct ActivatorError: Error, CustomStringConvertible { let description: String }

    init() throws {
        let runner = try Self.runner()
        socket = "/tmp/pxs-\(UUID().uuidString.prefix(8)).sock"
        listener = try UnixSocket.listen(path: socket, mode: 0o600, group: nil, backlog: 16)
        let listener = self.listener
        let thread = Thread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return
                }
                var pid: pid_t = 0
                let fds = [connection, connection, 2]
                CStrings.with([runner]) { argv in
                    CStrings.with(CStrings.environment(ProcessInfo.processInfo.environment)) { envp in
                        _ = parley_spawn_with_fds(argv, envp, nil, -1, fds, &pid)
                    }
                }
                close(connection)
                if pid > 0 {
                    runners.withLock { $0.append(pid) }
                    // Reaped on a thread of its own, as the service manager would.
                    let started = pid
                    Thread { var status: Int32 = 0; _ = waitpid(started, &status, 0) }.start()
                }
            }
        }
        thread.name = "sandbox-activator"
        thread.start()
    }

    /// The runners started so far, oldest first.
    var started: [pid_t] { runners.withLock { $0 } }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(socket)
    }
}

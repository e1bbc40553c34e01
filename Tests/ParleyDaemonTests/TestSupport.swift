import Foundation
import Logging
import ParleyConfiguration
import ParleyControl
import ParleyStore
import ParleyTestKit

@testable import ParleyDaemon

/// A control server on a real socket, answered by the real controller over
/// a real store, with nothing plugged into the integration ports.
struct RunningServer {
    let dir: TemporaryDirectory
    let store: StateStore
    let server: ControlServer
    let logs: LogRing
    var socket: String { server.path }

    /// The controller that answers on the socket.
    let controller: DaemonController

    init() throws {
        try self.init(dir: TemporaryDirectory(), components: { _, _ in DaemonComponents() })
    }

    /// A server over the given components.
    static func serving(_ components: DaemonComponents) throws -> RunningServer {
        try RunningServer(dir: TemporaryDirectory(), components: { _, _ in components })
    }

    /// A server over the components parleyd wires (engine, apps, simulated
    /// board; no audio in), with their services not running.
    static func wired() async throws -> RunningServer {
        let dir = try TemporaryDirectory()
        var config = RunningServer.config(dir)
        config.audio.capture = .file("missing.wav")
        let store = try StateStore(directory: config.stateDirectory)
        var components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
        components.services = []
        return try RunningServer(dir: dir, config: config, store: store, components: components)
    }

    private static func config(_ dir: TemporaryDirectory) -> ParleyConfig {
        var config = ParleyConfig()
        config.stateDirectory = dir.file("state")
        config.controlSocket = dir.file("run/parley.sock")
        config.acousticModel = "stock"  // the stock model: the decoders' model is process-wide (AcousticModel.configuredDefault) and these tests assume it
        return config
    }

    private init(dir: TemporaryDirectory, components: (ParleyConfig, StateStore) throws -> DaemonComponents) throws {
        let config = RunningServer.config(dir)
        let store = try StateStore(directory: config.stateDirectory)
        try self.init(dir: dir, config: config, store: store, components: components(config, store))
    }

    private init(dir: TemporaryDirectory, config: ParleyConfig, store: StateStore, components: DaemonComponents) throws {
        self.dir = dir
        self.store = store
        logs = LogRing(capacity: 10)
        let logger = Logger(label: "test")
        controller = DaemonController(
            config: config, configFile: nil, store: store, components: components, logs: logs, logger: logger)
        server = ControlServer(path: config.controlSocket, handler: controller, logger: logger)
        try server.start()
    }

    func send(_ request: ControlRequest) async throws -> ControlResponse {
        let socket = self.socket
        return try await offPool { try ControlClient(path: socket).send(request) }
    }

    func stop() {
        server.stop()
        dir.remove()
    }
}

/// The executables built beside the test bundle.
enum Executables {
    static func url(_ name: String) throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ].map { $0.appendingPathComponent(name) }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestFailure("\(name) not found beside the tests (\(candidates.map(\.path))); run `swift build --build-tests`")
        }
        return found
    }

    /// Starts a built executable; its output is drained while it runs.
    static func start(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> ChildProcess {
        try await ChildProcess.start(url(name).path, arguments, environment: environment)
    }

    /// Runs a built executable to its end.
    static func run(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> ChildProcess.Exit {
        try await start(name, arguments, environment: environment).wait()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs blocking client code on its own thread. The server answers through
/// async tasks, so a test blocking a cooperative thread while waiting for
/// the answer could starve the pool (2 cores) and deadlock.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

import ArgumentParser
import Foundation
import Logging
import ParleyConfiguration
import ParleyDaemon
import ParleyStore

/// `parley-bench app-install`: the time from an app folder moved into the
/// apps folder of a wired daemon (engine, board, apps service; no audio) to
/// its phrase being understood, and from its removal to its phrase no
/// longer being understood.
struct AppInstallBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-install",
        abstract: "Times dropping an app folder into a running daemon until its phrase is understood.")

    @Option(help: "Installs measured.") var count = 10
    @Option(help: "The app folder to install (its phrase below must be one of its shortcuts).")
    var app = "examples/apps/kitchen-lights"
    @Option(help: "A phrase of the app and the answer expected.") var phrase = "turn off the lights"

    func run() async throws {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("parley-bench-install-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        var config = ParleyConfig()
        config.stateDirectory = root.appendingPathComponent("state").path
        config.controlSocket = root.appendingPathComponent("parley.sock").path
        config.audio.capture = .file("missing.wav")
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        let store = try StateStore(directory: config.stateDirectory)
        let components = try await Wiring.components(config: config, store: store, logger: quiet)
        guard let service = components.services.compactMap({ $0 as? AppsService }).first, let conversation = components.conversation else {
            throw ValidationError("the wired daemon has no apps service")
        }
        let watching = Task { try await service.run() }
        let apps = URL(fileURLWithPath: config.appsFolderPath)
        let clock = ContinuousClock()
        var installs: [Double] = [], removals: [Double] = []
        func understood() async throws -> Bool { !(try await conversation.hear(phrase).spoken.isEmpty) }
        for index in 0..<count {
            let staging = apps.appendingPathComponent(".staging-\(index)")
            let target = apps.appendingPathComponent("app-\(index)")
            try FileManager.default.copyItem(at: URL(fileURLWithPath: app), to: staging)
            let start = clock.now
            try FileManager.default.moveItem(at: staging, to: target)
            while try await !understood() { try await Task.sleep(for: .milliseconds(5)) }
            installs.append(Double((clock.now - start).components.attoseconds) / 1e15 + Double((clock.now - start).components.seconds) * 1000)
            let removed = clock.now
            try FileManager.default.removeItem(at: target)
            while try await understood() { try await Task.sleep(for: .milliseconds(5)) }
            removals.append(Double((clock.now - removed).components.attoseconds) / 1e15 + Double((clock.now - removed).components.seconds) * 1000)
        }
        watching.cancel()
        _ = await watching.result
        await store.close()
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(String(format: "app folder moved in -> phrase understood: median %.0f ms (min %.0f, max %.0f) over %d installs; removed -> not understood: median %.0f ms",
                     median(installs), installs.min() ?? 0, installs.max() ?? 0, count, median(removals)))
    }
}

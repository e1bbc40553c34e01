import Foundation
import Logging
import ParleyExternal
import ParleyIntents
import ServiceLifecycle
import Synchronization

/// Keeps the external apps in line with the apps folder while the daemon
/// runs: the folder and each app folder are watched (inotify, through
/// `DirectoryWatcher`); after a change the host loads, reloads or unloads
/// apps and `onChange` hands the new list to the engine, which rebuilds its
/// phrases and grammars in the background. Stops every handler at shutdown.
public final class AppsService: Service, Sendable {
    public let host: ExternalAppsHost
    /// The apps a person turned off, kept across restarts (nil: none can be).
    public let off: SwitchedOff?
    private let onChange: @Sendable ([AppDescription]) async -> Void
    private let logger: Logger
    private let quietPeriod: Duration
    private let watchers = Mutex<[String: DirectoryWatcher]>([:])
    private let pokes: AsyncStream<Void>
    private let poke: AsyncStream<Void>.Continuation
    /// A handler said its options changed: the phrases are compiled again
    /// even when no folder changed.
    private let optionsChanged = Mutex(false)

    public init(host: ExternalAppsHost, off: SwitchedOff? = nil, quietPeriod: Duration = .milliseconds(150), logger: Logger,
                onChange: @escaping @Sendable ([AppDescription]) async -> Void) {
        self.host = host
        self.off = off
        self.onChange = onChange
        self.logger = logger
        self.quietPeriod = quietPeriod
        // One pending poke is enough: a refresh reads the whole folder.
        (pokes, poke) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Creates the apps folder when missing (the daemon owns its state directory).
    public static func prepare(directory: URL, logger: Logger) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o750])
        } catch {
            logger.error("apps: cannot create the apps folder \(directory.path): \(error)")
        }
    }

    public func run() async throws {
        watch()
        await host.setOptionsChanged { [weak self] in
            self?.optionsChanged.withLock { $0 = true }
            self?.poke.yield()
        }
        await withGracefulShutdownHandler {
            for await _ in pokes {
                let changes = await host.refresh()
                watch()
                let options = optionsChanged.withLock { flag in
                    defer { flag = false }
                    return flag
                }
                guard !changes.isEmpty || options else { continue }
                if !changes.isEmpty {
                    logger.notice("apps: added \(changes.added), changed \(changes.changed), removed \(changes.removed), refused \(changes.refused)")
                }
                await onChange(await host.descriptions)
            }
        } onGracefulShutdown: {
            self.poke.finish()
        }
        let all = watchers.withLock { current in
            defer { current.removeAll() }
            return Array(current.values)
        }
        all.forEach { $0.stop() }
        await host.stopAll()
        logger.info("apps: handlers stopped")
    }

    /// Turns an app off (handler stopped, phrases out of the grammar) or on
    /// again, and stores it; false when no loaded app has that identifier.
    /// Returns once the engine has the new set of apps.
    public func setEnabled(_ identifier: String, _ enabled: Bool) async throws -> Bool {
        guard let off else { throw SwitchedOffUnavailable() }
        guard await host.setEnabled(identifier, enabled) else { return false }
        try await off.set(identifier, off: !enabled)
        await onChange(await host.descriptions)
        return true
    }

    /// Installs `source` into the apps folder as `name` (``ExternalAppsHost/install(_:as:)``);
    /// returns once the engine has the new set of apps.
    public func install(_ source: URL, as name: String) async throws(AppInstallError) -> ExternalApp {
        let app = try await host.install(source, as: name)
        watch()
        await onChange(await host.descriptions)
        return app
    }

    /// Asks for a refresh (a change was seen, or a test wants one).
    public func refreshSoon() { poke.yield() }

    /// One watcher on the apps folder and one on each app folder; watchers of
    /// folders that are gone are stopped.
    private func watch() {
        let root = host.directory
        let wanted = [root.path] + AppsFolder.folderNames(root).map { root.appendingPathComponent($0).path }
        var started: [DirectoryWatcher] = []
        let stale = watchers.withLock { current -> [DirectoryWatcher] in
            for path in wanted where current[path] == nil {
                do {
                    let watcher = try DirectoryWatcher(directory: path, quietPeriod: quietPeriod, includeCreated: path == root.path)
                    current[path] = watcher
                    started.append(watcher)
                } catch {
                    logger.error("apps: \(error)")
                }
            }
            let gone = current.keys.filter { !wanted.contains($0) }
            return gone.compactMap { current.removeValue(forKey: $0) }
        }
        stale.forEach { $0.stop() }
        for watcher in started {
            watcher.start()
            Task { [poke] in
                for await _ in watcher.changes { poke.yield() }
            }
        }
    }
}

struct SwitchedOffUnavailable: Error, CustomStringConvertible {
    var description: String { "this parleyd keeps no list of apps turned off" }
}

import Foundation
import Logging
import ParleyIntents

/// The apps of one apps folder (`<state directory>/apps/`): each subfolder
/// with a manifest.yaml is an app. A folder that breaks a rule is refused
/// with its errors and everything else keeps working.
public struct AppsFolderScan: Sendable {
    public var loaded: [ExternalApp] = []
    /// Folder name → why it was refused.
    public var refused: [String: ManifestErrors] = [:]
}

public enum AppsFolder {
    /// Loads every app folder of `directory` in name order, each checked
    /// against the built-in apps and the folders loaded before it.
    public static func load(directory: URL, builtIn: [AppDescription], limits: HandlerLimits = HandlerLimits(), logger: Logger) -> AppsFolderScan {
        var scan = AppsFolderScan()
        for name in folderNames(directory) {
            do {
                let app = try ExternalApp.load(folder: directory.appendingPathComponent(name),
                                               installed: builtIn + scan.loaded.map(\.description), limits: limits, logger: logger)
                scan.loaded.append(app)
            } catch {
                scan.refused[name] = error
            }
        }
        return scan
    }

    /// The subfolders of `directory`, sorted; hidden ones (editors' and
    /// installers' temporary folders) are skipped.
    public static func folderNames(_ directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return !name.hasPrefix(".")
                && FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }.sorted()
    }

    /// What identifies a folder's contents: every file's path, size and
    /// modification time (to a depth of two, at most 500 entries). A change
    /// to the manifest or the handler's code changes it.
    public static func fingerprint(_ folder: URL) -> String {
        var parts: [String] = []
        func visit(_ url: URL, depth: Int) {
            guard depth <= 2, parts.count < 500,
                  let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else { return }
            for name in names.sorted() where !name.hasPrefix(".") && name != "__pycache__" {
                let child = url.appendingPathComponent(name)
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: child.path) else { continue }
                if attributes[.type] as? FileAttributeType == .typeDirectory {
                    visit(child, depth: depth + 1)
                } else {
                    let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                    parts.append("\(child.path.dropFirst(folder.path.count)):\(attributes[.size] ?? 0):\(modified)")
                }
            }
        }
        visit(folder, depth: 0)
        return parts.joined(separator: "\n")
    }
}

/// The external apps a daemon or a console runs: loads an apps folder,
/// starts each app's handler, and on `refresh()` loads what was added,
/// reloads what changed and unloads what was removed, without a restart.
public actor ExternalAppsHost {
    public nonisolated let directory: URL
    let builtIn: [AppDescription]
    private let limits: HandlerLimits
    private let dataDirectory: URL?
    let logger: Logger
    private var apps: [String: (app: ExternalApp, fingerprint: String)] = [:]
    private var refused: [String: (errors: ManifestErrors, fingerprint: String)] = [:]
    /// Identifiers of apps a person turned off: loaded and checked (their
    /// phrases stay reserved), but no handler runs and the engine is not given them.
    private var off: Set<String> = []
    let primaryApp: String?
    private var onOptionsChanged: (@Sendable () -> Void)?

    /// What one refresh did, folder names in order.
    public struct Changes: Sendable, Hashable {
        public var added: [String] = []
        public var changed: [String] = []
        public var removed: [String] = []
        public var refused: [String] = []
        public var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed.isEmpty && refused.isEmpty }
        public init(added: [String] = [], changed: [String] = [], removed: [String] = [], refused: [String] = []) {
            self.added = added
            self.changed = changed
            self.removed = removed
            self.refused = refused
        }
    }

    /// `dataDirectory`: where each handler keeps its data (`PARLEY_APP_DATA`,
    /// one folder per app identifier).
    /// `primaryApp` (parley.yaml's `primary_app`): an external app with this
    /// identifier, name or synonym may have phrases that do not name it.
    public init(directory: URL, builtIn: [AppDescription], limits: HandlerLimits = HandlerLimits(), dataDirectory: URL? = nil,
                primaryApp: String? = nil, logger: Logger) {
        self.primaryApp = primaryApp
        self.directory = directory
        self.builtIn = builtIn
        self.limits = limits
        self.dataDirectory = dataDirectory
        self.logger = logger
    }

    /// The loaded apps that are on, in folder-name order.
    public var loaded: [ExternalApp] { all.filter { !off.contains($0.description.identifier) } }
    /// Every loaded app, on or off.
    public var all: [ExternalApp] { apps.keys.sorted().compactMap { apps[$0]?.app } }
    public var descriptions: [AppDescription] { loaded.map(\.description) }

    /// One loaded app as the page and `parley apps status` show it.
    public struct AppState: Sendable {
        public var folder: String
        public var app: ExternalApp
        public var on: Bool
        public var status: HandlerSupervisor.Status
        public var restarts: Int
    }

    public func states() async -> [AppState] {
        var states: [AppState] = []
        for folder in apps.keys.sorted() {
            guard let app = apps[folder]?.app else { continue }
            states.append(AppState(folder: folder, app: app, on: !off.contains(app.description.identifier),
                                   status: await app.handler.status, restarts: await app.handler.restarts))
        }
        return states
    }

    /// The apps to keep off from the start (before the first refresh starts any handler).
    public func setOff(_ identifiers: Set<String>) { off = identifiers }

    /// Turns a loaded app off (its handler stopped) or on (started); false
    /// when no loaded app has that identifier. The caller hands the new
    /// `descriptions` to the engine.
    public func setEnabled(_ identifier: String, _ enabled: Bool) async -> Bool {
        guard let app = apps.values.first(where: { $0.app.description.identifier == identifier })?.app else { return false }
        if enabled {
            off.remove(identifier)
            await app.handler.start()
        } else {
            off.insert(identifier)
            await app.handler.stop()
        }
        logger.notice("apps: '\(identifier)' turned \(enabled ? "on" : "off")")
        return true
    }
    /// The app loaded from the folder `name` of the apps folder, on or off.
    public func app(inFolder name: String) -> ExternalApp? { apps[name]?.app }

    /// Folder name → why it is not loaded.
    public var refusals: [String: ManifestErrors] { refused.mapValues(\.errors) }

    /// Brings the loaded apps in line with the folder. Unchanged apps keep
    /// their running handler; a changed app's handler is stopped and the new
    /// one started; a refused folder is logged with every error.
    @discardableResult
    public func refresh() async -> Changes {
        var changes = Changes()
        let names = AppsFolder.folderNames(directory)
        let present = Set(names)
        for name in apps.keys.sorted() where !present.contains(name) {
            if let old = apps.removeValue(forKey: name) { await old.app.handler.stop() }
            changes.removed.append(name)
            logger.notice("apps: unloaded '\(name)'")
        }
        refused = refused.filter { present.contains($0.key) }
        for name in names {
            let folder = directory.appendingPathComponent(name)
            let fingerprint = AppsFolder.fingerprint(folder)
            if apps[name]?.fingerprint == fingerprint || refused[name]?.fingerprint == fingerprint { continue }
            let previous = apps.removeValue(forKey: name)
            if let previous { await previous.app.handler.stop() }
            let others = builtIn + apps.keys.sorted().compactMap { apps[$0]?.app.description }
            do {
                let app = try ExternalApp.load(folder: folder, installed: others, limits: limits, dataDirectory: dataDirectory,
                                               primaryApp: primaryApp, logger: logger)
                apps[name] = (app, fingerprint)
                refused[name] = nil
                await app.handler.setOptionsChanged(onOptionsChanged)
                if !off.contains(app.description.identifier) { await app.handler.start() }
                if previous == nil { changes.added.append(name) } else { changes.changed.append(name) }
                logger.notice("apps: \(previous == nil ? "loaded" : "reloaded") '\(name)' (\(app.description.identifier))")
            } catch {
                refused[name] = (error, fingerprint)
                changes.refused.append(name)
                if previous != nil { changes.removed.append(name) }
                logger.error("apps: refused '\(name)':\n\(error.description)")
            }
        }
        return changes
    }

    /// What to do when a handler says its `options` changed (every app's,
    /// loaded now or later).
    public func setOptionsChanged(_ body: @escaping @Sendable () -> Void) async {
        onOptionsChanged = body
        for entry in apps.values { await entry.app.handler.setOptionsChanged(body) }
    }

    /// Stops every handler (the daemon is stopping), all at once: each gets
    /// its grace period in parallel, so stopping stays within the daemon's
    /// shutdown limit however many apps there are.
    public func stopAll() async {
        let handlers = apps.values.map(\.app.handler)
        apps.removeAll()
        await withTaskGroup(of: Void.self) { group in
            for handler in handlers { group.addTask { await handler.stop() } }
        }
    }
}

import Foundation
import Logging
import ParleyCore
import ServiceLifecycle
import Synchronization

/// `<state directory>/shortcuts/`: loads every shortcut file, watches the
/// folder (inotify, `DirectoryWatcher`) and, when files are added, changed or
/// removed, loads and checks them again in the background and hands the new
/// library to `apply` (the engine recompiles its phrase model and the
/// grammar follows), without a restart. Problems are logged one
/// `FILE:LINE:COLUMN: reason` line each; the other files load.
public final class ShortcutFolder: Service, Sendable {
    public let directory: String
    private let environment: @Sendable () async -> ShortcutEnvironment
    private let apply: @Sendable (ShortcutLibrary) async -> Void
    private let logger: Logger
    /// Shortcuts a person turned off (lowercased names): loaded and listed,
    /// but left out of what is applied, so their phrases and triggers are gone.
    public let off: SwitchedOff?
    /// Everything last loaded, the part of it in force (without what is
    /// off), and the last library whose `apply` has returned.
    private let current = Mutex((loaded: ShortcutLibrary(), library: ShortcutLibrary(), applied: ShortcutLibrary?.none))

    /// `environment` is asked at each load (the custom phrases may have changed).
    public init(directory: String, logger: Logger, off: SwitchedOff? = nil,
                environment: @escaping @Sendable () async -> ShortcutEnvironment,
                apply: @escaping @Sendable (ShortcutLibrary) async -> Void) {
        self.directory = directory
        self.environment = environment
        self.apply = apply
        self.logger = logger
        self.off = off
    }

    /// The shortcuts in force: those last loaded, less the ones turned off.
    public var library: ShortcutLibrary { current.withLock { $0.library } }
    /// Every shortcut last loaded, on or off.
    public var loaded: ShortcutLibrary { current.withLock { $0.loaded } }

    /// Whether the shortcut named `name` is turned off.
    public func isOff(_ name: String) -> Bool { off?.contains(name.lowercased()) ?? false }

    /// Turns a loaded shortcut off or on again (stored, then applied: its
    /// phrases leave or rejoin the grammar); false when none has that name.
    public func setEnabled(_ name: String, _ enabled: Bool) async throws -> Bool {
        guard let off, loaded.shortcuts.contains(where: { $0.name.lowercased() == name.lowercased() }) else { return false }
        try await off.set(name.lowercased(), off: !enabled)
        logger.notice("shortcut \(enabled ? "turned on" : "turned off")", metadata: ["name": "\(name)"])
        await load()
        return true
    }

    /// Creates the folder if needed, loads it and applies the result unless
    /// the same library was applied already (an apply still under way does
    /// not count: on return the engine has this library). Applying makes the engine
    /// rebuild its phrases and the recogniser compile its grammar again
    /// (seconds on a slow board), and the same library comes back often:
    /// the reload when the watch starts, the watcher noticing a file that
    /// `add` already loaded, an app install that changes no shortcut.
    @discardableResult
    public func load() async -> ShortcutLibrary {
        createFolder()
        let environment = await environment()
        let loaded = ShortcutLibrary.load(directory: directory, environment: environment)
        for problem in loaded.problems { logger.error("\(problem)") }
        let library = ShortcutLibrary(shortcuts: loaded.shortcuts.filter { !isOff($0.name) }, problems: loaded.problems)
        logger.info("shortcuts loaded", metadata: [
            "folder": "\(directory)", "loaded": "\(loaded.shortcuts.count)", "problems": "\(loaded.problems.count)",
            "off": "\(loaded.shortcuts.count - library.shortcuts.count)",
        ])
        let applied = current.withLock { state -> ShortcutLibrary? in
            state.loaded = loaded
            state.library = library
            return state.applied
        }
        if let applied, applied.shortcuts == library.shortcuts, applied.problems == library.problems {
            logger.debug("shortcuts unchanged: not applied again", metadata: ["folder": "\(directory)"])
            return library
        }
        await apply(library)
        current.withLock { $0.applied = library }
        return library
    }

    /// Watches the folder until shutdown, reloading after each batch of
    /// changes. The watch starts first and the folder is then loaded again,
    /// so a change made since the daemon's first load is not missed (and
    /// costs nothing when there was none: see `load`).
    public func run() async throws {
        createFolder()
        let watcher: DirectoryWatcher
        do {
            watcher = try DirectoryWatcher(directory: directory)
        } catch {
            logger.error("shortcut folder not watched (changes need a restart): \(error)")
            await load()
            try? await gracefulShutdown()
            return
        }
        watcher.start()
        await load()
        await withGracefulShutdownHandler {
            for await change in watcher.changes {
                let relevant = change.rescan || change.names.contains { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
                guard relevant else { continue }
                logger.info("shortcut folder changed", metadata: ["files": "\(change.names.sorted().joined(separator: ","))"])
                await load()
            }
        } onGracefulShutdown: {
            watcher.stop()
        }
    }

    private func createFolder() {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            logger.error("shortcut folder \(directory) cannot be created: \(error)")
        }
    }

    /// Checks a file and copies it into the folder as `<name>.yaml` (the
    /// watcher then loads it). Throws the file's problems; nothing is copied.
    public func add(file: String) async throws(ShortcutFileError) -> Shortcut {
        let shortcut = try ShortcutLoader.load(file: file)
        let target = (directory as NSString).appendingPathComponent(Self.fileName(for: shortcut.name))
        // Checked with the folder as it would be: the others, with this file in place of one of the same name.
        let others = ShortcutLibrary.files(in: directory).filter { $0 != target }
        var parsed = others.map { other -> (file: String, result: Result<Shortcut, ShortcutFileError>) in
            do throws(ShortcutFileError) { return (other, .success(try ShortcutLoader.load(file: other))) } catch { return (other, .failure(error)) }
        }.filter { entry in
            // A file of the same shortcut under another name is replaced too.
            if case .success(let s) = entry.result { return s.name.lowercased() != shortcut.name.lowercased() }
            return true
        }
        let loaded = parsed.filter { if case .success = $0.result { return true } else { return false } }.count
        guard loaded < ShortcutLibrary.maximumShortcuts else {
            throw ShortcutFileError([ShortcutProblem(shortcut.nameLocation,
                "the device already keeps \(loaded) shortcuts, the most it keeps (\(ShortcutLibrary.maximumShortcuts)); remove one first")])
        }
        parsed.insert((file, .success(shortcut)), at: 0)
        let checked = ShortcutLibrary.check(parsed, environment: await environment())
        let own = checked.problems.filter { $0.location.file == file }
        if !own.isEmpty { throw ShortcutFileError(own) }
        do {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // Written whole and renamed in, so the watcher never reads half a file.
            try text.write(toFile: target, atomically: true, encoding: .utf8)
        } catch {
            throw ShortcutFileError([ShortcutProblem(SourceLocation(file: target, line: 1, column: 1), "cannot be written: \(error)")])
        }
        return shortcut
    }

    /// Removes the file of the shortcut named `name`; false when there is none.
    public func remove(name: String) -> Bool {
        let wanted = name.lowercased()
        for file in ShortcutLibrary.files(in: directory) {
            guard let shortcut = try? ShortcutLoader.load(file: file), shortcut.name.lowercased() == wanted else { continue }
            return (try? FileManager.default.removeItem(atPath: file)) != nil
        }
        return false
    }

    /// "Lunch time!" -> "lunch-time.yaml".
    static func fileName(for name: String) -> String {
        let mapped = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
        let slug = mapped.split(separator: "-").joined(separator: "-")
        return (slug.isEmpty ? "shortcut" : slug) + ".yaml"
    }
}

import Foundation
import Logging
import ParleyControl
import Synchronization

/// Software updates on an A/B device (issue 52): the slots for `parley
/// status`, a bundle installed with RAUC (`parley update`, the page's
/// upload, the update folder), what the speaker says about it, the restart,
/// and "I'm back" on the next start. One installation at a time.
public final class Updater: Sendable {
    public let rauc: Rauc
    /// The restart after an installation; `PARLEY_REBOOT` names another
    /// command (tests), split at spaces.
    let reboot: [String]
    /// <state>/update: the marker an installation leaves for the next start, uploads.
    public let directory: String
    private let say: @Sendable (String) async -> Void
    private let speaking: @Sendable () -> Bool
    let logger: Logger
    /// What runs now: nil when nothing, else the bundle's path.
    private let busy = Mutex<String?>(nil)
    private let cache = Mutex<(slots: [SlotSummary]?, at: ContinuousClock.Instant)?>(nil)
    private let problemLogged = Atomic<Bool>(false)

    public static let defaultReboot = ["/usr/bin/systemctl", "reboot"]
    public static let installing = "Installing an update. I'll restart when it's ready."
    public static let restarting = "The update is installed. Restarting."

    public init(rauc: Rauc, reboot: [String] = Updater.defaultReboot, stateDirectory: String,
                logger: Logger, say: @escaping @Sendable (String) async -> Void = { _ in },
                speaking: @escaping @Sendable () -> Bool = { false }) {
        self.rauc = rauc
        self.reboot = reboot
        self.directory = (stateDirectory as NSString).appendingPathComponent("update")
        self.say = say
        self.speaking = speaking
        self.logger = logger
    }

    /// `PARLEY_RAUC` and `PARLEY_REBOOT` from the environment.
    public static func tools(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (rauc: Rauc, reboot: [String])
    {
        let reboot = environment["PARLEY_REBOOT"].map { $0.split(separator: " ").map(String.init) } ?? []
        return (Rauc.fromEnvironment(environment), reboot.isEmpty ? defaultReboot : reboot)
    }

    var markerPath: String { (directory as NSString).appendingPathComponent("pending.json") }

    /// The slots as RAUC reports them, read at most every 5 s; nil without
    /// RAUC or when it cannot say (logged once).
    public func slots(fresh: Bool = false) async -> [SlotSummary]? {
        guard rauc.isInstalled else { return nil }
        if !fresh, let cached = cache.withLock({ $0 }), ContinuousClock.now - cached.at < .seconds(5) { return cached.slots }
        var slots: [SlotSummary]?
        do {
            slots = try await rauc.slots()
        } catch {
            if !problemLogged.exchange(true, ordering: .relaxed) { logger.warning("update: no slot status: \(error)") }
        }
        cache.withLock { $0 = (slots, .now) }
        return slots
    }

    /// What is being installed now, if anything.
    public var installingBundle: String? { busy.withLock { $0 } }

    /// The last installation's outcome in words (the page shows it).
    public var lastOutcome: String? { outcome.withLock { $0 } }
    private let outcome = Mutex<String?>(nil)

    /// Installs `path` (an absolute path to a RAUC bundle) into the slot not
    /// running; returns once RAUC is done, with the answer for the person
    /// who asked. On success the restart follows, after the answer.
    public func install(_ path: String) async throws(UpdateError) -> String {
        do {
            let answer = try await installChecked(path)
            outcome.withLock { $0 = answer }
            return answer
        } catch {
            outcome.withLock { $0 = error.description }
            throw error
        }
    }

    private func installChecked(_ path: String) async throws(UpdateError) -> String {
        // An address (update.url) is RAUC's to fetch and check.
        if !Self.isAddress(path) { try Self.check(path) }
        guard rauc.isInstalled else {
            throw UpdateError("\(path): not installed: this machine has no RAUC (\(rauc.path) missing), so it cannot be updated with a bundle")
        }
        let claimed = busy.withLock { current -> String? in
            if let current { return current }
            current = path
            return nil
        }
        if let claimed { throw UpdateError("\(path): refused: an update (\(claimed)) is already being installed; wait for it to finish") }
        logger.notice("update: installing", metadata: ["bundle": "\(path)"])
        let before = await slots(fresh: true)?.first(where: \.booted)
        await say(Self.installing)
        let result: ToolRun
        do {
            result = try await rauc.install(path)
        } catch {
            busy.withLock { $0 = nil }
            await say("The update could not be installed. Nothing has changed.")
            throw UpdateError("\(path): not installed: \(error)")
        }
        guard result.succeeded else {
            busy.withLock { $0 = nil }
            logger.error("update: rauc refused the bundle", metadata: ["bundle": "\(path)", "reason": "\(result.lastLine)"])
            await say("The update could not be installed. Nothing has changed.")
            throw UpdateError("\(path): not installed: \(result.lastLine)")
        }
        let after = await slots(fresh: true)
        let target = after?.first { !$0.booted && $0.bootname != before?.bootname }
        let version = target?.version
        writeMarker(Marker(from: before?.bootname, fromVersion: before?.version, to: target?.bootname, version: version))
        logger.notice("update: installed", metadata: ["bundle": "\(path)", "version": "\(version ?? "unknown")"])
        // The answer goes out first; then the words, then the restart (the request is not kept waiting for it).
        Task.detached { [self] in await restart() }
        return "Installed \((path as NSString).lastPathComponent)\(version.map { " (version \($0))" } ?? "")"
            + "\(target?.bootname.map { " into slot \($0)" } ?? ""); restarting."
    }

    private func restart() async {
        await say(Self.restarting)
        // Up to 10 s for the words to be heard before the restart cuts them.
        for _ in 0..<100 where speaking() { try? await Task.sleep(for: .milliseconds(100)) }
        try? await Task.sleep(for: .milliseconds(300))
        logger.notice("update: restarting", metadata: ["command": "\(reboot.joined(separator: " "))"])
        do {
            let result = try await SystemTool.run(reboot[0], Array(reboot.dropFirst()), timeout: .seconds(60))
            guard result.succeeded else { throw ToolError(description: result.lastLine) }
        } catch {
            logger.error("update: the restart failed (\(reboot.joined(separator: " "))): \(error); the update applies at the next start")
            await say("I could not restart. The update is used when I start again.")
            busy.withLock { $0 = nil }
        }
    }

    /// The checks on a bundle's path before RAUC is asked.
    static func check(_ path: String) throws(UpdateError) {
        guard path.hasPrefix("/") else { throw UpdateError("\(path): an update needs an absolute path to a RAUC bundle") }
        var info = stat()
        guard stat(path, &info) == 0 else { throw UpdateError("\(path): no such file (expected a RAUC bundle, .raucb)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw UpdateError("\(path): not a regular file (expected a RAUC bundle, .raucb)") }
        guard access(path, R_OK) == 0 else { throw UpdateError("\(path): not readable by parleyd (user \(NSUserName())); make it readable") }
    }

    // MARK: - The next start

    struct Marker: Codable, Equatable {
        var from: String?
        var fromVersion: String?
        var to: String?
        var version: String?
    }

    private func writeMarker(_ marker: Marker) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try JSONEncoder().encode(marker).write(to: URL(fileURLWithPath: markerPath), options: .atomic)
        } catch {
            logger.error("update: cannot write \(markerPath): \(error); the speaker will not say it is back")
        }
    }

    /// After the restart: once the booted slot is good (parley-mark-good
    /// marked it), says it is back and which version it runs, and removes
    /// the marker. `polls` × `every` bounds the wait (10 min by default).
    public func announceReturn(polls: Int = 120, every: Duration = .seconds(5)) async {
        guard let data = FileManager.default.contents(atPath: markerPath) else { return }
        guard let marker = try? JSONDecoder().decode(Marker.self, from: data) else {
            logger.warning("update: \(markerPath) is not a marker parleyd wrote; removed")
            try? FileManager.default.removeItem(atPath: markerPath)
            return
        }
        guard let booted = await bootedWhenGood(polls: polls, every: every) else {
            logger.warning("update: the booted slot was not marked good; not announced (marker kept: \(markerPath))")
            return
        }
        try? FileManager.default.removeItem(atPath: markerPath)
        logger.notice("update: back", metadata: ["slot": "\(booted.bootname ?? booted.name)", "version": "\(booted.version ?? "unknown")"])
        await say(Self.returnSentence(marker, booted: booted))
    }

    /// The booted slot once the boot loader counts it good (parley-mark-good
    /// marks it after parleyd is ready); nil if that does not happen within
    /// `polls` × `every`, or without RAUC.
    public func bootedWhenGood(polls: Int = 120, every: Duration = .seconds(5)) async -> SlotSummary? {
        guard rauc.isInstalled else { return nil }
        for poll in 0..<polls {
            if let booted = await slots(fresh: true)?.first(where: \.booted), booted.bootStatus == "good" { return booted }
            if poll < polls - 1 { try? await Task.sleep(for: every) }
            if Task.isCancelled { return nil }
        }
        return nil
    }

    static func returnSentence(_ marker: Marker, booted: SlotSummary) -> String {
        if let from = marker.from, booted.bootname == from {
            return "The update did not start, so I went back to the version from before\(booted.version.map { ", \($0)" } ?? ""). I'm back."
        }
        return "Updated\((booted.version ?? marker.version).map { " to version \($0)" } ?? ""). I'm back."
    }
}

public struct UpdateError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

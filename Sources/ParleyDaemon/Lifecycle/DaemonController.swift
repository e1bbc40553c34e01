import Foundation
import Logging
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ParleyExternal
import ParleyStore

/// Answers control requests from the store and the plugged-in components.
public struct DaemonController: ControlHandling {
    public let config: ParleyConfig
    public let configFile: String?
    public let store: StateStore
    public let components: DaemonComponents
    public let logs: LogRing
    private let started: ContinuousClock.Instant
    private let logger: Logger

    public init(
        config: ParleyConfig, configFile: String?, store: StateStore, components: DaemonComponents,
        logs: LogRing, logger: Logger
    ) {
        self.config = config
        self.configFile = configFile
        self.store = store
        self.components = components
        self.logs = logs
        self.logger = logger
        self.started = .now
    }

    public func handle(_ request: ControlRequest) async -> ControlResponse {
        do {
            return try await respond(to: request)
        } catch let error as ControlClientError {
            return .failure(error.description)
        } catch {
            logger.notice("control request refused", metadata: ["request": "\(request.wire.command)", "error": "\(error)"])
            return .failure("\(error)")
        }
    }

    private func missing(_ port: String) -> ControlResponse {
        .failure("this parleyd has no \(port) plugged in (see `parley status`, \"not wired\")")
    }

    private func respond(to request: ControlRequest) async throws -> ControlResponse {
        switch request {
        case .status:
            var response = ControlResponse()
            response.status = try await status()
            return response
        case .say(let text):
            guard let conversation = components.conversation else { return missing("conversation engine") }
            logger.info("say", metadata: ["text": "\(text)"])
            let heard = try await conversation.hear(text)
            var response = ControlResponse()
            response.spoken = heard.spoken
            response.message = heard.note
            return response
        case .play(let path):
            guard let spool = components.spool else {
                return .failure("parleyd's microphone is \(config.audio.capture?.description ?? "the board's"); WAV files can be played only into a spool:<path> capture (see parley.yaml, audio.capture)")
            }
            let seconds = try spool.append(wav: URL(fileURLWithPath: path))
            logger.info("play", metadata: ["file": "\(path)", "seconds": "\(seconds)"])
            return .message(String(format: "Playing %@ into the microphone (%.1f s).", path, seconds))
        case .press(let press):
            if let board = components.board {
                try await board.simulate(press)
            } else if let conversation = components.conversation {
                try await conversation.press(press)
            } else {
                return missing("board or conversation engine")
            }
            return .message("\(press.rawValue.capitalized) press sent.")
        case .apps:
            guard let catalog = components.catalog else { return missing("app catalog") }
            var response = ControlResponse()
            response.apps = await catalog.apps()
            return response
        case .shortcuts:
            guard let catalog = components.catalog else { return missing("app catalog") }
            var response = ControlResponse()
            response.shortcuts = await catalog.shortcuts()
            return response
        case .logs(let limit):
            var response = ControlResponse()
            response.logs = logs.recent(limit)
            return response
        case .donations(let app, let limit):
            var response = ControlResponse()
            response.donations = try await store.donations(app: app, intent: nil, limit: limit)
            return response
        case .forgetDonations(let scope):
            let count: Int
            var keptForgotten: Int?
            switch scope {
            case .row(let id): count = try await store.deleteDonation(rowID: id) ? 1 : 0
            case .identifier(let id): count = try await store.delete(.identifier(id))
            case .group(let group): count = try await store.delete(.group(group))
            case .app(let app): count = try await store.delete(.app(app))
            case .all:
                count = try await store.delete(.all)
                // The history's audio and what was learned from it go with it.
                keptForgotten = components.room?.forget()
            }
            logger.notice("donations forgotten", metadata: ["scope": "\(scope)", "count": "\(count)"])
            let kept = keptForgotten.map { $0 > 0 ? " and \($0) kept recording\($0 == 1 ? "" : "s") with the room transform" : "" } ?? ""
            var response = ControlResponse.message("Forgot \(count) donation\(count == 1 ? "" : "s")\(kept).")
            response.count = count
            return response
        case .adapt:
            guard let room = components.room else { return missing("room adaptation") }
            let outcome = try await room.adapt()
            var response = ControlResponse.message(
                "Adapted to this room from \(outcome.recordings) confirmed recordings (\(Int(outcome.seconds.rounded())) s of speech); in use now.")
            response.count = outcome.recordings
            return response
        case .phrases:
            var response = ControlResponse()
            response.phrases = try await store.customPhrases()
            return response
        case .addPhrase(let phrase, let app, let intent, let parameters):
            let custom = CustomPhrase(phrase: phrase, app: app, intent: intent, parameters: parameters, created: Date())
            guard let catalog = components.catalog else { return missing("app catalog (phrases are checked against it)") }
            try await catalog.addPhrase(custom)
            return .message("Added \"\(phrase)\".")
        case .deletePhrase(let phrase):
            let deleted: Bool
            if let catalog = components.catalog {
                deleted = try await catalog.deletePhrase(phrase)
            } else {
                deleted = try await store.deletePhrase(phrase)
            }
            guard deleted else { return .failure("no custom phrase \"\(phrase)\"") }
            return .message("Deleted \"\(phrase)\".")
        case .resolve(let text):
            guard let bridge = components.conversation as? EngineBridge else { return missing("conversation engine") }
            var response = ControlResponse()
            response.resolution = await bridge.tryResolve(text)
            return response
        case .volume(let change):
            guard let volume = components.volume else { return missing("volume") }
            if let change { await volume.change(change) }
            let report = await volume.report()
            var response = ControlResponse.message(
                "Volume \(report.level) of 10\(report.muted ? ", muted" : "") (\(report.output)).")
            response.volume = report
            return response
        case .update(let path):
            guard let updater = components.updater else { return missing("updater") }
            do { return .message(try await updater.install(path)) } catch { return .failure(error.description) }
        case .webTokens, .revokeWebToken:
            // ParleyWeb's handler answers these before they get here when the page is on.
            return .failure("the web page is off (web.enabled: false in \(configFile ?? "parley.yaml"))")
        case .externalApps, .setAppEnabled, .installApp:
            guard let apps = components.apps else { return missing("apps folder") }
            return try await respond(to: request, apps: apps)
        case .keptRecordings, .deleteKeptRecording, .forgetKeptRecordings:
            guard let room = components.room else { return missing("room adaptation") }
            return respond(to: request, room: room)
        case .personalShortcuts, .showShortcut, .runShortcut, .addShortcut, .removeShortcut, .setShortcutEnabled:
            guard let shortcuts = components.shortcuts else { return missing("shortcut folder") }
            return try await respond(to: request, shortcuts: shortcuts)
        }
    }

    private func respond(to request: ControlRequest, shortcuts: any ShortcutPort) async throws -> ControlResponse {
        var response = ControlResponse()
        switch request {
        case .personalShortcuts:
            response.personalShortcuts = await shortcuts.list()
        case .showShortcut(let name):
            guard let shortcut = await shortcuts.list().first(where: { $0.name.lowercased() == name.lowercased() }) else {
                return .failure("no shortcut named \"\(name)\"")
            }
            response.personalShortcuts = [shortcut]
        case .runShortcut(let name):
            guard let heard = await shortcuts.run(name) else {
                return .failure("shortcut \"\(name)\" not run: there is no shortcut by that name, or a conversation is open")
            }
            response.spoken = heard.spoken
            response.message = "Ran \(name)."
        case .addShortcut(let path):
            do {
                let name = try await shortcuts.add(file: path)
                return .message("Added the shortcut \"\(name)\".")
            } catch let error as ShortcutFileError {
                return .failure(error.description)
            }
        case .removeShortcut(let name):
            guard await shortcuts.remove(name) else { return .failure("no shortcut named \"\(name)\"") }
            return .message("Removed the shortcut \"\(name)\".")
        case .setShortcutEnabled(let name, let enabled):
            guard try await shortcuts.setEnabled(name, enabled: enabled) else {
                return .failure("no shortcut named \"\(name)\" (see `parley shortcuts list`)")
            }
            return .message(enabled ? "Turned on the shortcut \"\(name)\"." : "Turned off the shortcut \"\(name)\": its phrases are no longer understood.")
        default:
            return .failure("not a shortcut request")
        }
        return response
    }

    private func respond(to request: ControlRequest, apps: AppsService) async throws -> ControlResponse {
        switch request {
        case .setAppEnabled(let identifier, let enabled):
            guard try await apps.setEnabled(identifier, enabled) else {
                return .failure("no external app \"\(identifier)\" (see `parley apps status`)")
            }
            return .message(enabled ? "Turned on \(identifier): its handler starts and its phrases are understood again."
                : "Turned off \(identifier): its handler is stopped and its phrases are no longer understood.")
        case .installApp(let name):
            return await install(name, apps: apps)
        default:
            var response = ControlResponse()
            response.externalApps = await apps.host.states().map { state in
                ExternalAppStatus(identifier: state.app.description.identifier, name: state.app.description.name, folder: state.folder,
                                  state: state.on ? state.status.description : "off", restarts: state.restarts, enabled: state.on,
                                  stderr: state.app.handler.stderrTail.recent)
            }
            return response
        }
    }

    /// `parley apps install [NAME]`: lists the apps that come with Parley,
    /// or installs one into the apps folder.
    private func install(_ name: String?, apps: AppsService) async -> ControlResponse {
        guard let shipped = ShippedApps.folder else {
            return .failure("no apps come with this parleyd (neither \(ShippedApps.installedFolder) nor a checkout's \(ShippedApps.developmentFolder))")
        }
        guard let name else {
            let entries = ShippedApps.entries(in: shipped)
            let folders = Set(AppsFolder.folderNames(apps.host.directory))
            var response = ControlResponse.message("Apps that come with Parley (\(shipped.path)):\n" + entries.map { entry in
                "  \(entry.folder): \(entry.name)\(folders.contains(entry.folder) ? " [installed]" : "")"
                    + (entry.problem.map { " (not here: \($0))" } ?? "")
            }.joined(separator: "\n") + "\nInstall one with `parley apps install NAME`.")
            response.shippedApps = entries.map {
                ShippedAppSummary(folder: $0.folder, name: $0.name, installed: folders.contains($0.folder), problem: $0.problem)
            }
            return response
        }
        let available = AppsFolder.folderNames(shipped)
        guard available.contains(name) else {
            return .failure(AppInstallError.unknown(name, available: available).description)
        }
        do {
            let app = try await apps.install(shipped.appendingPathComponent(name), as: name)
            logger.notice("apps: installed '\(name)' from \(shipped.path)")
            return .message("Installed \(app.description.name) in \(app.manifest.folder.path): "
                + "\(app.description.intents.count) intents; its handler starts. What it needs is at the top of its manifest.yaml.")
        } catch {
            return .failure("\(name): \(error.description)")
        }
    }

    private func respond(to request: ControlRequest, room: RoomLearning) -> ControlResponse {
        switch request {
        case .deleteKeptRecording(let id):
            guard room.kept.delete(id) else { return .failure("no kept recording \"\(id)\" (see the page's History)") }
            logger.notice("kept recording deleted", metadata: ["name": "\(id)"])
            return .message("Deleted the recording \(id).")
        case .forgetKeptRecordings:
            let count = room.forget()
            var response = ControlResponse.message("Deleted \(count) kept recording\(count == 1 ? "" : "s") and the room transform.")
            response.count = count
            return response
        default:
            var response = ControlResponse()
            response.keptRecordings = ((try? room.kept.recordings()) ?? []).map { recording in
                let attributes = try? FileManager.default.attributesOfItem(atPath: recording.audio.path)
                return KeptRecordingSummary(id: recording.name, words: recording.words,
                                            seconds: Self.wavSeconds(recording.audio, bytes: (attributes?[.size] as? Int) ?? 0),
                                            date: attributes?[.modificationDate] as? Date)
            }
            return response
        }
    }

    public func status() async throws -> DaemonStatus {
        let audio = await components.audio?.audioStatus()
            ?? AudioStatus(
                capture: config.audio.capture?.description ?? "the board's",
                playback: config.audio.playback?.description ?? "the board's",
                state: "not wired", overruns: 0)
        return DaemonStatus(
            version: ParleyVersion.current, pid: getpid(),
            uptimeSeconds: Self.seconds(ContinuousClock.now - started),
            state: await components.conversation?.stateDescription() ?? "not wired",
            board: config.board, led: components.board?.ledState, buttonProblem: components.board?.buttonProblem,
            configFile: configFile, stateDirectory: config.stateDirectory,
            audio: audio,
            recognitions: await components.recogniser?.recognitions() ?? 0,
            lastIntents: await components.conversation?.lastIntents() ?? [],
            grammarSize: await grammarSize(),
            donations: try await store.donationCount(),
            customPhrases: try await store.customPhrases().count,
            notWired: components.notWired,
            keptRecordings: components.room?.kept.count, keepAudio: components.room?.keepAudio,
            roomTransform: components.room?.transformDate, homeAssistant: components.homeAssistant?(),
            homeAssistantHandler: components.homeAssistantHandler?(),
            timeZone: (components.localTime?.timeZone ?? .current).identifier,
            frontEnd: await components.recogniser?.frontEndStatus(),
            slots: await components.updater?.slots())
    }

    private func grammarSize() async -> Int {
        if let recogniser = components.recogniser { return await recogniser.grammarSize() }
        return await components.catalog?.grammarSize() ?? 0
    }

    /// A kept WAV's length from its header's byte rate (WAVFile writes a
    /// 44-byte header), without reading its samples.
    static func wavSeconds(_ url: URL, bytes: Int) -> Double {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return 0 }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 44), header.count == 44 else { return 0 }
        let byteRate = header[28..<32].reversed().reduce(0) { $0 << 8 | Int($1) }
        return byteRate > 0 ? Double(max(0, bytes - 44)) / Double(byteRate) : 0
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

public enum ParleyVersion {
    public static let current = "0.1.0"
}

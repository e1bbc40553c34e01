import Foundation
import Logging
import ParleyApps
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleyExternal
import ParleySandbox
import ParleyHardware
import ParleyIntents
import ParleySpeech
import ParleyStore
import ServiceLifecycle

/// Builds the components parleyd runs with from the configuration: the
/// single place where the engine, board, audio and speech are plugged in
/// (see ``DaemonComponents``).
public enum Wiring {
    public static func components(config: ParleyConfig, store: StateStore, logger: Logger) async throws
        -> DaemonComponents
    {
        // First: the model decides which room transform (if any) applies.
        useAcousticModel(config, logger: logger)
        let room = RoomLearning(config: config, model: AcousticModel.configuredDefault.folder,
                                logger: Logger(label: "parley.room"))
        room.restore()
        // What a person turned off (the page, `parley apps off`, `parley shortcuts disable`) stays off.
        let appsOff = SwitchedOff(store: store, key: "apps-off"), shortcutsOff = SwitchedOff(store: store, key: "shortcuts-off")
        for problem in [await appsOff.restore(), await shortcutsOff.restore()].compactMap({ $0 }) { logger.error("\(problem)") }
        let apps = try await externalApps(config: config, off: appsOff.all)
        let registry = apps.registry
        let bridge = EngineBridge(registry: registry, wake: config.wake.grammar, logger: Logger(label: "parley.engine"))
        let board = try Board.load(from: BoardLocator.locate(config.board))
        // Opened before the engine is made: whether the button can be read
        // decides how confirmations are asked (a missing chip never stops the start).
        let hardware = board.open(logger: Logger(label: "parley.board"))
        let engine = ConversationEngine(
            registry: registry,
            stores: ParleyStores(donations: ForgettingDonations(store: store, room: room), customPhrases: store, appData: store),
            clock: SystemClock(), sink: bridge,
            configuration: engineConfiguration(config, board: board, buttonAvailable: hardware.isButtonAvailable))
        bridge.attach(engine)
        await engine.reloadPhrases()
        let localTime = LocalTime(name: config.timeZone, engine: engine)

        let boardBridge = BoardBridge(hardware: hardware, engine: engine, logger: Logger(label: "parley.board"),
                                      onInput: { name, active in await engine.input(name, active: active) })
        // A person's shortcuts: <state>/shortcuts/*.yaml, checked against the apps,
        // the custom phrases and the board's inputs, reloaded when the folder changes.
        let inputNames = Set(board.inputs.map(\.name))
        let folder = ShortcutFolder(
            directory: (config.stateDirectory as NSString).appendingPathComponent("shortcuts"),
            logger: Logger(label: "parley.shortcuts"), off: shortcutsOff,
            environment: {
                let custom = (try? await store.customPhrases()) ?? []
                // The live registry: a shortcut may run an external app's intent.
                return ShortcutEnvironment(registry: bridge.registry, customPhrases: custom, inputNames: inputNames)
            },
            apply: { await engine.setShortcuts($0) })
        await folder.load()
        var outputs = EngineOutputs()
        outputs.led = { boardBridge.show($0) }
        let latency = LatencyProbe()
        let devices = audioDevices(config, board: board)
        logger.info("audio devices", metadata: ["capture": "\(devices.capture)", "playback": "\(devices.playback)"])
        let speaker = try makeSpeaker(config: config, playback: devices.playback, latency: latency, logger: logger)
        let appsService = AppsService(host: apps.host, off: appsOff, logger: Logger(label: "parley.apps")) {
            await bridge.installExternalApps($0)
            // Shortcuts are checked against the apps: one that runs an app
            // just installed (or removed, or turned off) loads (or is refused) now.
            await folder.load()
        }
        var services: [any Service] = [
            boardBridge, EngineTickService(engine: engine, isSpeaking: { speaker?.playback.isTalking ?? false }),
            appsService, folder,
        ]
        // The volume: stored level on the mixer control or the samples before anything plays.
        let volume = VolumeService(
            setting: VolumeSetting(store: store),
            output: volumeOutput(board: board, playback: devices.playback, speaker: speaker, logger: logger),
            playback: speaker?.playback, alarmFloor: config.voice.alarmFloor, logger: Logger(label: "parley.volume"),
            show: { hardware.showLevel($0.audibleLevel, of: Volume.levels.upperBound) })
        await volume.restore()
        await engine.setVolumeControl(volume)
        if let speaker {
            outputs.speak = { await speaker.speak($0) }
            outputs.sound = { speaker.play($0) }
            services.append(speaker)
        }
        outputs.observe = { room.observe($0) }
        let spool = try makeSpool(config: config, capture: devices.capture)
        var keepHeard: (@Sendable ([Int16], Int, String) -> Void)?
        if room.keepAudio {
            keepHeard = { @Sendable samples, rate, words in room.heard(samples: samples, sampleRate: rate, words: words) }
        }
        let listening = try makeListening(
            config: config, capture: devices.capture, playback: devices.playback, engine: engine, latency: latency,
            speaker: speaker, spool: spool,
            showFault: { boardBridge.show(.error) },
            onHeard: keepHeard, roomTransform: room.transform, logger: logger)
        if let listening {
            outputs.listening = { await listening.listen($0) }
            services.append(listening)
        }
        // Home Assistant over Wyoming (off unless configured): one allow list for both roles, then the handle service.
        let peers = HomeAssistantServices.peers(config: config, logger: Logger(label: "parley.wyoming"))
        let handle = HomeAssistantServices.handler(config: config, stores: await engine.stores, registry: { bridge.registry },
                                                   shortcuts: { folder.library }, peers: peers, logger: Logger(label: "parley.wyoming"))
        if let handle { services.append(handle.service) }
        // Home Assistant's satellite (off unless configured), fed by the listening pipeline's rejected commands.
        let satellite = HomeAssistantServices.satellite(config: config, speaker: speaker, listening: listening, peers: peers,
                                                        logger: Logger(label: "parley.wyoming"))
        if let satellite { services.append(satellite.service) }
        if config.adaptation.nightly {
            services.append(NightlyAdaptation(room: room, at: config.adaptation.nightlyAt, calendar: { localTime.calendar },
                                              logger: Logger(label: "parley.room")))
        }
        // Software updates: RAUC's slots, `parley update`, "I'm back" after the restart.
        let tools = Updater.tools()
        let updater = Updater(rauc: tools.rauc, reboot: tools.reboot, stateDirectory: config.stateDirectory,
                              logger: Logger(label: "parley.update"), say: { await speaker?.speak($0) },
                              speaking: { speaker?.playback.isTalking ?? false })
        services.append(UpdateService(updater: updater, folder: config.update.folder, url: config.update.url))
        bridge.setOutputs(outputs)
        let phrases = await bridge.grammarSize()
        logger.info("engine ready", metadata: [
            "apps": "\(registry.apps.map(\.name).joined(separator: ","))",
            "primary": "\(registry.primaryApp ?? "none")", "board": "\(board.name)",
            "phrases": "\(phrases)",
        ])
        var components = DaemonComponents(
            conversation: bridge, catalog: bridge, audio: listening ?? speaker, recogniser: listening, board: boardBridge,
            spool: spool, services: services, shortcuts: ShortcutService(folder: folder, bridge: bridge), room: room)
        components.homeAssistant = satellite?.status
        components.homeAssistantHandler = handle?.status
        components.volume = volume
        components.apps = appsService
        components.localTime = localTime
        components.speaker = speaker
        components.updater = updater
        let setSatelliteWake = satellite?.setWake
        components.applyWake = { wake in
            bridge.wake = wake.grammar
            setSatelliteWake?(wake)
            await listening?.setWake(wake)
        }
        if let capture = listening?.capture { components.microphoneLevel = { capture.status.level } }
        return components
    }

    /// How the volume reaches the speaker: the board file's mixer control on
    /// a sound card, else (no control named, it cannot be opened, or the
    /// playback is a file) Parley's own sample scaling, said once in the log.
    static func volumeOutput(board: Board, playback: AudioEndpoint, speaker: Speaker?, logger: Logger) -> VolumeService.Output {
        guard let speaker else { return .none }
        guard case .alsa = playback else { return .software(speaker.playback) }
        guard let control = board.audio.mixerControl else {
            logger.notice("volume: the board file names no audio.mixer-control; Parley scales its own samples",
                          metadata: ["board": "\(board.file)"])
            return .software(speaker.playback)
        }
        do {
            return .mixer(try ALSAMixer(card: board.audio.resolvedMixerCard, control: control))
        } catch {
            logger.error("volume: \(error) (\(board.file), audio.mixer-control); Parley scales its own samples instead")
            return .software(speaker.playback)
        }
    }

    /// The apps folder loaded (its handlers started) and the registry of the
    /// built-in apps with them. A folder that breaks a rule is refused alone
    /// (logged); should the whole set still not register, the daemon starts
    /// with the built-in apps only.
    static func externalApps(config: ParleyConfig, off: Set<String> = []) async throws -> (registry: AppRegistry, host: ExternalAppsHost) {
        let logger = Logger(label: "parley.apps")
        let folder = URL(fileURLWithPath: config.appsFolderPath)
        AppsService.prepare(directory: folder, logger: logger)
        var limits = HandlerLimits()
        limits.sandbox = config.handlerSandboxSocket(defaultSocket: SandboxWire.defaultSocket)
        if let socket = limits.sandbox {
            logger.info("apps: handlers run in the sandbox (\(socket)): user parley-app, a cgroup each with the unit's caps")
        } else {
            logger.info("apps: handlers run as the daemon's user (handler_sandbox: \(config.handlerSandbox)\(config.handlerSandbox == "auto" ? ", no \(SandboxWire.defaultSocket)" : ""))")
        }
        let host = ExternalAppsHost(directory: folder, builtIn: BundledApps.all.map(AppDescription.init), limits: limits,
                                    dataDirectory: URL(fileURLWithPath: config.resolvedPath("app-data")),
                                    primaryApp: config.primaryApp, logger: logger)
        await host.setOff(off)
        await host.refresh()
        do {
            return (try AppRegistry(apps: BundledApps.all, external: await host.descriptions, primaryApp: config.primaryApp), host)
        } catch {
            logger.error("apps: the external apps cannot be registered with the built-in ones; starting without them: \(error)")
            await host.stopAll()
            return (try AppRegistry(apps: BundledApps.all, primaryApp: config.primaryApp), host)
        }
    }

    /// Makes `speech.acoustic_model` the model of every command decoder made
    /// from now on, and `speech.wake_acoustic_model` the wake detector's. A
    /// machine without the adapted model (installed, or built in a development
    /// checkout) still listens, on the stock model, and says so in the log.
    static func useAcousticModel(_ config: ParleyConfig, logger: Logger) {
        AcousticModel.configuredDefault = acousticModel(config.acousticModel, key: "speech.acoustic_model", logger: logger)
        AcousticModel.configuredWakeDefault = acousticModel(
            config.wakeAcousticModel, key: "speech.wake_acoustic_model", logger: logger)
    }

    private static func acousticModel(_ value: String, key: String, logger: Logger) -> AcousticModel {
        do {
            let model = try AcousticModel(parsing: value)
            if model == .adapted && !AcousticModel.adaptedIsAvailable {
                logger.warning("\(key): adapted acoustic model not found; listening with the stock model", metadata: [
                    "looked_in": "\(AcousticModel.installedAdaptedFolder), \(AcousticModel.developmentAdaptedFolder)",
                    "build_it": "scripts/shipped-model.sh",
                ])
            }
            logger.info("acoustic model", metadata: ["key": "\(key)", "folder": "\(model.folder)"])
            return model
        } catch {
            // The loader checked it; a folder removed since then falls back too.
            logger.error("\(key): \(error); listening with the stock model")
            return .stock
        }
    }

    /// The devices sound goes through: those parley.yaml names, else the
    /// board file's ALSA devices; a simulated board has no sound card, so
    /// there the files stand in (the development default).
    static func audioDevices(_ config: ParleyConfig, board: Board) -> (capture: AudioEndpoint, playback: AudioEndpoint) {
        let simulated = board.kind == .simulated
        return (
            config.audio.capture ?? (simulated ? ParleyConfig.Audio.simulatedCapture : .alsa(board.audio.capture)),
            config.audio.playback ?? (simulated ? ParleyConfig.Audio.simulatedPlayback : .alsa(board.audio.playback))
        )
    }

    /// Speech out: an ALSA device, or a WAV file the file plugin writes.
    static func makeSpeaker(config: ParleyConfig, playback: AudioEndpoint, latency: LatencyProbe, logger: Logger) throws
        -> Speaker?
    {
        let device: PCMDevice
        var format = PCMFormat(sampleRate: 48_000, channels: 2, periodFrames: 480, bufferFrames: 1_920)
        switch playback {
        case .alsa(let name):
            device = PCMDevice(name: name)
        case .file(let path):
            device = FileAudioDevice.playback(output: URL(fileURLWithPath: config.resolvedPath(path)))
            format = PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 160, bufferFrames: 1_280)
        case .spool(let path):
            // The configuration loader refuses this; a configuration built in code may not.
            throw AudioError.badFile(path: path, reason: "spool: is a capture source, not a playback device")
        }
        let pacing: Pacing = if case .file = playback { .realTime } else { .device }
        var playbackConfiguration = PlaybackConfiguration(device: device, format: format, pacing: pacing)
        // What is played is the echo canceller's reference (connected to the
        // capture clock when listening is made).
        if config.echoCancel.isActive { playbackConfiguration.echoReference = EchoReference() }
        let playback = try PlaybackService(configuration: playbackConfiguration, logger: Logger(label: "parley.audio"))
        return try Speaker(playback: playback, voice: config.voice, latency: latency, logger: Logger(label: "parley.speaker"))
    }

    /// The stand-in microphone of a `spool:` capture (created if missing).
    static func makeSpool(config: ParleyConfig, capture: AudioEndpoint) throws -> AudioSpool? {
        guard case .spool(let path) = capture else { return nil }
        return try AudioSpool(url: URL(fileURLWithPath: config.resolvedPath(path)), empty: true)
    }

    /// Audio in: an ALSA device, a spool WAV files are played into, or a WAV
    /// file read once as the microphone (file mode; without the file there
    /// is no audio in, and `parley say` still works).
    static func makeListening(
        config: ParleyConfig, capture device: AudioEndpoint, playback: AudioEndpoint, engine: ConversationEngine,
        latency: LatencyProbe, speaker: Speaker?, spool: AudioSpool?, showFault: @escaping @Sendable () -> Void = {},
        onHeard: (@Sendable ([Int16], Int, String) -> Void)? = nil, roomTransform: RoomTransform.Slot? = nil, logger: Logger
    ) throws
        -> ListeningPipeline?
    {
        let capture: CaptureConfiguration
        switch device {
        case .alsa(let name):
            let format = config.audio.captureFormat
            capture = CaptureConfiguration(
                device: PCMDevice(name: name),
                format: PCMFormat(sampleRate: format.rate, channels: format.channels, periodFrames: format.periodFrames,
                                  bufferFrames: format.bufferFrames),
                outputSampleRate: config.audio.sampleRate,
                realtimePriority: config.audio.realtimePriority > 0 ? Int32(config.audio.realtimePriority) : nil)
        case .spool:
            guard let spool else { return nil }
            capture = spool.captureConfiguration
        case .file(let path):
            let wav = URL(fileURLWithPath: config.resolvedPath(path))
            guard FileManager.default.fileExists(atPath: wav.path) else {
                logger.warning("no audio in: capture file missing (use `parley say`)", metadata: ["file": "\(wav.path)"])
                return nil
            }
            var file = try CaptureConfiguration.file(
                wav: wav, workDirectory: URL(fileURLWithPath: config.stateDirectory),
                pacing: config.audio.pacing == .fast ? .device : .realTime)
            if config.audio.pacing == .fast, let frames = file.inputFrameLimit {
                // Read as fast as possible, the file runs ahead of the
                // recogniser, which must never find its audio overwritten:
                // the ring holds the whole file.
                file.ringSeconds = max(file.ringSeconds, Double(frames) / Double(file.format.sampleRate) + 1)
            }
            capture = file
        }
        let service = try CaptureService(configuration: capture, logger: Logger(label: "parley.audio"))
        let reference = speaker?.playback.configuration.echoReference
        reference?.connect(service)
        return ListeningPipeline(
            capture: service,
            engine: engine, wake: config.wake, endpointSilence: config.audio.endpointSilence,
            completePhraseSilence: config.audio.completePhraseSilence,
            playbackName: playback.description, latency: latency,
            isSpeaking: { speaker?.playback.isTalking ?? false }, saying: { speaker?.saying ?? [] },
            interruptSpeech: { speaker?.interrupt() },
            showFault: showFault, logger: Logger(label: "parley.listen"), onHeard: onHeard, frontEnd: config.effectiveFrontEnd,
            echo: reference.map { (config.echoCancel, $0) }, askRule: config.askUnsure ? AskRule() : nil,
            roomTransform: roomTransform, releasesStartupPages: true)
    }

    /// The engine's settings from parley.yaml, the board file and whether the
    /// opened board's button can be read.
    static func engineConfiguration(_ config: ParleyConfig, board: Board, buttonAvailable: Bool = true) -> EngineConfiguration {
        var engine = EngineConfiguration(
            voiceConfirmableCategories: Set(config.voiceConfirmableCategories.compactMap(IntentCategory.init(rawValue:))))
        engine.answerTimeout = seconds(config.timeouts.answer)
        engine.confirmationTimeout = seconds(config.timeouts.confirmation)
        engine.performTimeLimit = seconds(config.timeouts.perform)
        engine.tipsEnabled = config.tips
        // The loader checked the name against the system's zones.
        if let name = config.timeZone, let zone = TimeZone(identifier: name) { engine.calendar.timeZone = zone }
        engine.suggestsOnIdlePress = board.button.whenIdle == .suggestion
        engine.buttonAvailable = buttonAvailable
        switch board.button.doublePress {
        case .none: engine.doublePress = .nothing
        case .repeatLast: engine.doublePress = .repeatLast
        case .listShortcuts: engine.doublePress = .listShortcuts
        case .runShortcut(let name): engine.doublePress = .run(phrase: name)
        }
        return engine
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

import Foundation
import Logging
import ParleyApps
import ParleyCore
import ParleyHardware
import ParleyIntents
import ParleyStore

/// Builds the components parleyd runs with from the configuration: the
/// single place where the engine, board, audio and speech are plugged in
/// (see ``DaemonComponents``).
public enum Wiring {
    public static func components(config: ParleyConfig, store: StateStore, logger: Logger) async throws
        -> DaemonComponents
    {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: config.primaryApp)
        let bridge = EngineBridge(registry: registry, wakeName: config.wake.name, logger: Logger(label: "parley.engine"))
        let board = try Board.load(from: BoardLocator.locate(config.board))
        let engine = ConversationEngine(
            registry: registry,
            stores: ParleyStores(donations: store, customPhrases: store, appData: store),
            clock: SystemClock(), sink: bridge, configuration: engineConfiguration(config, board: board))
        bridge.attach(engine)
        await engine.reloadPhrases()

        let hardware = board.open(logger: Logger(label: "parley.board"))
        let boardBridge = BoardBridge(hardware: hardware, engine: engine, logger: Logger(label: "parley.board"))
        var outputs = EngineOutputs()
        outputs.led = { boardBridge.show($0) }
        bridge.setOutputs(outputs)
        let phrases = await bridge.grammarSize()
        logger.info("engine ready", metadata: [
            "apps": "\(registry.apps.map(\.name).joined(separator: ","))",
            "primary": "\(registry.primaryApp ?? "none")", "board": "\(board.name)",
            "phrases": "\(phrases)",
        ])
        return DaemonComponents(
            conversation: bridge, catalog: bridge, board: boardBridge,
            services: [boardBridge, EngineTickService(engine: engine)])
    }

    /// The engine's settings from parley.yaml and the board file.
    static func engineConfiguration(_ config: ParleyConfig, board: Board) -> EngineConfiguration {
        var engine = EngineConfiguration(
            voiceConfirmableCategories: Set(config.voiceConfirmableCategories.compactMap(IntentCategory.init(rawValue:))))
        engine.answerTimeout = seconds(config.timeouts.answer)
        engine.confirmationTimeout = seconds(config.timeouts.confirmation)
        engine.tipsEnabled = config.tips
        switch board.button.doublePress {
        case .none: engine.doublePressPhrase = nil
        case .repeatLast: engine.doublePressPhrase = "repeat"
        case .listShortcuts: engine.doublePressPhrase = "what can i say"
        case .runShortcut(let name): engine.doublePressPhrase = name
        }
        return engine
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

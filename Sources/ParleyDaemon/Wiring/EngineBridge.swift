import Foundation
import ParleyControl
import ServiceLifecycle
import Logging
import ParleyCore
import ParleyIntents
import ParleySpeech
import Synchronization

/// Where the engine's events go besides the bridge's own bookkeeping: the
/// speaker, the LEDs, the recogniser. Each is optional (not wired yet, or a
/// machine without it).
public struct EngineOutputs: Sendable {
    /// Speaks a line (espeak-ng to the playback device); returns when queued.
    public var speak: (@Sendable (String) async -> Void)?
    /// Plays a sound (a chime, the wake tone).
    public var sound: (@Sendable (EngineSound) async -> Void)?
    /// Shows a state on the LEDs.
    public var led: (@Sendable (ParleyCore.DeviceState) -> Void)?
    /// Switches the recogniser between commands and follow-up answers.
    public var listening: (@Sendable (ListeningMode) async -> Void)?
    /// Sees every event first (room adaptation keeps confirmed audio).
    public var observe: (@Sendable (EngineEvent) -> Void)?

    public init() {}
}

/// The conversation engine plugged into the daemon: the control socket's
/// `say`, `press`, `apps`, `shortcuts` and phrases go through it, and its
/// events fan out to speaker, LEDs and recogniser.
public final class EngineBridge: ConversationPort, CatalogPort, EngineOutputSink {
    /// What the engine said and logged while handling one `say` request.
    private struct Reply {
        var spoken: [String] = []
        /// The engine's log lines meanwhile (why nothing was said).
        var notes: [String] = []
    }

    /// The control request whose utterance the current task is handling.
    /// The engine is called on the request's own task, so every event it
    /// emits for that utterance carries the request; voice input and other
    /// clients' requests run on other tasks and never mix in.
    @TaskLocal static var request: UInt64?

    private struct State {
        var outputs = EngineOutputs()
        /// Replies of the `say` requests being handled, by request.
        var replies: [UInt64: Reply] = [:]
        var lastRequest: UInt64 = 0
        var lastIntents: [String] = []
        var led: ParleyCore.DeviceState = .idle
    }

    private let state = Mutex(State())
    private let engineBox = Mutex<ConversationEngine?>(nil)
    private let registryBox: Mutex<AppRegistry>
    /// The installed apps (external ones change while the daemon runs).
    public var registry: AppRegistry { registryBox.withLock { $0 } }
    private let wakeBox: Mutex<WakeGrammar>
    /// Strips the wake words off `parley say` text (changed with the page's wake word).
    public var wake: WakeGrammar {
        get { wakeBox.withLock { $0 } }
        set { wakeBox.withLock { $0 = newValue } }
    }
    private let logger: Logger

    public init(registry: AppRegistry, wake: WakeGrammar, logger: Logger) {
        registryBox = Mutex(registry)
        wakeBox = Mutex(wake)
        self.logger = logger
    }

    /// The engine, created with this bridge as its sink (two-step because
    /// the engine needs the sink at creation).
    public var engine: ConversationEngine {
        guard let engine = engineBox.withLock({ $0 }) else { preconditionFailure("EngineBridge.attach was not called") }
        return engine
    }

    public func attach(_ engine: ConversationEngine) {
        engineBox.withLock { $0 = engine }
    }

    public func setOutputs(_ outputs: EngineOutputs) {
        state.withLock { $0.outputs = outputs }
    }

    // MARK: EngineOutputSink

    public func emit(_ event: EngineEvent) async {
        let outputs = state.withLock { $0.outputs }
        outputs.observe?(event)
        switch event {
        case .spoke(let text):
            if let request = Self.request { state.withLock { $0.replies[request]?.spoken.append(text) } }
            logger.info("spoke", metadata: ["text": "\(text)"])
            await outputs.speak?(text)
        case .led(let led):
            state.withLock { $0.led = led }
            logger.debug("led", metadata: ["state": "\(led.rawValue)"])
            outputs.led?(led)
        case .performed(let performed):
            let name = "\(performed.app)/\(performed.intent)"
            state.withLock { s in
                s.lastIntents.insert(name, at: 0)
                if s.lastIntents.count > 5 { s.lastIntents.removeLast() }
            }
            let parameters = performed.parameters.keys.sorted().map { "\($0)=\(performed.parameters[$0]!)" }
            logger.notice("performed", metadata: [
                "intent": "\(name)", "parameters": "\(parameters.joined(separator: " "))",
                "trigger": "\(performed.trigger)",
            ])
        case .sound(let name):
            await outputs.sound?(name)
        case .listening(let mode):
            await outputs.listening?(mode)
        case .log(let message):
            if let request = Self.request { state.withLock { $0.replies[request]?.notes.append(message) } }
            logger.info("\(message)")
        }
    }

    // MARK: ConversationPort

    /// Handles a `parley say` line; the reply holds what the device said
    /// in answer to this line only, whatever other clients or the
    /// microphone say meanwhile.
    public func hear(_ text: String) async throws -> HeardText {
        let request = state.withLock { s in
            s.lastRequest += 1
            s.replies[s.lastRequest] = Reply()
            return s.lastRequest
        }
        await Self.$request.withValue(request) { await engine.hear(withoutWake(text)) }
        let reply = state.withLock { $0.replies.removeValue(forKey: request) } ?? Reply()
        return HeardText(spoken: reply.spoken, note: reply.spoken.isEmpty ? reply.notes.last : nil)
    }

    /// "hey, coffee time" / "hey computer, coffee time" → "coffee time":
    /// `parley say` text is handled as what follows the wake word.
    func withoutWake(_ text: String) -> String { wake.strip(text: text) }

    public func press(_ press: ButtonPress) async throws {
        await engine.button(Self.gesture(press))
    }

    /// `parley shortcuts run NAME`: the shortcut runs as if its phrase was
    /// said; the reply holds what the device said up to its first wait.
    /// Nil when there is no such shortcut or a conversation is open.
    public func runShortcut(_ name: String) async -> HeardText? {
        let request = state.withLock { s in
            s.lastRequest += 1
            s.replies[s.lastRequest] = Reply()
            return s.lastRequest
        }
        let started = await Self.$request.withValue(request) { await engine.runShortcut(named: name, trigger: .shortcut) }
        let reply = state.withLock { $0.replies.removeValue(forKey: request) } ?? Reply()
        return started ? HeardText(spoken: reply.spoken) : nil
    }

    static func gesture(_ press: ButtonPress) -> ParleyCore.ButtonGesture {
        switch press {
        case .short: .press
        case .long: .longPress
        case .double: .doublePress
        }
    }

    public func stateDescription() async -> String {
        let open = await engine.isConversationOpen
        let led = state.withLock { $0.led }
        return open && led == .idle ? "conversation open" : led.rawValue
    }

    public func lastIntents() async -> [String] { state.withLock { $0.lastIntents } }

    public func cancelAll() async {
        if await engine.isConversationOpen { await engine.button(.longPress) }
    }

    // MARK: CatalogPort

    public func apps() async -> [AppSummary] {
        let registry = self.registry
        return registry.apps.map { app in
            AppSummary(
                name: app.name, synonyms: app.synonyms, intents: app.intents.map { $0.identifier },
                primary: registry.primaryApp == app.identifier, identifier: app.identifier, external: app.isExternal)
        }
    }

    public func shortcuts() async -> [ParleyControl.ShortcutSummary] {
        var result: [ParleyControl.ShortcutSummary] = []
        for app in registry.apps {
            for shortcut in app.shortcuts {
                for phrase in shortcut.phrases {
                    let spoken = phrase.replacingOccurrences(of: "{app}", with: app.name)
                    result.append(ParleyControl.ShortcutSummary(phrase: spoken, app: app.name, intent: shortcut.intent.identifier))
                }
            }
        }
        for custom in (try? await engine.stores.customPhrases.customPhrases()) ?? [] {
            result.append(ParleyControl.ShortcutSummary(phrase: custom.phrase, app: custom.app, intent: custom.intent))
        }
        return result
    }

    public func addPhrase(_ phrase: CustomPhrase) async throws {
        try await engine.addCustomPhrase(phrase.phrase, app: phrase.app, intent: phrase.intent, parameters: phrase.parameters)
        await refreshRecogniser()
    }

    /// A phrase added or deleted is recognisable at once: the recogniser
    /// gets the new command grammar (it also does after every conversation).
    /// The external apps changed (an app folder added, changed or removed):
    /// the engine gets the new registry and recompiles its phrases, and the
    /// recogniser's grammar is rebuilt, so the new phrases are recognisable
    /// at once. A set that cannot be registered keeps the previous apps.
    public func installExternalApps(_ external: [AppDescription]) async {
        let next: AppRegistry
        do {
            next = try registry.replacingExternal(external)
        } catch {
            logger.error("apps: the new set of external apps cannot be registered; keeping the previous one: \(error)")
            return
        }
        await engine.setRegistry(next)
        // Listed once its phrases are heard.
        registryBox.withLock { $0 = next }
        await refreshRecogniser()
        logger.notice("apps: \(next.apps.count) apps installed", metadata: ["external": "\(next.externalApps.map(\.identifier).joined(separator: ","))"])
    }

    private func refreshRecogniser() async {
        let outputs = state.withLock { $0.outputs }
        if await engine.isConversationOpen == false { await outputs.listening?(.commands) }
    }

    public func deletePhrase(_ phrase: String) async throws -> Bool {
        let deleted = try await engine.stores.customPhrases.deletePhrase(phrase)
        if deleted {
            await engine.reloadPhrases()
            await refreshRecogniser()
        }
        return deleted
    }

    /// Phrases in the current command model (for `parley status`).
    public func grammarSize() async -> Int {
        await engine.phraseModel().rules.count
    }
}

/// Moves the engine's clock-driven work (answer time-outs, confirmation
/// windows, timers) along: `tick()` every `interval` until shutdown.
/// `isSpeaking` tells it when the device's voice is playing, so answer
/// windows start once a question has been heard (see `tick(deviceSpeaking:)`).
public struct EngineTickService: Service {
    let engine: ConversationEngine
    let interval: Duration
    let isSpeaking: @Sendable () -> Bool

    public init(engine: ConversationEngine, interval: Duration = .milliseconds(200),
                isSpeaking: @escaping @Sendable () -> Bool = { false }) {
        self.engine = engine
        self.interval = interval
        self.isSpeaking = isSpeaking
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await Task.sleep(for: interval)
            await engine.tick(deviceSpeaking: isSpeaking())
        }
    }
}

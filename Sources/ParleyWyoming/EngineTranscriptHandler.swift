import Foundation
import ParleyCore
import Synchronization

/// Role 2: a transcript from another satellite of the house, run by an
/// engine of its own (the device's conversation is never disturbed) over
/// the same apps and stores, so a person's apps and custom phrases work
/// from every satellite. What Parley would say is the answer text.
///
/// Refused, with the reason as the spoken text: anything waiting for a press
/// of the button (spending stays on the device, with the button), and a
/// command that needs a question answered (a Wyoming handler answers once),
/// and the volume phrases (they would set this speaker's level from another
/// satellite, whose own volume Parley does not reach).
public actor EngineTranscriptHandler: WyomingTranscriptHandling {
    private let engine: ConversationEngine
    private let sink: CollectingSink
    private let registry: @Sendable () async -> AppRegistry
    private let shortcuts: @Sendable () async -> ShortcutLibrary?

    public static let confirmationRefusal =
        "That needs a press of the button on the Parley speaker, so it can only be done there."
    public static let volumeRefusal =
        "Parley sets the volume of its own speaker only; say it to the Parley speaker."

    /// `registry` and `shortcuts` (a person's shortcut files, nil: none) are
    /// asked before each transcript, so apps and shortcuts added since are known.
    public init(stores: ParleyStores, clock: any ParleyClock, registry: @escaping @Sendable () async -> AppRegistry,
                initial: AppRegistry, shortcuts: @escaping @Sendable () async -> ShortcutLibrary? = { nil }) {
        self.shortcuts = shortcuts
        let sink = CollectingSink()
        var configuration = EngineConfiguration()
        // Only a press confirms, whatever the device allows by voice: the person is not at the device.
        configuration.voiceConfirmableCategories = []
        configuration.tipsEnabled = false
        self.sink = sink
        self.registry = registry
        engine = ConversationEngine(registry: initial, stores: stores, clock: clock, sink: sink, configuration: configuration)
    }

    public func handle(transcript: String) async -> WyomingHandleOutcome {
        let current = await registry()
        if await engine.registry.apps.map(\.name) != current.apps.map(\.name) { await engine.setRegistry(current) }
        if let library = await shortcuts() {
            await engine.setShortcuts(library)  // recompiles the phrases, custom ones included
        } else if await engine.phraseModel().rules.isEmpty {
            await engine.reloadPhrases()
        }
        if case .builtin(let builtin)? = await engine.resolveWithoutRunning(transcript)?.target, builtin.isVolume {
            return .notHandled(Self.volumeRefusal)
        }
        sink.take()
        await engine.hear(transcript)
        let events = sink.take()
        let spoken = events.compactMap { if case .spoke(let line) = $0 { line } else { nil } }
        let performed = events.contains { if case .performed = $0 { true } else { false } }
        if !performed, await engine.isConversationOpen {
            let waitsForPress = events.contains(.led(.awaitingConfirmation))
            await engine.hear("cancel")
            sink.take()
            if waitsForPress { return .notHandled(Self.confirmationRefusal) }
            let question = spoken.last ?? ""
            return .notHandled("\(question) Parley asks that only on the speaker itself; say the whole command in one sentence.")
        }
        if await engine.isConversationOpen {
            await engine.hear("cancel")
            sink.take()
        }
        let resolved = events.contains(.led(.thinking))
        guard performed || resolved else { return .notHandled("Parley does not know that one.") }
        return .handled(spoken.joined(separator: " "))
    }
}

/// Keeps the engine's events until taken.
final class CollectingSink: EngineOutputSink, Sendable {
    private let events = Mutex<[EngineEvent]>([])

    func emit(_ event: EngineEvent) async {
        events.withLock { $0.append(event) }
    }

    @discardableResult
    func take() -> [EngineEvent] {
        events.withLock { events in
            defer { events = [] }
            return events
        }
    }
}

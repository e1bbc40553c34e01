import Foundation
import Logging
import ParleyCore
import Synchronization

/// Records the engine's events for assertions.
public actor RecordingSink: EngineOutputSink {
    public private(set) var events: [EngineEvent] = []
    private var holds: [(event: EngineEvent, gate: Gate)] = []
    public init() {}
    public func emit(_ event: EngineEvent) async {
        events.append(event)
        if let index = holds.firstIndex(where: { $0.event == event }) { await holds.remove(at: index).gate.wait() }
    }

    /// The next emit of `event` waits at the returned gate until the test
    /// opens it: the engine is suspended there, as on a slow output, and
    /// whatever else reaches the actor meanwhile runs.
    public func hold(_ event: EngineEvent) -> Gate {
        let gate = Gate()
        holds.append((event, gate))
        return gate
    }

    /// Spoken lines so far.
    public var spoken: [String] { events.compactMap { if case .spoke(let s) = $0 { s } else { nil } } }
    public var leds: [DeviceState] { events.compactMap { if case .led(let s) = $0 { s } else { nil } } }
    public var performed: [PerformedIntent] { events.compactMap { if case .performed(let p) = $0 { p } else { nil } } }
    /// Sounds played so far, by name ("chime").
    public var sounds: [String] { events.compactMap { if case .sound(let s) = $0 { s.rawValue } else { nil } } }
    /// Removes and returns the events since the last call.
    public func drain() -> [EngineEvent] { defer { events = [] }; return events }
}

/// Donations in memory, for tests: the console's in-memory store plus failure
/// injection (`setFailWrites(true)` makes recording throw) and a look at the
/// rows in the order they were recorded.
public actor InMemoryDonationStore: DonationStore {
    private let store: EphemeralDonationStore
    public private(set) var failWrites = false
    public init(_ rows: [Donation] = []) { store = EphemeralDonationStore(rows) }
    public func setFailWrites(_ fail: Bool) { failWrites = fail }

    /// Every donation, oldest first.
    public var rows: [Donation] {
        get async { (try? await store.donations(app: nil, intent: nil, limit: nil).reversed()) ?? [] }
    }

    public func record(_ donation: Donation) async throws -> Int64 {
        struct WriteFailed: Error {}
        if failWrites { throw WriteFailed() }
        return try await store.record(donation)
    }
    public func donations(app: String?, intent: String?, limit: Int?) async throws -> [Donation] {
        try await store.donations(app: app, intent: intent, limit: limit)
    }
    public func delete(_ scope: DonationScope) async throws -> Int { try await store.delete(scope) }
}

/// The console's in-memory stores serve tests as they are; the names say
/// what a test wants.
public typealias InMemoryCustomPhraseStore = EphemeralCustomPhraseStore
public typealias InMemoryAppDataStore = EphemeralAppDataStore

/// An engine wired to fakes: a manual clock, a recording sink, in-memory stores.
public struct EngineHarness: Sendable {
    public let engine: ConversationEngine
    public let clock: ManualClock
    public let sink: RecordingSink
    public let donations: InMemoryDonationStore
    public let appData: InMemoryAppDataStore
    public let customPhrases = InMemoryCustomPhraseStore()

    public init(apps: [any ParleyApp], external: [AppDescription] = [], primaryApp: String? = nil,
                configuration: EngineConfiguration = EngineConfiguration(),
                donations: [Donation] = [], clock: ManualClock = ManualClock()) throws {
        self.clock = clock
        sink = RecordingSink()
        self.donations = InMemoryDonationStore(donations)
        appData = InMemoryAppDataStore()
        let stores = ParleyStores(donations: self.donations, customPhrases: customPhrases, appData: appData)
        engine = ConversationEngine(registry: try AppRegistry(apps: apps, external: external, primaryApp: primaryApp), stores: stores,
                                    clock: clock, sink: sink, configuration: configuration)
    }

    /// Says a line and returns what the device said in reply.
    @discardableResult
    public func say(_ text: String) async -> [String] {
        _ = await sink.drain()
        await engine.hear(text)
        return await spokenSinceDrain()
    }

    /// Says a line the recogniser accepted with low confidence (`AskRule`),
    /// `doubted` the words it is unsure of, and returns what the device said in reply.
    @discardableResult
    public func sayUnsure(_ text: String, doubted: [String] = []) async -> [String] {
        _ = await sink.drain()
        await engine.hear(text, unsure: true, doubted: doubted)
        return await spokenSinceDrain()
    }

    /// Presses the button and returns what the device said.
    @discardableResult
    public func press(_ gesture: ButtonGesture = .press) async -> [String] {
        _ = await sink.drain()
        await engine.button(gesture)
        return await spokenSinceDrain()
    }

    /// Advances the clock, lets the engine react, returns what it said.
    @discardableResult
    public func wait(_ seconds: TimeInterval, deviceSpeaking: Bool = false) async -> [String] {
        _ = await sink.drain()
        clock.advance(by: seconds)
        await engine.tick(deviceSpeaking: deviceSpeaking)
        return await spokenSinceDrain()
    }

    /// Sets the wall clock alone forwards or backwards (NTP after boot), lets
    /// the engine react, returns what it said.
    @discardableResult
    public func jumpWallClock(by seconds: TimeInterval) async -> [String] {
        _ = await sink.drain()
        clock.jumpWallClock(by: seconds)
        await engine.tick()
        return await spokenSinceDrain()
    }

    private func spokenSinceDrain() async -> [String] { await sink.spoken }
}

/// A swift-log handler that keeps every message, for asserting what was
/// logged and at which level. Share one `RecordingLogHandler.Store` between
/// the loggers a test creates.
public struct RecordingLogHandler: LogHandler {
    public struct Entry: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    public final class Store: Sendable {
        private let entries = Mutex<[Entry]>([])
        public init() {}
        public var all: [Entry] { entries.withLock { $0 } }
        func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    }

    public let store: Store
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]

    public init(store: Store) { self.store = store }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        store.append(Entry(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
    }
}

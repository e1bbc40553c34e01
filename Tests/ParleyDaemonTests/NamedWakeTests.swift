import Foundation
import Logging
import ParleyConfiguration
import ParleySpeech
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// Which detector named mode listens with (`wake.detector`): the name's
/// keyword network, PocketSphinx when asked, when the name has none, or when
/// its file cannot be read (logged with the file and the problem; the
/// device stays wakeable).
@Suite struct NamedWakeTests {
    static func wake(_ name: String = "computer", detector: ParleyConfig.WakeDetectorKind = .network) -> ParleyConfig.Wake {
        var wake = ParleyConfig.Wake()
        wake.name = name
        wake.detector = detector
        return wake
    }

    static func logged(_ store: RecordingLogHandler.Store) -> Logger {
        Logger(label: "test") { _ in RecordingLogHandler(store: store) }
    }

    @Test func theEmbeddingHeadByDefaultBehindTheNetwork() throws {
        let store = RecordingLogHandler.Store()
        let head = try #require(try ListeningDecoders.namedWake(ParleyConfig.Wake(), logger: Self.logged(store)) as? EmbeddingWakeUtterance)
        #expect(head.firstStage != nil, "the name's keyword network wakes the embedding")
        #expect(store.all.isEmpty)
    }

    @Test func theNetworkAndPocketSphinxWhenAsked() throws {
        let store = RecordingLogHandler.Store()
        let network = try ListeningDecoders.namedWake(Self.wake(), logger: Self.logged(store))
        #expect(network is KeywordWakeUtterance)
        #expect(network.leadInSamples == 8_000 && !network.unproposedMayBeCommands)
        let sphinx = try ListeningDecoders.namedWake(Self.wake(detector: .pocketsphinx), logger: Self.logged(store))
        #expect(sphinx is WakeUtterance)
        #expect(sphinx.leadInSamples == 0 && sphinx.unproposedMayBeCommands)
        #expect(store.all.isEmpty)
    }

    @Test func aNameWithoutANetworkIsHeardByPocketSphinx() throws {
        let store = RecordingLogHandler.Store()
        let detector = try ListeningDecoders.namedWake(Self.wake("jarvis"), logger: Self.logged(store))
        #expect(detector is WakeUtterance)
        #expect(store.all.map(\.level) == [.warning] && store.all.first?.metadata["name"] == "jarvis")
    }

    @Test func anUnreadableNetworkIsLoggedAndPocketSphinxListens() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let broken = dir.file("computer.json")
        try Data("{\"word\": \"computer\", \"threshold\": ".utf8).write(to: URL(fileURLWithPath: broken))
        let store = RecordingLogHandler.Store()
        let detector = try ListeningDecoders.namedWake(Self.wake(), logger: Self.logged(store)) { _ in broken }
        #expect(detector is WakeUtterance)
        let entry = try #require(store.all.first)
        #expect(entry.level == .error && entry.message.contains(broken) && entry.message.contains("kws.py"))
    }

    @Test func theEmbeddingHeadWhenAskedAndTheNetworkWhenItCannotLoad() throws {
        let store = RecordingLogHandler.Store()
        let head = try ListeningDecoders.namedWake(Self.wake(detector: .embedding), logger: Self.logged(store))
        #expect(head is EmbeddingWakeUtterance)
        #expect(head.leadInSamples == 32_000 && !head.unproposedMayBeCommands && !head.hearsHey)
        #expect(store.all.isEmpty)

        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let broken = dir.file("computer.embedding.json")
        try Data("{\"kind\": \"speech-embedding-head\", ".utf8).write(to: URL(fileURLWithPath: broken))
        let fallback = try ListeningDecoders.namedWake(Self.wake(detector: .embedding), logger: Self.logged(store),
                                                       headPath: { _ in broken })
        #expect(fallback is KeywordWakeUtterance)
        let entry = try #require(store.all.first)
        #expect(entry.level == .error && entry.message.contains(broken))
    }

    @Test func aNameWithoutAHeadIsHeardByItsNetworkOrPocketSphinx() throws {
        let store = RecordingLogHandler.Store()
        let detector = try ListeningDecoders.namedWake(Self.wake("jarvis", detector: .embedding), logger: Self.logged(store))
        #expect(detector is WakeUtterance)
        #expect(store.all.map(\.level) == [.warning, .warning])
    }

    @Test func theHeyGateWrapsTheNamesDetectorOnlyWhenAskedAndWhenItsHeadLoads() throws {
        let store = RecordingLogHandler.Store()
        var wake = ParleyConfig.Wake()
        #expect(wake.heyGate, "on by default: a hey its head misses is decoded at the utterance's end")
        let named = try ListeningDecoders.namedWake(wake, logger: Self.logged(store))
        wake.heyGate = false
        #expect(try ListeningDecoders.heyGated(named, wake, logger: Self.logged(store)) === named)
        wake.heyGate = true
        let gated = try #require(try ListeningDecoders.heyGated(named, wake, logger: Self.logged(store)) as? HeyGatedWake)
        #expect(gated.name === named && gated.gatesDirectCommands)
        // The hey head streams the name's speech_embedding models, not a second copy read from disk.
        let nameModels = try #require(named as? EmbeddingWakeUtterance).spotter.weights
        #expect(gated.hey.weights.mel.withUnsafeBufferPointer { $0.baseAddress }
            == nameModels.mel.withUnsafeBufferPointer { $0.baseAddress })
        wake.named = false
        let directOnly = try #require(try ListeningDecoders.heyGated(nil, wake, logger: Self.logged(store)) as? HeyGatedWake)
        #expect(directOnly.name == nil && !directOnly.finish())
        #expect(directOnly.hey.weights.mel.withUnsafeBufferPointer { $0.baseAddress }
            != nameModels.mel.withUnsafeBufferPointer { $0.baseAddress }, "without the name's head it reads its own")
        #expect(store.all.isEmpty)
        let missing = try ListeningDecoders.heyGated(named, wake, logger: Self.logged(store), headPath: { _ in nil })
        #expect(missing === named)
        #expect(store.all.map(\.level) == [.warning])
        wake.direct = false
        #expect(try ListeningDecoders.heyGated(named, wake, logger: Self.logged(store)) === named, "named mode alone: no direct commands to gate")
        // The gate keeps the name's detector's word on unproposed names:
        // PocketSphinx's misses some the command grammar still hears.
        wake.direct = true
        #expect(!gated.unproposedMayBeCommands && !directOnly.unproposedMayBeCommands)
        let sphinx = try ListeningDecoders.namedWake(Self.wake(detector: .pocketsphinx), logger: Self.logged(store))
        let gatedSphinx = try #require(try ListeningDecoders.heyGated(sphinx, wake, logger: Self.logged(store)) as? HeyGatedWake)
        #expect(gatedSphinx.unproposedMayBeCommands && gatedSphinx.unopenedAtEnd == .decodedWhenShort)
    }
}

import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleyRoom
import ParleySpeech
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The daemon's side of room adaptation: which audio is kept, when, and
/// that forgetting the history takes it and the transform with it.
@Suite(.serialized) struct RoomLearningTests {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("parley-room-state-\(UUID().uuidString)")

    func room(keep: Bool, limit: Int = 200, frontEnd: FrontEndSettings = .none) -> RoomLearning {
        var config = ParleyConfig()
        config.stateDirectory = state.path
        config.adaptation.keepAudio = keep
        config.adaptation.maxRecordings = limit
        config.frontEndIsAuto = false
        config.frontEnd = frontEnd
        return RoomLearning(config: config, model: Self.model, logger: Logger(label: "test"))
    }

    /// A model folder no decoder uses: the transforms these tests put in use
    /// must not reach the decoders of suites running beside them.
    static let model = FileManager.default.temporaryDirectory.appendingPathComponent("parley-room-test-model").path

    /// A room with one confirmed conversation kept.
    func roomWithOneKept() async throws -> RoomLearning {
        let room = room(keep: true)
        room.heard(samples: speech, sampleRate: 16_000, words: "hey order a latte")
        room.observe(performed(confirmed: true))
        _ = try await kept(room, count: 1)
        return room
    }

    /// A transform as `parley adapt` leaves it, estimated on `model` (and,
    /// when given, audio through `frontEnd`: files written before the front
    /// end was recorded have the model's line alone).
    func writeTransform(_ room: RoomLearning, madeFor model: String, frontEnd: String? = nil) throws {
        try FileManager.default.createDirectory(at: room.transformFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try RoomTransform.identityText(streamLengths: [13, 13, 13]).write(to: room.transformFile, atomically: true, encoding: .utf8)
        try (model + "\n" + (frontEnd.map { $0 + "\n" } ?? "")).write(to: room.modelFile, atomically: true, encoding: .utf8)
    }

    func performed(confirmed: Bool) -> EngineEvent {
        .performed(PerformedIntent(app: "CoffeeMaker", intent: "OrderDrink", parameters: [:], output: [:], trigger: "voice",
                                   confirmedWithButton: confirmed))
    }

    let speech = [Int16](repeating: 1_000, count: 1_600)

    /// The kept recordings once there are `count` (they are written off the
    /// engine's path), polling by attempts.
    func kept(_ room: RoomLearning, count: Int) async throws -> [KeptRecordings.Recording] {
        _ = try await Poll.holds("\(count) kept recordings", polls: 2_000, every: .milliseconds(10)) {
            try room.kept.recordings().count >= count
        }
        return try room.kept.recordings()
    }

    @Test func onlyAConversationConfirmedWithTheButtonIsKeptWithAllItsUtterances() async throws {
        defer { try? FileManager.default.removeItem(at: state) }
        let room = room(keep: true)
        room.heard(samples: speech, sampleRate: 16_000, words: "hey order a latte")
        room.heard(samples: speech, sampleRate: 16_000, words: "large")
        room.observe(.listening(.followUp(PhraseModel(rules: []))))  // a question does not end it
        room.observe(performed(confirmed: true))
        #expect(try await kept(room, count: 2).map(\.words) == ["hey order a latte", "large"])

        // Performed without the button (a voice "yes", or no confirmation): nothing.
        room.heard(samples: speech, sampleRate: 16_000, words: "hey coffee time")
        room.observe(performed(confirmed: false))
        // Cancelled: the engine rests, listening for commands again.
        room.heard(samples: speech, sampleRate: 16_000, words: "hey order a mocha")
        room.observe(.listening(.commands))
        room.observe(performed(confirmed: true))
        // Another confirmed conversation after them is kept (so the two
        // above would have been written by now).
        room.heard(samples: speech, sampleRate: 16_000, words: "hey order a tea")
        room.observe(performed(confirmed: true))
        #expect(try await kept(room, count: 3).map(\.words) == ["hey order a latte", "large", "hey order a tea"])
    }

    @Test func nothingIsKeptWhenTheConfigurationDoesNotAllowIt() throws {
        defer { try? FileManager.default.removeItem(at: state) }
        #expect(ParleyConfig().adaptation.keepAudio == false)
        let room = room(keep: false)
        room.heard(samples: speech, sampleRate: 16_000, words: "hey order a latte")
        room.observe(performed(confirmed: true))
        #expect(room.kept.count == 0)
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("adaptation").path))
    }

    @Test func forgettingTheHistoryDeletesTheAudioAndTheTransformAndStopsUsingIt() async throws {
        defer { try? FileManager.default.removeItem(at: state) }
        let room = try await roomWithOneKept()
        // A transform made earlier, in use.
        try writeTransform(room, madeFor: Self.model)
        room.restore()
        #expect(room.transform.current.file == room.transformFile.path)
        #expect(room.transformDate != nil)

        // "Forget my history" reaches the store through the engine's donations.
        let store = InMemoryDonationStore()
        let donations = ForgettingDonations(store: store, room: room)
        _ = try await donations.record(Donation(app: "a", intent: "i", parameters: [:], date: Date(), trigger: "voice"))
        #expect(try await donations.delete(.app("other")) == 0)
        #expect(room.kept.count == 1)  // only forgetting everything takes the audio
        #expect(try await donations.delete(.all) == 1)
        #expect(room.kept.count == 0)
        #expect(!FileManager.default.fileExists(atPath: room.transformFile.path))
        #expect(room.transform.current.file == nil)
    }

    @Test func aTransformMadeForAnotherModelIsNotUsed() throws {
        defer { try? FileManager.default.removeItem(at: state) }
        let room = room(keep: true)
        try writeTransform(room, madeFor: "/usr/share/parley/model/en-us-adapted")
        room.restore()
        #expect(room.transform.current.file == nil)
    }

    /// A transform estimated on audio as captured does not fit the features
    /// of denoised audio, nor the other way round: one made for another
    /// front end is not used (a file with the model's line alone was made
    /// on audio as captured).
    @Test func aTransformMadeForAnotherFrontEndIsNotUsed() throws {
        defer { try? FileManager.default.removeItem(at: state) }
        let neural = room(keep: true, frontEnd: .neural)
        try writeTransform(neural, madeFor: Self.model)
        neural.restore()
        #expect(neural.transform.current.file == nil, "a transform from raw audio used with the network on")
        try writeTransform(neural, madeFor: Self.model, frontEnd: "neural")
        neural.restore()
        #expect(neural.transform.current.file == neural.transformFile.path)
        neural.transform.use(nil, model: nil)

        let plain = room(keep: true)
        try writeTransform(plain, madeFor: Self.model, frontEnd: "neural")
        plain.restore()
        #expect(plain.transform.current.file == nil, "a transform from denoised audio used without the network")
        try writeTransform(plain, madeFor: Self.model, frontEnd: "none")
        plain.restore()
        #expect(plain.transform.current.file == plain.transformFile.path)
    }

    /// Behind the neural front end a room transform lowered understood
    /// orders (BENCHMARKS), so the daemon does not make one there and says why.
    @Test func behindTheNeuralFrontEndAdaptingSaysItIsOff() async throws {
        defer { try? FileManager.default.removeItem(at: state) }
        let room = room(keep: true, frontEnd: .neural)
        room.heard(samples: speech, sampleRate: 16_000, words: "hey order a latte")
        room.observe(performed(confirmed: true))
        #expect(try await kept(room, count: 1).count == 1, "the audio is still kept")
        await #expect { try await room.adapt() } throws: { "\($0)".contains("off while the neural front end runs") }
        #expect(!FileManager.default.fileExists(atPath: room.transformFile.path))
    }

    @Test func adaptingWithTooFewRecordingsSaysSoAndChangesNothing() async throws {
        defer { try? FileManager.default.removeItem(at: state) }
        let room = try await roomWithOneKept()
        await #expect { try await room.adapt() } throws: { "\($0)".contains("1 confirmed recording kept") }
        #expect(!FileManager.default.fileExists(atPath: room.transformFile.path))
    }

    @Test func theAdaptationSectionIsReadAndCheckedByName() throws {
        let config = try ConfigLoader.parse(
            "adaptation: {keep_audio: true, max_recordings: 50, nightly: true, nightly_at: \"02:15\"}", file: "/etc/parley/parley.yaml")
        #expect(config.adaptation.keepAudio && config.adaptation.nightly)
        #expect(config.adaptation.maxRecordings == 50)
        #expect(config.adaptation.nightlyAt == ParleyConfig.TimeOfDay(hour: 2, minute: 15))
        #expect { try ConfigLoader.parse("adaptation:\n  nightly_at: \"25:00\"\n", file: "/etc/parley/parley.yaml") } throws: { error in
            let e = error as? ConfigError
            return e?.key == "adaptation.nightly_at" && e?.line == 2 && "\(error)".contains("25:00") && "\(error)".contains("HH:MM")
        }
        #expect(throws: ConfigError.self) { try ConfigLoader.parse("adaptation: {max_recordings: 2}", file: "/etc/parley/parley.yaml") }
        #expect(throws: ConfigError.self) { try ConfigLoader.parse("adaptation: {keep: yes}", file: "/etc/parley/parley.yaml") }
    }

    @Test func theNightlyRunWaitsForTheNextTimeOfDay() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let now = try #require(calendar.date(from: DateComponents(year: 2026, month: 11, day: 24, hour: 22, minute: 0)))
        #expect(NightlyAdaptation.seconds(until: .init(hour: 3, minute: 30), from: now, calendar: calendar) == 5.5 * 3600)
        #expect(NightlyAdaptation.seconds(until: .init(hour: 22, minute: 30), from: now, calendar: calendar) == 1800)
        #expect(NightlyAdaptation.seconds(until: .init(hour: 22, minute: 0), from: now, calendar: calendar) == 86_400)
    }
}


import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleyRoom
import ParleySpeech
import ServiceLifecycle
import Synchronization

/// The device learning its room: keeps the audio of commands confirmed with
/// the button (only when `adaptation.keep_audio` allows), estimates a
/// speaker-and-room MLLR transform from it on request (`parley adapt`) or
/// nightly, and puts the transform in use without a restart
/// (``RoomTransform``). Everything lives under `<state>/adaptation`:
/// `kept/` (the recordings), `room.mllr` and `room.model` (the transform and
/// the model folder it was estimated on), `work/` (scratch).
public final class RoomLearning: Sendable {
    public let kept: KeptRecordings
    public let keepAudio: Bool
    let folder: URL
    /// The command model's folder: what transforms are estimated on.
    let model: String
    /// The front end the decoder hears through (`speech.front_end`).
    let frontEnd: FrontEndSettings
    /// Where the transform in use is put: the daemon's command and
    /// dictation decoders follow it (``ListeningPipeline``).
    public let transform = RoomTransform.Slot()
    let logger: Logger

    private struct Heard { var samples: [Int16]; var sampleRate: Int; var words: String }
    private struct State {
        /// The utterances of the conversation going on, waiting for its end.
        var pending: [Heard] = []
        var adapting = false
    }
    private let state = Mutex(State())
    private let writer = DispatchQueue(label: "parley.room.keep", qos: .utility)
    /// A conversation keeps at most this many utterances (a command and its answers).
    static let pendingLimit = 6

    public init(config: ParleyConfig, model: String, logger: Logger) {
        folder = URL(fileURLWithPath: config.stateDirectory).appendingPathComponent("adaptation")
        kept = KeptRecordings(directory: folder.appendingPathComponent("kept"), limit: config.adaptation.maxRecordings)
        keepAudio = config.adaptation.keepAudio
        self.model = model
        frontEnd = config.effectiveFrontEnd
        self.logger = logger
    }

    var transformFile: URL { folder.appendingPathComponent("room.mllr") }
    static let notBehindTheNetwork =
        "room adaptation is off while the neural front end runs (speech.front_end): behind it a room transform lowered understood orders; the kept audio stays for another front end"
    /// What the transform was estimated for: the model's folder, then (a
    /// second line, absent in files written before it) the front end.
    var modelFile: URL { folder.appendingPathComponent("room.model") }
    /// What `modelFile` says of the transform in use now.
    var madeFor: String { model + "\n" + (frontEnd.isNeural ? frontEnd.description : FrontEndSettings.none.description) }

    /// At start: a transform estimated earlier on the model in use is used
    /// again; one for another model (the configuration changed) is not.
    public func restore() {
        guard FileManager.default.fileExists(atPath: transformFile.path) else { return }
        let lines = ((try? String(contentsOf: modelFile, encoding: .utf8)) ?? "")
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        // A file from before the front end was written there: made on audio as captured.
        let made = (lines.first ?? "unknown") + "\n" + (lines.count > 1 ? lines[1] : FrontEndSettings.none.description)
        guard made == madeFor else {
            logger.notice("room transform not used: it was estimated on another acoustic model or front end; run `parley adapt` again",
                          metadata: ["made-for": "\(made.replacingOccurrences(of: "\n", with: ", "))",
                                     "now": "\(madeFor.replacingOccurrences(of: "\n", with: ", "))"])
            return
        }
        transform.use(transformFile.path, model: model)
        logger.info("room transform in use", metadata: ["file": "\(transformFile.path)"])
    }

    // MARK: Keeping confirmed audio

    /// The listen thread heard a command (called only when keeping is on).
    public func heard(samples: [Int16], sampleRate: Int, words: String) {
        guard keepAudio else { return }
        state.withLock { s in
            if s.pending.count == Self.pendingLimit { s.pending.removeFirst() }
            s.pending.append(Heard(samples: samples, sampleRate: sampleRate, words: words))
        }
    }

    /// The engine's events: a run confirmed with the button keeps what was
    /// heard for it; any other end of a conversation drops it.
    public func observe(_ event: EngineEvent) {
        switch event {
        case .performed(let performed):
            let heard = state.withLock { s in
                defer { s.pending.removeAll() }
                return s.pending
            }
            guard keepAudio, performed.confirmedWithButton, !heard.isEmpty else { return }
            // Written off the engine's path (the answer is spoken meanwhile),
            // one conversation after another, in the order they ended.
            let kept = self.kept, logger = self.logger
            writer.async {
                for utterance in heard {
                    do {
                        let recording = try kept.keep(utterance.samples, sampleRate: utterance.sampleRate, words: utterance.words)
                        logger.info("kept confirmed audio", metadata: ["file": "\(recording.name)", "words": "\(recording.words)"])
                    } catch {
                        logger.error("confirmed audio not kept: \(error)")
                    }
                }
            }
        case .listening(.commands):
            state.withLock { $0.pending.removeAll() }
        default:
            break
        }
    }

    // MARK: Adapting and forgetting

    /// Estimates the transform from every kept recording and puts it in use.
    /// Runs the tools on a thread of its own (bw takes seconds to minutes on
    /// a Pi), under `nice`, so listening goes on meanwhile.
    public func adapt() async throws -> RoomAdapter.Outcome {
        let started = state.withLock { s -> Bool in
            if s.adapting { return false }
            s.adapting = true
            return true
        }
        guard started else { throw RoomAdaptationError("an adaptation is already running") }
        defer { state.withLock { $0.adapting = false } }
        // Measured, not assumed (BENCHMARKS: hearing, "The adapted models and
        // the attenuation limit, on denoised audio"): a transform estimated
        // on denoised copies of 5-20 confirmed commands lowered understood
        // orders behind the network (kitchen 6 dB: 84.3% to 79.1-81.7%).
        guard !frontEnd.isNeural else { throw RoomAdaptationError(Self.notBehindTheNetwork) }
        let recordings = try kept.recordings()
        let adapter = RoomAdapter(model: model)
        let work = folder.appendingPathComponent("work"), output = transformFile, model = self.model
        let modelFile = self.modelFile, madeFor = self.madeFor
        let outcome = try await Self.offThePool {
            let outcome = try adapter.adapt(recordings, work: work, output: output)
            try (madeFor + "\n").write(to: modelFile, atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(at: work)
            return outcome
        }
        transform.use(outcome.transform.path, model: model)
        logger.notice("adapted to the room", metadata: [
            "recordings": "\(outcome.recordings)", "seconds": "\(Int(outcome.seconds))", "transform": "\(outcome.transform.path)",
        ])
        return outcome
    }

    /// Deletes the kept audio and the transform made from it (with the
    /// history: "forget my history", `parley donations forget --all`), and
    /// the recogniser goes back to the model's own means.
    @discardableResult
    public func forget() -> Int {
        state.withLock { $0.pending.removeAll() }
        var count = 0
        do { count = try kept.deleteAll() } catch { logger.error("kept audio not deleted: \(error)") }
        for file in [transformFile, modelFile] { try? FileManager.default.removeItem(at: file) }
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("work"))
        transform.use(nil, model: nil)
        logger.notice("kept audio and room transform forgotten", metadata: ["recordings": "\(count)"])
        return count
    }

    /// When the transform in use was made, nil when there is none.
    public var transformDate: Date? {
        (try? FileManager.default.attributesOfItem(atPath: transformFile.path))?[.modificationDate] as? Date
    }

    /// Blocking work on a thread of its own: the cooperative pool has as
    /// many threads as cores (two on a Pi-class board), and a minute of bw
    /// on one of them would stall the engine.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "parley-adapt"
            thread.start()
        }
    }
}

/// The donations the engine forgets with "forget my history" take the kept
/// audio and the room transform with them.
struct ForgettingDonations: DonationStore {
    let store: any DonationStore
    let room: RoomLearning

    func record(_ donation: Donation) async throws -> Int64 { try await store.record(donation) }
    func donations(app: String?, intent: String?, limit: Int?) async throws -> [Donation] {
        try await store.donations(app: app, intent: intent, limit: limit)
    }
    func delete(_ scope: DonationScope) async throws -> Int {
        let count = try await store.delete(scope)
        if scope == .all { room.forget() }
        return count
    }
}

/// `adaptation.nightly`: adapts once a night at `adaptation.nightly_at`
/// (local time) when recordings were kept since the transform in use was
/// made, and there are enough of them.
struct NightlyAdaptation: Service {
    let room: RoomLearning
    let at: ParleyConfig.TimeOfDay
    /// The calendar of `time_zone` now (the page may change it).
    let calendar: @Sendable () -> Calendar
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let wait = Self.seconds(until: at, from: Date(), calendar: calendar())
                logger.info("nightly adaptation scheduled", metadata: ["in-seconds": "\(Int(wait))", "at": "\(at)"])
                do { try await Task.sleep(for: .seconds(wait)) } catch { return }
                await runOnce()
            }
        }
    }

    func runOnce() async {
        let recordings = (try? room.kept.recordings()) ?? []
        let newest = recordings.last.flatMap {
            (try? FileManager.default.attributesOfItem(atPath: $0.audio.path))?[.modificationDate] as? Date
        }
        guard recordings.count >= RoomAdapter.minimumRecordings, let newest else {
            logger.info("nightly adaptation skipped: too few kept recordings", metadata: ["kept": "\(recordings.count)"])
            return
        }
        if let made = room.transformDate, made >= newest {
            logger.info("nightly adaptation skipped: nothing kept since the last one")
            return
        }
        do { _ = try await room.adapt() } catch { logger.error("nightly adaptation failed: \(error)") }
    }

    /// Seconds from `now` to the next `time` of day (a whole day when it is now).
    static func seconds(until time: ParleyConfig.TimeOfDay, from now: Date, calendar: Calendar) -> Double {
        let next = calendar.nextDate(after: now, matching: DateComponents(hour: time.hour, minute: time.minute, second: 0),
                                     matchingPolicy: .nextTime) ?? now.addingTimeInterval(86_400)
        return max(1, next.timeIntervalSince(now))
    }
}

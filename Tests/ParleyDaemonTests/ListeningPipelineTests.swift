import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleySpeech
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyDaemon

/// An oven whose bread takes as long as the test wants: its perform waits
/// until cancelled, or until the test ends it.
struct BakeBread: AppIntent {
    static let title = "Bake bread"
    static let category = IntentCategory.generic
    static let timeLimit: TimeInterval = 3_600
    /// Performs started, and performs that ended by cancellation.
    static let started = Atomic<Int>(0)
    static let cancelled = Atomic<Int>(0)
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult {
        Self.started.add(1, ordering: .sequentiallyConsistent)
        do {
            try await Task.sleep(for: .seconds(3_600))
        } catch {
            Self.cancelled.add(1, ordering: .sequentiallyConsistent)
            throw error
        }
        return IntentResult(dialog: "The bread is baked.")
    }
}

struct Oven: ParleyApp {
    let identifier = "Oven"
    let name = "Oven"
    var intents: [any AppIntent.Type] { [BakeBread.self] }
    var shortcuts: [AppShortcut] {
        [AppShortcut(intent: BakeBread.self, phrases: ["bake bread with {app}"], shortTitle: "Bake bread")]
    }
}

/// The daemon's listening pipeline in-process: synthesised speech in a WAV
/// file, captured through ALSA's file plugin into the ring, endpointed,
/// decoded by PocketSphinx and handed to a real engine whose one intent
/// performs until cancelled. The listen thread never waits for the engine.
@Suite(.serialized) struct ListeningPipelineTests {
    static let silence = [Int16](repeating: 0, count: 16_000)

    /// Speech rendered by espeak-ng, each line followed by a second of silence.
    static func speech(_ lines: [String]) throws -> [Int16] {
        let synth = try SpeechSynthesizer()
        var samples = silence
        for line in lines { samples += try synth.render16k(line).samples + silence }
        return samples
    }

    struct Running {
        let pipeline: ListeningPipeline
        let harness: EngineHarness
        let task: Task<Void, any Error>
        func stop() async {
            task.cancel()
            _ = try? await task.value
        }
    }

    static func start(_ samples: [Int16], in dir: TemporaryDirectory, pacing: Pacing, ringSeconds: Double,
                      sensitivity: Double = ParleyConfig.Wake().sensitivity) async throws -> Running {
        let wav = URL(fileURLWithPath: dir.file("in.wav"))
        try WAVFile.write(samples, sampleRate: 16_000, to: wav)
        let capture = try CaptureService(configuration: CaptureConfiguration.file(
            wav: wav, workDirectory: URL(fileURLWithPath: dir.path), pacing: pacing, ringSeconds: ringSeconds))
        let harness = try EngineHarness(apps: [Oven()], primaryApp: "Oven")
        var wake = ParleyConfig.Wake()
        wake.named = false  // direct "hey <phrase>" only: no wake detector needed
        wake.sensitivity = sensitivity
        let pipeline = ListeningPipeline(
            capture: capture, engine: harness.engine, wake: wake, endpointSilence: .milliseconds(600),
            playbackName: "none", latency: LatencyProbe(), logger: Logger(label: "test"))
        let task = Task { try await pipeline.run() }
        return Running(pipeline: pipeline, harness: harness, task: task)
    }

    @Test func cancelSpokenWhileAnIntentPerformsStopsItAndTheDeviceSaysSo() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let startedBefore = BakeBread.started.load(ordering: .sequentiallyConsistent)
        let cancelledBefore = BakeBread.cancelled.load(ordering: .sequentiallyConsistent)
        // "hey repeat" first: the first utterance after start is decoded
        // before the live cepstral mean has settled, and in this one-app
        // grammar scores near the rejection threshold (-0.62 of -1.0; -2.1
        // once the volume phrases widened the grammar, while on the bundled
        // apps' grammar they moved it by 0.02). What this test is about comes after.
        let audio = try Self.speech(["hey repeat", "hey bake bread with oven", "hey cancel"])
        // Sensitivity 0.75 (threshold -1.5), as the volume test below and for
        // its reason: espeak-ng's audio moves with what it said before in the
        // process, and under the whole suite "bake bread with oven" scored
        // -0.25 to -0.75 against the default -1.0; in fresh-clone runs of
        // the suite (CI's among them) all three lines were segmented and
        // none was accepted (nothing performed, nothing said). What this test is
        // about is the cancel, not the threshold.
        let running = try await Self.start(audio, in: dir, pacing: .realTime, ringSeconds: 16, sensitivity: 0.75)
        let sink = running.harness.sink
        // Polled every 50 ms, at most 6 000 times: under the whole suite the
        // cooperative pool the engine runs on can be busy for minutes with
        // other suites' decoding.
        let cancelled = try await Poll.holds("the device says Cancelled.", every: .milliseconds(50)) {
            await sink.spoken.contains("Cancelled.")
        }
        // The engine stops the perform itself, before the pipeline is stopped
        // (the suite is serialized). Not awaited again when nothing was cancelled.
        let performStopped = try await Poll.holds("the performing intent cancelled", polls: cancelled ? 6_000 : 1,
                                                  every: .milliseconds(50)) {
            BakeBread.cancelled.load(ordering: .sequentiallyConsistent) == cancelledBefore + 1
        }
        await running.stop()
        #expect(performStopped, "the performing intent was cancelled by the spoken cancel")
        #expect(BakeBread.started.load(ordering: .sequentiallyConsistent) == startedBefore + 1, "the order was performing")
        let spoken = await sink.spoken
        #expect(cancelled, "said: \(spoken); listening: \(running.pipeline.listeningCounts)")
        #expect(await sink.performed.isEmpty, "a cancelled run performs nothing")
        #expect(running.pipeline.listeningCounts.segments == 3)
    }

    /// What the listener hands over is decided in the order it was said,
    /// however long the engine is held up: "bake bread" suspended on its
    /// first output, then "cancel" queued behind it. The cancel waits for
    /// the bread to be performing, then stops it. Before, the cancel ran
    /// in the gap, found nothing open, and the bread baked after all.
    @Test func utterancesAreDecidedInTheOrderTheyWereSaid() async throws {
        let harness = try EngineHarness(apps: [Oven()], primaryApp: "Oven")
        let startedBefore = BakeBread.started.load(ordering: .sequentiallyConsistent)
        let cancelledBefore = BakeBread.cancelled.load(ordering: .sequentiallyConsistent)
        let held = await harness.sink.hold(.led(.listening))
        let bake = await harness.engine.start(.text("bake bread with oven"), after: nil)
        let cancel = await harness.engine.start(.text("cancel"), after: bake)
        await held.waitForArrivals(1)
        // Only a bound for the broken case: in order, "cancel" cannot be done
        // while "bake bread" is held, however long this waits.
        let jumped = try await Poll.holds("cancel handled before bake bread", polls: 100, every: .milliseconds(5)) {
            cancel.isReleased
        }
        #expect(!jumped, "cancel was handled while bake bread was held")
        held.openFirst()
        let stopped = try await Poll.holds("the bread's perform cancelled", every: .milliseconds(10)) {
            BakeBread.cancelled.load(ordering: .sequentiallyConsistent) == cancelledBefore + 1
        }
        let spoken = await harness.sink.spoken
        #expect(stopped, "said: \(spoken)")
        #expect(BakeBread.started.load(ordering: .sequentiallyConsistent) == startedBefore + 1)
        #expect(spoken == ["Cancelled."])
        #expect(await harness.sink.performed.isEmpty)
        #expect(try await Poll.holds("the cancel's turn given up", every: .milliseconds(10)) { cancel.isReleased })
    }

    /// An utterance gives its turn up once the engine has settled, not when
    /// the grammar of the new state is compiled (seconds on a Pi): "repeat"
    /// with nothing to repeat is held there, and the order after it runs.
    @Test func theNextUtteranceIsHandledWhileTheLastOnesGrammarCompiles() async throws {
        let harness = try EngineHarness(apps: [Oven()], primaryApp: "Oven")
        let startedBefore = BakeBread.started.load(ordering: .sequentiallyConsistent)
        let cancelledBefore = BakeBread.cancelled.load(ordering: .sequentiallyConsistent)
        let held = await harness.sink.hold(.listening(.commands))
        let first = await harness.engine.start(.text("repeat"), after: nil)
        _ = await harness.engine.start(.text("bake bread with oven"), after: first)
        let started = try await Poll.holds("the bread started while repeat's grammar request was held", every: .milliseconds(10)) {
            BakeBread.started.load(ordering: .sequentiallyConsistent) == startedBefore + 1
        }
        #expect(started)
        #expect(first.isReleased)
        held.openFirst()
        await harness.engine.hear("cancel")
        #expect(try await Poll.holds("the bread's perform cancelled", every: .milliseconds(10)) {
            BakeBread.cancelled.load(ordering: .sequentiallyConsistent) == cancelledBefore + 1
        })
    }

    /// The volume by voice (issue 28): espeak-ng's "hey a bit louder" and
    /// "hey volume three" through the file plugin, the endpointer and
    /// PocketSphinx change the level, each answered with its word. (Of the
    /// volume phrases, espeak-ng's voice on the stock model gets the short
    /// ones, "louder", "mute", "turn it up", rejected as too unlike
    /// themselves: BENCHMARKS.md, "Volume phrases".)
    @Test func louderAndAVolumeNumberSpokenChangeTheLevel() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        // A warm-up first, as in the cancel test above (the first utterance
        // decodes worse): words no phrase has, rejected without an answer, so
        // no reply of the device's is still playing when "louder" comes (that
        // would make it an utterance over the device's voice, on a busy CPU).
        let audio = try Self.speech(["the weather is nice today", "hey a bit louder", "hey volume three"])
        // espeak-ng's audio for the same words moves a little with every
        // line it said before in the process (its synthesiser keeps state
        // between calls: 14 724 to 14 731 samples for "hey a bit louder"
        // over four calls), and under the whole suite "volume three" scored
        // -0.47 to -1.0 against the default threshold of -1.0. What this
        // test is about is the volume, so it listens at sensitivity 0.75
        // (threshold -1.5), where the words the grammar cannot hold are
        // still rejected.
        let running = try await Self.start(audio, in: dir, pacing: .realTime, ringSeconds: 16, sensitivity: 0.75)
        let engine = running.harness.engine
        let set = try await Poll.holds("the volume at three", every: .milliseconds(50)) { await engine.volume() == Volume(level: 3) }
        await running.stop()
        let spoken = await running.harness.sink.spoken
        #expect(set, "said: \(spoken)")
        // espeak-ng's short volume phrases sit at the rejection threshold
        // (BENCHMARKS.md, "Volume phrases": 1 of 19 accepted), and "a bit
        // louder" is accepted in some runs and rejected in others: when it
        // is heard it answers "seven"; "volume three" always sets three.
        #expect(spoken == ["seven", "three"] || spoken == ["three"], "said: \(spoken)")
    }

    /// Five orders in a row, the first of which never finishes performing,
    /// at the pace of a microphone into a ring shorter than the rest of the
    /// recording: a listen thread waiting for the engine would let the ring
    /// overwrite what follows.
    @Test func noAudioIsLostWhileTheEngineIsBusy() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let audio = try Self.speech(Array(repeating: "hey bake bread with oven", count: 5))
        let ringSeconds = 3.0
        #expect(Double(audio.count) / 16_000 > 3 * ringSeconds, "the recording outlasts the ring")
        let running = try await Self.start(audio, in: dir, pacing: .realTime, ringSeconds: ringSeconds)
        let pipeline = running.pipeline
        let ended = try await Poll.holds("the recording ended and five segments were heard", every: .milliseconds(50)) {
            pipeline.capture.status.state == .endOfInput && pipeline.listeningCounts.segments >= 5
        }
        let counts = pipeline.listeningCounts
        await running.stop()
        #expect(ended, "segments \(counts.segments)")
        #expect(counts.lostSamples == 0)
        #expect(counts.segments == 5)
        #expect(counts.decided == 5, "every order was decoded, though the engine was busy from the first")
    }
}

/// The listen thread's way into async code never blocks: past its capacity
/// events are dropped and counted; what was queued arrives in order.
@Suite struct EngineInboxTests {
    @Test func aFullInboxDropsAndCountsInsteadOfWaiting() async {
        let inbox = EngineInbox(capacity: 3)
        for i in 0..<5 { inbox.send(.text("order \(i)")) }
        #expect(inbox.dropped == 2)
        inbox.finish()
        var received: [Heard] = []
        for await heard in inbox.events { received.append(heard) }
        #expect(received == [.text("order 0"), .text("order 1"), .text("order 2")])
    }
}

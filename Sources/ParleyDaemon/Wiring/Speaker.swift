import Dispatch
import Foundation
import Logging
import ParleyAudio
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ParleySpeech
import ServiceLifecycle
import Synchronization

/// Speech out: espeak-ng synthesis (ParleySpeech) streamed into the playback
/// device (ParleyAudio). Synthesis blocks, so it runs on its own serial
/// dispatch queue, never on the cooperative pool; `speak` returns once the
/// line has been queued for playback, so the engine goes on at once.
public final class Speaker: Service, AudioPort, Sendable {
    public let playback: PlaybackService
    /// The voice, rate and loudness in use; `setVoice` changes them between lines.
    private let synthesizer: Mutex<SpeechSynthesizer>
    private let queue = DispatchQueue(label: "parley-speaker")
    private let logger: Logger

    private let latency: LatencyProbe
    /// Bumped by `interrupt()`: lines queued or being synthesised under an
    /// older generation are dropped.
    private let generation = Atomic<Int>(0)
    /// The last `OwnSpeech.lines` lines asked for, newest last (`saying`).
    private let recent = Mutex<[String]>([])

    /// What the device has just been saying: its last few lines. The
    /// listener tells the device's own "cancel that" from a person's by it
    /// before the echo canceller has adapted (`OwnSpeech`).
    public var saying: [String] { recent.withLock { $0 } }

    public init(playback: PlaybackService, voice: ParleyConfig.Voice, latency: LatencyProbe, logger: Logger) throws {
        self.latency = latency
        self.playback = playback
        self.synthesizer = Mutex(try SpeechSynthesizer(
            settings: VoiceSettings(voice: voice.name, rate: voice.rate, volume: voice.volume)))
        self.logger = logger
    }

    /// Speaks from the next line on with `voice` (a setting changed on the
    /// page: no restart); throws, keeping the voice in use, when espeak-ng
    /// refuses it.
    public func setVoice(_ voice: ParleyConfig.Voice) async throws {
        let next = try SpeechSynthesizer(settings: VoiceSettings(voice: voice.name, rate: voice.rate, volume: voice.volume))
        // A voice espeak-ng does not have fails here, not at the next answer;
        // tried on the speech queue (espeak-ng blocks), after the lines queued before.
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            queue.async { done.resume(with: Result { _ = try next.render16k("ok") }) }
        }
        synthesizer.withLock { $0 = next }
        logger.notice("voice changed", metadata: ["voice": "\(voice.name)", "rate": "\(voice.rate)", "volume": "\(voice.volume)"])
    }

    /// Synthesises `text` and queues it for playback.
    public func speak(_ text: String) async {
        let mine = generation.load(ordering: .acquiring)
        let asked = ContinuousClock.now
        recent.withLock { lines in
            lines.append(text)
            if lines.count > OwnSpeech.lines { lines.removeFirst(lines.count - OwnSpeech.lines) }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let synthesizer = self.synthesizer.withLock { $0 }
            queue.async { [self, synthesizer, playback, logger, latency] in
                defer { done.resume() }
                func current() -> Bool { self.generation.load(ordering: .acquiring) == mine }
                guard current() else { return }
                do {
                    let rate = try synthesizer.sampleRate
                    // The first chunk is queued at once so playback starts
                    // while espeak-ng is still producing the rest.
                    var first = true
                    var samples: [Int16] = []
                    try synthesizer.speak(text) { chunk in
                        samples.append(contentsOf: chunk)
                        if first && samples.count >= rate / 5 && current() {
                            playback.enqueue(samples, sampleRate: rate)
                            samples.removeAll(keepingCapacity: true)
                            first = false
                            if let elapsed = latency.answerStarted() {
                                // synthesis-ms: from the engine asking to the first chunk queued.
                                logger.info("answer started", metadata: [
                                    "answer-latency-ms": "\(LatencyProbe.milliseconds(elapsed))",
                                    "synthesis-ms": "\(LatencyProbe.milliseconds(ContinuousClock.now - asked))",
                                ])
                            }
                        }
                        return current()   // false stops espeak-ng after an interrupt
                    }
                    if current() { playback.enqueue(samples, sampleRate: rate) }
                } catch {
                    logger.error("speech out failed: \(error)", metadata: ["text": "\(text)"])
                }
            }
        }
    }

    /// Silences the device at once ("stop" said over its voice): what is
    /// playing is cut and lines queued or still being synthesised are dropped.
    public func interrupt() {
        generation.add(1, ordering: .acquiringAndReleasing)
        playback.stopSpeaking()
    }

    /// Plays one of the engine's sounds. The wake tone and the volume tick
    /// are cues (`PlaybackService.isTalking` stays false: what a person says
    /// over them is a command, not an interruption); the chime leads an
    /// announcement's words, so from it on the device is talking.
    public func play(_ sound: EngineSound) {
        playback.enqueue(Self.samples(of: sound), sampleRate: Self.toneRate, cue: sound != .chime)
    }

    static let toneRate = 16_000

    /// A sound as sine tones: the chime (timers and announcements) falls,
    /// the wake tone (a window to speak opened) is one short rising pair, so
    /// the two are told apart by ear.
    static func samples(of sound: EngineSound) -> [Int16] {
        let tones: [(frequency: Double, seconds: Double)] = switch sound {
        case .chime: [(880, 0.15), (660, 0.25)]
        case .wake: [(660, 0.06), (990, 0.09)]
        case .volume: [(1_320, 0.04)]
        }
        var samples: [Int16] = []
        for tone in tones {
            for n in 0..<Int(Double(toneRate) * tone.seconds) {
                samples.append(Int16(8_000 * sin(2 * Double.pi * tone.frequency * Double(n) / Double(toneRate))))
            }
        }
        return samples
    }

    /// Audio status when there is no audio in (file mode without a capture file).
    public func audioStatus() async -> AudioStatus {
        AudioStatus(
            capture: "none", playback: playback.configuration.device.name,
            state: playback.isTalking ? "playback only, speaking" : "playback only", overruns: 0,
            speaking: playback.isTalking)
    }

    /// Opens the playback device, runs until shutdown, then stops playback.
    public func run() async throws {
        try playback.start()
        try? await gracefulShutdown()
        playback.stopSpeaking()
    }
}

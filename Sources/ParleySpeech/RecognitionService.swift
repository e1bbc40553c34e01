import Foundation
import ParleyAudio
import ParleyCore

/// What the always-on recogniser reports.
public enum RecognitionEvent: Sendable, Equatable {
    /// The wake phrase was heard at this stream time (seconds).
    case wake(at: Double)
    /// A command was understood (or rejected: `result.match == nil`).
    case command(CommandResult)
    /// An answer to the question being asked.
    case answer(CommandResult)
    /// The window after a wake or question closed with no speech.
    case timedOut
}

/// Settings of the always-on recogniser.
public struct ListeningSettings: Sendable, Hashable {
    public var wake: WakeMode = .named("computer", heyOptional: true)
    public var sensitivity = 0.5
    public var decoder = DecoderSettings()
    public var rejection: RejectionModel? = RejectionModel()
    public var rejectionThreshold = -1.0
    /// Audio kept from before the wake detection and given to the command stage.
    public var preRoll = 0.3
    /// Seconds after the wake phrase within which the command must start.
    public var commandTimeout = 4.0
    public init() {}
}

/// Always-on recognition (SPEC section 3): feed it 16 kHz mono Int16 frames
/// (from the capture ring buffer); it spots the wake phrase, buffers the
/// utterance that follows (with pre-roll), endpoints it, recognises it
/// against the command grammar and reports events. All decoding runs on
/// one dedicated thread, never on the Swift cooperative pool; `feed` only
/// enqueues. Grammar updates are compiled on a background queue and swapped
/// in between utterances, so listening never pauses.
public final class RecognitionService: @unchecked Sendable {
    private let settings: ListeningSettings
    private let events: @Sendable (RecognitionEvent) -> Void
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var queue: [[Int16]] = []
    private var pendingModel: PhraseModel?
    private var pendingAnswer: (PhraseModel, Double)?
    private var running = true
    private var busy = false
    private var speaking = false
    private var thread: Thread?

    // Owned by the decoder thread only:
    private var wake: WakeDetector?
    private var commands: CommandRecognizer?
    private var answers: CommandRecognizer?
    private enum Phase { case listening, command, answer }
    private var phase = Phase.listening
    /// Runs over the whole stream so its noise floor is always settled.
    private let endpointer = Endpointer()
    private var captureStart = 0
    private var capturedSamples = 0
    private var startTimeout = 4.0
    private var utterance: [Int16] = []
    private var recent: [Int16] = []
    private var streamSamples = 0

    public init(model: PhraseModel, settings: ListeningSettings = ListeningSettings(),
                events: @escaping @Sendable (RecognitionEvent) -> Void) throws {
        self.settings = settings
        self.events = events
        wake = try WakeDetector(mode: settings.wake, sensitivity: settings.sensitivity, settings: settings.decoder)
        commands = try CommandRecognizer(model: model, settings: settings.decoder, rejection: settings.rejection,
                                         threshold: settings.rejectionThreshold)
        let thread = Thread { [weak self] in self?.loop() }
        thread.name = "parley.recognition"
        thread.stackSize = 8 << 20
        self.thread = thread
        thread.start()
    }

    deinit { stop() }

    /// Enqueues captured frames; returns at once.
    public func feed(_ frames: [Int16]) {
        condition.lock()
        if !speaking { queue.append(frames) }
        condition.signal()
        condition.unlock()
    }

    /// While the device speaks its own audio is ignored (no self-wake).
    public func setSpeaking(_ value: Bool) {
        condition.lock(); speaking = value; if value { queue.removeAll() }; condition.unlock()
    }

    /// Replaces the command grammar; takes effect before the next utterance.
    public func update(model: PhraseModel) {
        condition.lock(); pendingModel = model; condition.signal(); condition.unlock()
    }

    /// Opens the microphone for an answer (no wake word) for `timeout` seconds.
    public func expectAnswer(_ model: PhraseModel, timeout: Double = 6) {
        condition.lock(); pendingAnswer = (model, timeout); condition.signal(); condition.unlock()
    }

    /// Stops the thread after the queued audio.
    public func stop() {
        condition.lock(); running = false; condition.signal(); condition.unlock()
    }

    /// Blocks until every queued frame has been processed (tests, tools).
    public func drain() {
        while true {
            condition.lock()
            let empty = queue.isEmpty && pendingAnswer == nil && !busy
            condition.unlock()
            if empty { return }
            usleep(2000)
        }
    }

    private func loop() {
        while true {
            condition.lock()
            while running && queue.isEmpty && pendingModel == nil && pendingAnswer == nil { condition.wait() }
            if !running && queue.isEmpty { condition.unlock(); return }
            let model = phase == .listening ? pendingModel : nil
            if model != nil { pendingModel = nil }
            let answer = pendingAnswer
            pendingAnswer = nil
            let frames = queue.isEmpty ? nil : queue.removeFirst()
            busy = true
            condition.unlock()
            defer { condition.lock(); busy = false; condition.unlock() }
            do {
                if let model { try commands?.update(model: model) }
                if let (model, timeout) = answer { try startAnswer(model, timeout: timeout) }
                if let frames { try process(frames) }
            } catch {
                // A broken grammar or decoder error must not stop listening;
                // report nothing for this utterance and go back to listening.
                phase = .listening
            }
        }
    }

    /// ParleyAudio's endpointer decides where the command ends.
    private func beginCapture(timeout: Double) {
        capturedSamples = 0
        captureStart = streamSamples
        startTimeout = timeout
    }

    private func startAnswer(_ model: PhraseModel, timeout: Double) throws {
        if let answers { try answers.update(model: model) } else {
            answers = try CommandRecognizer(model: model, settings: settings.decoder, rejection: settings.rejection,
                                            threshold: settings.rejectionThreshold)
        }
        phase = .answer
        beginCapture(timeout: timeout)
        utterance = Array(recent.suffix(Int(settings.preRoll * 16_000)))
    }

    private func process(_ frames: [Int16]) throws {
        streamSamples += frames.count
        var ended: Int?
        endpointer.process(frames) { event in
            if case .speechEnded(_, let end, _) = event { ended = Int(end) }
        }
        switch phase {
        case .listening:
            recent.append(contentsOf: frames)
            let keep = Int(settings.preRoll * 16_000) + 16_000
            if recent.count > keep { recent.removeFirst(recent.count - keep) }
            guard let wake, let time = try wake.process(frames).first else { return }
            events(.wake(at: time))
            // Pre-roll: audio from just before the end of the wake phrase.
            let wakeEnd = Int(time * 16_000)
            let back = min(recent.count, streamSamples - wakeEnd + Int(settings.preRoll * 16_000))
            utterance = Array(recent.suffix(back))
            beginCapture(timeout: settings.commandTimeout)
            captureStart = wakeEnd
            phase = .command
            try wake.reset()
        case .command, .answer:
            utterance.append(contentsOf: frames)
            capturedSamples += frames.count
            // A segment that ends within a second of the capture start is
            // the wake phrase itself followed by a pause: keep waiting.
            if let end = ended, end > captureStart + 16_000 {
                let keep = max(0, utterance.count - (streamSamples - end))
                let recognizer = phase == .command ? commands : answers
                if let result = try recognizer?.recognize(Array(utterance.prefix(keep))) {
                    events(phase == .command ? .command(result) : .answer(result))
                }
            } else if !endpointer.isInSpeech && Double(capturedSamples) / 16_000 >= startTimeout {
                events(.timedOut)
            } else {
                return
            }
            phase = .listening
            utterance = []
            recent = []
        }
    }
}

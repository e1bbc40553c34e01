import Foundation
import Logging
import Synchronization

/// What the satellite asks of the device it runs on (the daemon's speaker
/// and engine; a fake in tests).
public protocol WyomingSatelliteDevice: Sendable {
    /// Plays Home Assistant's answer or announcement (16-bit mono at
    /// `sampleRate`); returns once it has been played.
    func play(samples: [Int16], sampleRate: Int) async
    /// Says a sentence in Parley's own voice (a fault, a finished timer).
    func say(_ sentence: String) async
}

/// Why audio last left the device, for `parley status` (privacy).
public struct WyomingAudioRecord: Sendable, Equatable {
    public var at: Date
    public var bytes: Int
    public var reason: String
    /// From the end of speech to the request leaving (`run-pipeline` sent).
    public var requestDelay: Duration?

    public init(at: Date, bytes: Int, reason: String, requestDelay: Duration?) {
        self.at = at
        self.bytes = bytes
        self.reason = reason
        self.requestDelay = requestDelay
    }
}

/// The satellite's state as `parley status` shows it.
public struct WyomingSatelliteStatus: Sendable, Equatable {
    public var peer: String?
    public var running: Bool
    public var lastAudioSent: WyomingAudioRecord?
    public var lastFault: String?

    public init(peer: String?, running: Bool, lastAudioSent: WyomingAudioRecord?, lastFault: String?) {
        self.peer = peer
        self.running = running
        self.lastAudioSent = lastAudioSent
        self.lastFault = lastFault
    }
}

/// A rejected command on its way to Home Assistant: what the seam in the
/// listening pipeline hands over.
public struct RejectedUtterance: Sendable {
    /// 16-bit mono, from the end of the wake word (nothing earlier) to the end of the utterance.
    public var samples: [Int16]
    public var sampleRate: Int
    /// What Parley's recogniser made of it (for the log only; never sent).
    public var heard: String
    /// When the person stopped speaking.
    public var spokenEnd: ContinuousClock.Instant

    public init(samples: [Int16], sampleRate: Int, heard: String, spokenEnd: ContinuousClock.Instant) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.heard = heard
        self.spokenEnd = spokenEnd
    }
}

/// Role 1: Parley as a Wyoming satellite of Home Assistant, local first.
///
/// Home Assistant connects (it is the client), sends `run-satellite`,
/// `describe` and pings. Parley runs its own shortcuts on the device and
/// sends nothing for them; a command it rejects goes to Home Assistant
/// with `run-pipeline` (asr → tts) and its audio, and the spoken answer
/// that comes back (`audio-start/chunk/stop`, 22,050 Hz) is played and
/// acknowledged with `played`. The same audio events unasked are an
/// announcement. `pause-satellite` stops anything from being sent until
/// the next `run-satellite`. Timers Home Assistant starts for this device
/// are kept and their end is said aloud.
///
/// Faults (no connection, no answer in time, a link dropped mid-answer,
/// a malformed or oversized event) are said in one sentence; Parley's own
/// shortcuts never wait on Home Assistant. Home Assistant reconnects on its
/// own (every 10 s); the server keeps listening.
public final class WyomingSatellite: Sendable {
    private let infoBox: Mutex<WyomingInfo>
    /// What `describe` answers; its wake words follow the device's (`setActiveWakeWords`).
    public var info: WyomingInfo { infoBox.withLock { $0 } }
    private let device: any WyomingSatelliteDevice
    private let logger: Logger
    /// How long Home Assistant may take to start answering a sent command.
    public let answerTimeout: Duration
    /// The longest answer or announcement kept (at 22,050 Hz, 16-bit: 2.6 MB
    /// for 60 s; at the largest format accepted, 48 kHz 16-bit stereo, 11 MiB).
    public let maximumAnswerSeconds: Int
    /// Timers Home Assistant may run on this device at once; each costs a
    /// little memory, and a peer could otherwise start them without end.
    public static let maximumTimers = 64
    private let state = Mutex(State())

    private struct State {
        var connection: WyomingConnection?
        var running = false
        /// A command sent and not yet answered (its number).
        var pending: Int?
        var sent = 0
        var answer: (format: WyomingAudioFormat, bytes: Data)?
        /// An answer is playing: one more arriving meanwhile is dropped, so
        /// answers never queue up in memory behind the speaker.
        var playing = false
        var timers: [String: WyomingTimer] = [:]
        var lastAudioSent: WyomingAudioRecord?
        var lastFault: String?
    }

    public init(info: WyomingInfo, device: any WyomingSatelliteDevice, logger: Logger,
                answerTimeout: Duration = .seconds(15), maximumAnswerSeconds: Int = 60) {
        infoBox = Mutex(info)
        self.device = device
        self.logger = logger
        self.answerTimeout = answerTimeout
        precondition((1...600).contains(maximumAnswerSeconds))
        self.maximumAnswerSeconds = maximumAnswerSeconds
    }

    /// The wake words changed while running (the page's wake word): the
    /// next `describe` names them.
    public func setActiveWakeWords(_ words: [String]) {
        infoBox.withLock { $0.satellite?.activeWakeWords = words }
    }

    public var status: WyomingSatelliteStatus {
        state.withLock { WyomingSatelliteStatus(peer: $0.connection?.peer, running: $0.running, lastAudioSent: $0.lastAudioSent,
                                                lastFault: $0.lastFault) }
    }

    /// Timers Home Assistant runs for this device, by id.
    public var timers: [String: WyomingTimer] { state.withLock { $0.timers } }

    // MARK: Home Assistant's connection (one at a time; the first keeps it)

    /// Serves one connection from Home Assistant until it ends (on the server's thread).
    ///
    /// The first peer keeps the link until it goes: a second one gets an
    /// `error` event (code "busy") and is closed. Handing the link to the
    /// newest peer let anyone on the network take the microphone's commands.
    /// Home Assistant restarted without closing its old link is refused until
    /// the old one's idle timeout ends it (30 s of silence; a live Home
    /// Assistant pings every few seconds), and its next retry is served.
    public func serve(_ connection: WyomingConnection) {
        let holder = state.withLock { s -> WyomingConnection? in
            if let current = s.connection { return current }
            s.connection = connection
            return nil
        }
        if let holder {
            logger.warning("home assistant link refused: another peer holds it",
                           metadata: ["peer": "\(connection.peer)", "holder": "\(holder.peer)"])
            try? connection.send(.error(
                text: "this satellite is already linked to a Home Assistant; it serves one at a time", code: "busy"))
            return  // the server closes it
        }
        logger.info("home assistant connected", metadata: ["peer": "\(connection.peer)"])
        var fault: String?
        do {
            while let event = try connection.receive() {
                try handle(event, on: connection)
            }
        } catch let error as WyomingProtocolError {
            logger.warning("home assistant sent a malformed event; closing", metadata: ["error": "\(error)"])
            try? connection.send(.error(text: error.description, code: "malformed"))
            fault = "Home Assistant sent something I could not read, so I closed the link."
        } catch {
            logger.info("home assistant connection ended", metadata: ["error": "\(error)"])
        }
        let interrupted = state.withLock { s -> Bool in
            guard s.connection === connection else { return false }
            s.connection = nil
            s.running = false
            s.answer = nil
            defer { s.pending = nil }
            return s.pending != nil
        }
        if interrupted { fault = "The link to Home Assistant dropped before it answered." }
        if let fault { report(fault) }
    }

    private func handle(_ event: WyomingEvent, on connection: WyomingConnection) throws {
        switch event {
        case .describe: try connection.send(.info(info))
        case .ping(let text): try connection.send(.pong(text))
        case .runSatellite: state.withLock { $0.running = true }
        case .pauseSatellite:
            // Nothing is sent until Home Assistant asks again; Parley's own shortcuts go on.
            state.withLock { $0.running = false }
            logger.info("home assistant paused the satellite")
        case .transcript(let text, _): logger.info("home assistant heard", metadata: ["text": "\(text)"])
        case .synthesize(let text): logger.info("home assistant answers", metadata: ["text": "\(text)"])
        case .audioStart(let format):
            state.withLock { $0.answer = (format, Data()) }
        case .audioChunk(let format, let bytes):
            // The bound is the answer's own format (at most 48 kHz 16-bit
            // stereo: `WyomingAudioFormat`), and a chunk in another format is
            // refused: sizing from each chunk let a peer change it midway.
            enum Fault { case none, tooLong, otherFormat(WyomingAudioFormat) }
            let maximumSeconds = maximumAnswerSeconds
            let fault = state.withLock { s -> Fault in
                if s.answer == nil { s.answer = (format, Data()) }  // audio without its start: taken as started
                guard s.answer!.format == format else { return .otherFormat(s.answer!.format) }
                guard s.answer!.bytes.count + bytes.count <= maximumSeconds * format.bytesPerSecond else { return .tooLong }
                s.answer!.bytes.append(bytes)
                return .none
            }
            switch fault {
            case .none: break
            case .tooLong: throw WyomingProtocolError("an answer longer than \(maximumAnswerSeconds) s of audio")
            case .otherFormat(let started):
                throw WyomingProtocolError(
                    "an audio chunk at \(format.rate) Hz, \(format.width) bytes, \(format.channels) channels in an answer "
                        + "started at \(started.rate) Hz, \(started.width) bytes, \(started.channels) channels")
            }
        case .audioStop:
            let (taken, busy) = state.withLock { s -> ((format: WyomingAudioFormat, bytes: Data)?, Bool) in
                defer { s.answer = nil; s.pending = nil }
                guard s.answer != nil, !s.playing else { return (nil, s.answer != nil) }
                s.playing = true
                return (s.answer, false)
            }
            if busy { logger.warning("home assistant sent an answer while one was playing; dropped") }
            guard let answer = taken else { return }
            let samples = Self.monoSamples(answer.bytes, format: answer.format)
            let device = self.device
            // Played off the connection's thread: Home Assistant's pings must
            // still be answered during a long answer (it drops the link after 5 s).
            Task {
                await device.play(samples: samples, sampleRate: answer.format.rate)
                self.state.withLock { $0.playing = false }
                try? connection.send(.played)
            }
        case .error(let text, let code):
            let wasPending = state.withLock { s in defer { s.pending = nil; s.answer = nil }; return s.pending != nil }
            logger.warning("home assistant reported an error", metadata: ["text": "\(text)", "code": "\(code ?? "")"])
            if wasPending { report("Home Assistant could not answer: \(text.trimmingCharacters(in: .punctuationCharacters)).") }
        case .timerStarted(let timer):
            let full = state.withLock { s -> Bool in
                guard s.timers[timer.id] != nil || s.timers.count < Self.maximumTimers else { return true }
                s.timers[timer.id] = timer
                return false
            }
            if full { throw WyomingProtocolError("more than \(Self.maximumTimers) timers at once") }
        case .timerUpdated(let id, _, let total): state.withLock { $0.timers[id]?.totalSeconds = total }
        case .timerCancelled(let id): state.withLock { _ = $0.timers.removeValue(forKey: id) }
        case .timerFinished(let id):
            let timer = state.withLock { $0.timers.removeValue(forKey: id) }
            let name = timer?.name.map { "The \($0) timer" } ?? "Your timer"
            let device = self.device
            Task { await device.say("\(name) from Home Assistant is done.") }
        default: break
        }
    }

    // MARK: A rejected command, from the listening pipeline

    /// Sends a command Parley rejected to Home Assistant; false (and a
    /// sentence said) when there is no running link. Returns once the
    /// request and its audio have left; the answer is played when it comes.
    @discardableResult
    public func forward(_ utterance: RejectedUtterance) async -> Bool {
        let (connection, number) = state.withLock { s -> (WyomingConnection?, Int) in
            guard let connection = s.connection, s.running else { return (nil, 0) }
            s.sent += 1
            s.pending = s.sent
            s.answer = nil
            return (connection, s.sent)
        }
        guard let connection else {
            report("I don't know that one, and Home Assistant is not connected.")
            return false
        }
        // Sent at the capture's own rate: Home Assistant converts to 16 kHz itself.
        let samples = utterance.samples
        var bytes = 0
        var delay: Duration?
        do {
            let format = WyomingAudioFormat(rate: utterance.sampleRate)
            var sent = WyomingEncoder.encode(WyomingEvent.runPipeline(WyomingRunPipeline(startStage: .asr, endStage: .tts)).frame)
            sent.append(WyomingEncoder.encode(WyomingEvent.audioStart(format).frame))
            try connection.sendBytes(sent)
            delay = ContinuousClock.now - utterance.spokenEnd
            bytes += sent.count
            // Home Assistant reads 1024-sample chunks (its own converter's size).
            for start in stride(from: 0, to: samples.count, by: 1024) {
                let chunk = samples[start..<min(samples.count, start + 1024)].withUnsafeBytes { Data($0) }
                let frame = WyomingEncoder.encode(WyomingEvent.audioChunk(format, chunk).frame)
                try connection.sendBytes(frame)
                bytes += frame.count
            }
            let stop = WyomingEncoder.encode(WyomingEvent.audioStop.frame)
            try connection.sendBytes(stop)
            bytes += stop.count
        } catch {
            connection.close()
            state.withLock { $0.pending = nil }
            report("The link to Home Assistant failed while I was sending your words.")
            return false
        }
        let record = WyomingAudioRecord(at: Date(), bytes: bytes, reason: "a command Parley did not know (\(utterance.heard.isEmpty ? "no words matched" : "heard as \"\(utterance.heard)\""))",
                                        requestDelay: delay)
        state.withLock { $0.lastAudioSent = record }
        logger.notice("audio sent to home assistant", metadata: [
            "bytes": "\(bytes)", "seconds": "\(Double(samples.count) / Double(max(1, utterance.sampleRate)))",
            "request-ms": "\(delay.map { Int($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1)",
        ])
        watchAnswer(number, connection: connection)
        return true
    }

    /// Home Assistant slow to answer: said once, the link closed (it reconnects).
    private func watchAnswer(_ number: Int, connection: WyomingConnection) {
        let timeout = answerTimeout
        Task { [self] in
            try? await Task.sleep(for: timeout)
            let late = state.withLock { s in
                guard s.pending == number, s.answer == nil else { return false }
                s.pending = nil
                return true
            }
            guard late else { return }
            report("Home Assistant did not answer in time.")
        }
    }

    private func report(_ sentence: String) {
        state.withLock { $0.lastFault = sentence }
        logger.warning("home assistant: \(sentence)")
        let device = self.device
        Task { await device.say(sentence) }
    }

    // MARK: Audio helpers

    /// The first channel of 16-bit little-endian PCM; other widths are scaled to 16 bits.
    static func monoSamples(_ bytes: Data, format: WyomingAudioFormat) -> [Int16] {
        let frameBytes = format.width * format.channels
        guard frameBytes > 0 else { return [] }
        var samples = [Int16]()
        samples.reserveCapacity(bytes.count / frameBytes)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + frameBytes <= raw.count {
                switch format.width {
                case 1: samples.append(Int16((Int(raw[offset]) - 128) << 8))
                case 2: samples.append(Int16(bitPattern: UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8))
                default:
                    // 24/32-bit: the top two bytes.
                    samples.append(Int16(bitPattern: UInt16(raw[offset + format.width - 2]) | UInt16(raw[offset + format.width - 1]) << 8))
                }
                offset += frameBytes
            }
        }
        return samples
    }
}

import CALSA
import CParleyShims
import Glibc
import Logging
import Synchronization

/// Everything the playback service needs.
public struct PlaybackConfiguration: Sendable {
    public var device: PCMDevice
    /// What to ask the card for; queued audio is resampled to its rate and
    /// copied to every channel. A 10 ms period bounds how much audio is
    /// written after a stop request.
    public var format: PCMFormat
    public var pacing: Pacing
    public var threadName: String
    /// Called on the playback thread whenever speaking starts or ends (keep it cheap).
    public var onSpeakingChanged: (@Sendable (Bool) -> Void)?
    /// Audio waiting to be played, at most (seconds at the device rate): a
    /// block that would go past it is dropped and counted, so a flood of
    /// `parley say` requests or announcements cannot fill memory.
    public var maximumQueuedSeconds: Double = 120
    /// Where what is played goes for the echo canceller (nil: nowhere). The
    /// playback thread hands it each period it wrote and the device's delay.
    public var echoReference: EchoReference?

    public init(
        device: PCMDevice,
        format: PCMFormat = PCMFormat(sampleRate: 48_000, channels: 2, periodFrames: 480, bufferFrames: 1_920),
        pacing: Pacing = .device, threadName: String = "parley-playback",
        onSpeakingChanged: (@Sendable (Bool) -> Void)? = nil
    ) {
        self.device = device
        self.format = format
        self.pacing = pacing
        self.threadName = threadName
        self.onSpeakingChanged = onSpeakingChanged
    }
}

/// Plays queued Int16 buffers (speech from espeak-ng at 22050 Hz, chimes) on
/// its own named thread. `isTalking` tells the recogniser when its own words
/// play (`isSpeaking`: any sound); `stopSpeaking()` silences the device at
/// once (snd_pcm_drop).
/// Runs alongside `CaptureService` on the same or another card. The thread
/// keeps the service alive until `shutdown()`.
public final class PlaybackService: Sendable {
    public let configuration: PlaybackConfiguration
    private let alsa: ALSAFunctions
    private let logger: Logger
    /// Blocks waiting to be played; `cue`: a sound that is not words (the
    /// wake tone, the volume tick).
    private let queue = Mutex<[(samples: [Int16], cue: Bool)]>([])
    private let thread = Mutex<AudioThread?>(nil)
    private let wake: WakeSignal
    private let shuttingDown = Atomic<Bool>(false)
    private let stopRequests = Atomic<Int>(0)
    private let stopsDone = Atomic<Int>(0)
    private let speaking = Atomic<Bool>(false)
    private let talking = Atomic<Bool>(false)
    private let busy = Atomic<Bool>(false)
    private let written = Atomic<Int>(0)
    private let writtenAtStopRequest = Atomic<Int>(0)
    private let framesAfterStop = Atomic<Int>(0)
    private let underruns = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let negotiatedRate = Atomic<Int>(0)
    private let reopens = Atomic<Int>(0)
    private let lastErrno = Atomic<Int32>(0)
    /// The software volume as a Q16 factor (65536 = full scale), read once a period.
    private let gainQ16 = Atomic<Int>(PlaybackService.unity)
    private static let unity = 1 << 16

    public convenience init(configuration: PlaybackConfiguration, logger: Logger = Logger(label: "parley.audio.playback")) throws(AudioError) {
        try self.init(configuration: configuration, logger: logger, alsa: .system)
    }

    init(configuration: PlaybackConfiguration, logger: Logger, alsa: ALSAFunctions) throws(AudioError) {
        try configuration.format.validate()
        self.configuration = configuration
        self.logger = logger
        self.alsa = alsa
        wake = try WakeSignal()
    }

    deinit { shutdown() }

    /// True from the first sample written until the device has played the
    /// last queued sample (or was stopped).
    public var isSpeaking: Bool { speaking.load(ordering: .acquiring) }
    /// True while what plays includes words: from the first block not
    /// queued as a cue until the device has played the last queued sample
    /// (or was stopped). A cue alone (the wake tone) is not talking: the
    /// listener hears what a person says over it as it would over silence,
    /// not as an interruption ("computer, <the tone> can I have a latte"
    /// lost its first words to the barge-in grammar when the tone came late).
    public var isTalking: Bool { talking.load(ordering: .acquiring) }
    /// Frames handed to the device so far.
    public var framesWritten: Int { written.load(ordering: .relaxed) }
    /// Frames written after the last `stopSpeaking()` call began (at most one period).
    public var framesWrittenAfterLastStop: Int { framesAfterStop.load(ordering: .relaxed) }
    /// Underruns (-EPIPE) recovered.
    public var underrunCount: Int { underruns.load(ordering: .relaxed) }
    /// Blocks refused because the queue held `maximumQueuedSeconds` already.
    public var droppedBlockCount: Int { dropped.load(ordering: .relaxed) }
    /// Times the device was reopened after failing (e.g. a USB speaker replugged).
    public var reopenCount: Int { reopens.load(ordering: .relaxed) }
    /// errno of the last device failure (0: none).
    public var lastDeviceErrno: Int32 { lastErrno.load(ordering: .relaxed) }
    /// The device's sample rate (0 before start).
    public var deviceSampleRate: Int { negotiatedRate.load(ordering: .relaxed) }

    /// The factor every sample is scaled by on its way to the device (0...1):
    /// the volume where the card has no mixer control. It applies from the
    /// next period, to audio already queued as well, so "quieter" is heard at once.
    public var gain: Double { Double(gainQ16.load(ordering: .relaxed)) / Double(Self.unity) }

    public func setGain(_ gain: Double) {
        let clamped = gain.isNaN ? 1 : min(max(gain, 0), 1)
        gainQ16.store(Int((clamped * Double(Self.unity)).rounded()), ordering: .relaxed)
    }

    /// Opens the device (clear errors for a wrong name, busy device,
    /// unsupported format) and starts the playback thread.
    public func start() throws(AudioError) {
        let config = configuration
        let pcm: PCMHandle
        switch PCMHandle.open(config.device, stream: SND_PCM_STREAM_PLAYBACK, format: config.format, alsa: alsa) {
        case .success(let handle): pcm = handle
        case .failure(let status):
            throw AudioError.from(status, device: config.device.name, requested: config.format.description, alsa: alsa)
        }
        negotiatedRate.store(pcm.negotiated.sampleRate, ordering: .relaxed)
        logger.info("playback opened", metadata: ["device": "\(config.device)", "format": "\(pcm.negotiated)"])
        let box = HandleBox(pcm)
        try thread.withLock { (current: inout AudioThread?) throws(AudioError) in
            guard current == nil else { return }
            shuttingDown.store(false, ordering: .sequentiallyConsistent)
            current = try AudioThread(name: config.threadName) { self.run(box: box) }
        }
    }

    /// Queues mono samples at `sampleRate`; they are resampled to the device
    /// rate here, on the caller's thread, so the playback thread only copies.
    /// `cue`: a sound, not words (`isTalking` stays false for it).
    public func enqueue(_ samples: [Int16], sampleRate: Int, cue: Bool = false) {
        guard !samples.isEmpty else { return }
        let rate = deviceSampleRate > 0 ? deviceSampleRate : configuration.format.sampleRate
        let converted = PolyphaseResampler.resample(samples, from: sampleRate, to: rate)
        let limit = Int(configuration.maximumQueuedSeconds * Double(rate))
        let accepted = queue.withLock { queued -> Bool in
            guard queued.reduce(converted.count, { $0 + $1.samples.count }) <= limit else { return false }
            busy.store(true, ordering: .releasing)
            queued.append((converted, cue))
            return true
        }
        guard accepted else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        wake.signal()
    }

    /// Stops at once: drops the queue and the device buffer (snd_pcm_drop)
    /// and returns when the playback thread has done so.
    public func stopSpeaking() {
        guard thread.withLock({ $0 != nil }) else { return }
        writtenAtStopRequest.store(written.load(ordering: .acquiring), ordering: .relaxed)
        let ticket = stopRequests.add(1, ordering: .sequentiallyConsistent).newValue
        wake.signal()
        while stopsDone.load(ordering: .acquiring) < ticket {
            var none = pollfd()
            _ = Glibc.poll(&none, 0, 1)
        }
    }

    /// Waits until everything queued has been played.
    public func drain() async {
        while busy.load(ordering: .acquiring) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Blocking variant of `drain` for threads outside the cooperative pool.
    public func waitUntilIdle() {
        while busy.load(ordering: .acquiring) {
            var none = pollfd()
            _ = Glibc.poll(&none, 0, 2)
        }
    }

    /// Stops playback and joins the thread (the service can be started again).
    public func shutdown() {
        thread.withLock { current in
            guard let running = current else { return }
            shuttingDown.store(true, ordering: .sequentiallyConsistent)
            wake.signal()
            running.join()
            current = nil
        }
    }

    // MARK: - The playback thread

    private func setSpeaking(_ value: Bool) {
        guard speaking.exchange(value, ordering: .acquiringAndReleasing) != value else { return }
        configuration.onSpeakingChanged?(value)
    }

    private func run(box: HandleBox) {
        // Take sole ownership, so dropping `pcm` really closes the device.
        var pcm: PCMHandle? = box.take()
        guard let format = pcm?.negotiated else { return }
        configuration.echoReference?.prepare(format: format)
        let channels = format.channels
        let period = format.periodFrames
        let sample = format.format
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: period * channels * 4, alignment: 16)
        defer { buffer.deallocate() }
        var fds = [pollfd](repeating: pollfd(), count: 16)
        fds[0] = pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)
        var pcmFds = fds.withUnsafeMutableBufferPointer { pcm!.pollDescriptors(into: $0.baseAddress! + 1, capacity: 15) }
        var backOff: Int32 = 100
        var current: [Int16] = []
        var currentIsCue = true
        var offset = 0
        var stopsSeen = stopsDone.load(ordering: .relaxed)
        var paceStart: Int64 = 0
        var pacedFrames: Int64 = 0

        func waitOnWake(milliseconds: Int32) {
            var fd = pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)
            _ = alsa.poll(&fd, 1, milliseconds)
            wake.consume()
        }
        func finish() {
            if let pcm {
                _ = alsa.drop(pcm.raw)
                _ = alsa.prepare(pcm.raw)
            }
            configuration.echoReference?.dropped()
            pacedFrames = 0
            talking.store(false, ordering: .releasing)
            setSpeaking(false)
        }
        /// A block begins, or the rest of one after the device was reopened:
        /// speaking (pacing from now when it was not), and talking from the
        /// first block of words until all has played out (set after
        /// speaking, so talking is never seen without it).
        func startSpeaking() {
            if !isSpeaking {
                paceStart = AudioThread.monotonicNanoseconds()
                pacedFrames = 0
            }
            setSpeaking(true)
            if !currentIsCue { talking.store(true, ordering: .releasing) }
        }
        /// The open device, reopening it after it vanished (unplugged USB speaker).
        func device() -> PCMHandle? {
            if let pcm { return pcm }
            guard case .success(let handle) = PCMHandle.open(configuration.device, stream: SND_PCM_STREAM_PLAYBACK,
                                                             format: configuration.format, alsa: alsa) else { return nil }
            pcm = handle
            pcmFds = fds.withUnsafeMutableBufferPointer { handle.pollDescriptors(into: $0.baseAddress! + 1, capacity: 15) }
            negotiatedRate.store(handle.negotiated.sampleRate, ordering: .relaxed)
            configuration.echoReference?.prepare(format: handle.negotiated)
            reopens.add(1, ordering: .relaxed)
            backOff = 100
            return handle
        }

        while !shuttingDown.load(ordering: .acquiring) {
            let requested = stopRequests.load(ordering: .acquiring)
            if requested > stopsSeen {
                queue.withLock { $0.removeAll() }
                current = []
                offset = 0
                finish()
                framesAfterStop.store(written.load(ordering: .relaxed) - writtenAtStopRequest.load(ordering: .relaxed), ordering: .relaxed)
                busy.store(false, ordering: .releasing)
                stopsSeen = requested
                stopsDone.store(requested, ordering: .releasing)
                continue
            }
            if offset >= current.count {
                let next = queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                if let next {
                    current = next.samples
                    currentIsCue = next.cue
                    offset = 0
                    startSpeaking()
                    continue
                }
                if isSpeaking, let pcm {
                    // Let the device play out what it holds, waking for stop requests.
                    let (rc, queued) = alsa.delay(pcm.raw)
                    if rc >= 0 && queued > 0 && stopRequests.load(ordering: .acquiring) == stopsSeen {
                        waitOnWake(milliseconds: Int32(max(1, min(10, queued * 1000 / format.sampleRate))))
                        continue
                    }
                    finish()
                }
                // Under the lock: an enqueue between the check and the store
                // would otherwise be left with `busy` false (drain returning early).
                queue.withLock { if $0.isEmpty { busy.store(false, ordering: .releasing) } }
                waitOnWake(milliseconds: 1_000)
                continue
            }
            guard let handle = device() else {
                // No device: this speech is lost, but the service stays up and retries.
                queue.withLock { $0.removeAll() }
                current = []
                offset = 0
                finish()
                busy.store(false, ordering: .releasing)
                waitOnWake(milliseconds: backOff)
                backOff = min(backOff * 2, 5_000)
                continue
            }
            // The rest of a block after the device failed and was reopened
            // (`finish` ended speaking): it is heard, so it is speaking again.
            if !isSpeaking { startSpeaking() }
            let frames = min(period, current.count - offset)
            // One atomic load a period; a product of Int16 and Q16 cannot overflow Int.
            let gain = gainQ16.load(ordering: .relaxed)
            current.withUnsafeBufferPointer { source in
                for i in 0..<frames {
                    let s = gain == Self.unity ? source[offset + i] : Int16(truncatingIfNeeded: (Int(source[offset + i]) * gain) >> 16)
                    for c in 0..<channels {
                        switch sample {
                        case .s16: buffer.storeBytes(of: s, toByteOffset: (i * channels + c) * 2, as: Int16.self)
                        case .s32: buffer.storeBytes(of: Int32(s) << 16, toByteOffset: (i * channels + c) * 4, as: Int32.self)
                        }
                    }
                }
            }
            switch ALSAStatus.check(.writei, { alsa.writei(handle.raw, buffer, UInt(frames)) }) {
            case .success(let done) where done > 0:
                offset += done
                written.add(done, ordering: .relaxed)
                if let reference = configuration.echoReference {
                    // The delay now counts this period too: what was queued before it.
                    let (rc, queued) = alsa.delay(handle.raw)
                    reference.played(buffer, frames: done, delayFrames: rc >= 0 ? max(0, queued - done) : 0)
                }
                if configuration.pacing == .realTime {
                    pacedFrames += Int64(done)
                    let due = paceStart + pacedFrames * 1_000_000_000 / Int64(format.sampleRate)
                    // Wait until due; an enqueue may wake us early, a stop or shutdown ends the wait.
                    while stopRequests.load(ordering: .acquiring) == stopsSeen && !shuttingDown.load(ordering: .acquiring) {
                        let wait = due - AudioThread.monotonicNanoseconds()
                        if wait <= 0 { break }
                        waitOnWake(milliseconds: Int32((wait + 999_999) / 1_000_000))
                    }
                }
            case .success:
                _ = fds.withUnsafeMutableBufferPointer { alsa.poll($0.baseAddress!, 1 + pcmFds, 100) }
            case .failure(let failure) where failure.errno == EAGAIN:
                _ = fds.withUnsafeMutableBufferPointer { alsa.poll($0.baseAddress!, 1 + pcmFds, 100) }
            case .failure(let failure) where failure.errno == EPIPE || failure.errno == ESTRPIPE:
                underruns.add(1, ordering: .relaxed)
                _ = alsa.recover(handle.raw, -failure.errno, 1)
            case .failure(let failure):
                // The device failed (e.g. unplugged): close it; the next write reopens it.
                lastErrno.store(failure.errno, ordering: .relaxed)
                finish()
                pcm = nil
            }
        }
        if let pcm { _ = alsa.drop(pcm.raw) }
        talking.store(false, ordering: .releasing)
        setSpeaking(false)
        busy.store(false, ordering: .releasing)
    }
}

/// Hands a PCM handle to the playback thread, which takes it out so that it
/// is the only owner (closing the device when it drops the handle).
private final class HandleBox: @unchecked Sendable {
    // @unchecked: written in init, taken once by the playback thread.
    private var handle: PCMHandle?
    init(_ handle: PCMHandle) { self.handle = handle }
    func take() -> PCMHandle? {
        defer { handle = nil }
        return handle
    }
}

import CALSA
import Foundation
import CParleyShims
import Glibc
import Logging
import Synchronization

/// How a capture or playback loop is paced.
public enum Pacing: String, Sendable, Codable {
    /// As the PCM delivers: a sound card's clock, or as fast as possible for
    /// the file plugin (whose null slave never waits).
    case device
    /// At most one second of audio per second of wall-clock time, for file
    /// devices that should behave like a microphone (simulated board, demos).
    case realTime
}

/// Everything the capture service needs, usually read from configuration.
public struct CaptureConfiguration: Sendable {
    public var device: PCMDevice
    /// What to ask the card for; rate and channels are converted to `outputSampleRate` mono.
    public var format: PCMFormat
    /// Rate of the audio in the ring (the recogniser's rate).
    public var outputSampleRate: Int
    /// Seconds of history the ring keeps.
    public var ringSeconds: Double
    /// SCHED_FIFO priority to request for the capture thread (nil: don't ask).
    /// The default, 20, is what dist/parleyd.service permits (LimitRTPRIO=20):
    /// above every normal thread, below the kernel's threaded interrupt
    /// handlers (50), which the sound card's own interrupt needs.
    public var realtimePriority: Int32?
    public var pacing: Pacing
    /// Back-off between reopen attempts after the device vanished: starts at
    /// `reconnectInitialMilliseconds`, doubles up to `reconnectMaximumMilliseconds`.
    public var reconnectInitialMilliseconds: Int
    public var reconnectMaximumMilliseconds: Int
    /// Name of the capture thread (visible in top -H, ps -L).
    public var threadName: String
    /// Device frames to capture before the service reports `.endOfInput`
    /// and idles until stopped: the length of a file source (after its end
    /// ALSA's file plugin repeats its last buffer). nil for microphones.
    public var inputFrameLimit: Int?
    /// Clear each period before reading it, for a file source that may run
    /// dry and fill up again (`AudioSpool`): past the end of its input the
    /// file plugin returns the period without writing to it (measured on
    /// alsa-lib 1.2.8), which would otherwise repeat the last audio.
    public var silenceBeyondInput = false
    /// A file whose shared lock (flock(2), never waited for) is held around
    /// each read: a writer appending to the input under an exclusive lock
    /// (`AudioSpool.append`) is never read half-way. A file grows page by
    /// page as a write proceeds, and a writer preempted mid-append on a busy
    /// CPU would otherwise leave a reader at the end of a half-written
    /// utterance, which then gets silence in its middle. While the writer
    /// holds it, a period of silence is captured instead of a read.
    public var inputLock: URL?

    public init(
        device: PCMDevice,
        format: PCMFormat = .microphone,
        outputSampleRate: Int = 16_000, ringSeconds: Double = 8, realtimePriority: Int32? = 20,
        pacing: Pacing = .device, reconnectInitialMilliseconds: Int = 100, reconnectMaximumMilliseconds: Int = 5_000,
        threadName: String = "parley-capture", inputFrameLimit: Int? = nil
    ) {
        self.inputFrameLimit = inputFrameLimit
        self.device = device
        self.format = format
        self.outputSampleRate = outputSampleRate
        self.ringSeconds = ringSeconds
        self.realtimePriority = realtimePriority
        self.pacing = pacing
        self.reconnectInitialMilliseconds = reconnectInitialMilliseconds
        self.reconnectMaximumMilliseconds = reconnectMaximumMilliseconds
        self.threadName = threadName
    }
}

extension CaptureConfiguration {
    /// Capture from a 16-bit WAV file through ALSA's file plugin (no sound
    /// card): the device format is the file's, capture ends at the file's end
    /// (`CaptureState.endOfInput`). `workDirectory` receives the raw copy the
    /// plugin reads. `.realTime` behaves like a microphone; `.device` runs as
    /// fast as possible.
    public static func file(wav: URL, workDirectory: URL, pacing: Pacing = .realTime,
                            ringSeconds: Double = 8) throws -> CaptureConfiguration {
        let (device, rate, channels) = try FileAudioDevice.capture(wav: wav, workDirectory: workDirectory)
        let frames = try WAVFile.readInterleaved(wav).samples.count / channels
        // The microphone's period in time (30 ms), at the file's rate.
        let period = max(16, rate * PCMFormat.microphone.periodFrames / PCMFormat.microphone.sampleRate)
        return CaptureConfiguration(
            device: device,
            format: PCMFormat(sampleRate: rate, channels: channels, periodFrames: period, bufferFrames: period * 8),
            ringSeconds: ringSeconds, realtimePriority: nil, pacing: pacing, inputFrameLimit: frames)
    }
}

/// The capture service's state, readable from any thread.
public enum CaptureState: UInt8, Sendable, CustomStringConvertible {
    case stopped, running
    /// The device vanished (e.g. USB microphone unplugged); reopening with back-off.
    case reconnecting
    /// A file source reached `inputFrameLimit`; idle until stopped.
    case endOfInput

    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .running: "running"
        case .reconnecting: "reconnecting"
        case .endOfInput: "end of input"
        }
    }
}

/// Counters the capture thread updates atomically and other threads read
/// (status display, LEDs, logging). The audio thread never logs.
public final class CaptureStatus: Sendable {
    let stateValue = Atomic<UInt8>(CaptureState.stopped.rawValue)
    let periodCount = Atomic<Int>(0)
    let frameCount = Atomic<Int>(0)
    let overrunCount = Atomic<Int>(0)
    let reconnectCount = Atomic<Int>(0)
    let lastErrnoValue = Atomic<Int32>(0)
    let threadIDValue = Atomic<Int32>(0)
    let cpuNanosecondsValue = Atomic<Int64>(0)
    let realtimeValue = Atomic<Bool>(false)
    let delayFramesValue = Atomic<Int>(0)
    let deviceRateValue = Atomic<Int>(0)
    let levelValue = Atomic<Int>(0)

    public var state: CaptureState { CaptureState(rawValue: stateValue.load(ordering: .acquiring)) ?? .stopped }
    /// Successful reads from the device.
    public var periods: Int { periodCount.load(ordering: .relaxed) }
    /// Device frames read (before conversion).
    public var frames: Int { frameCount.load(ordering: .relaxed) }
    /// Overruns (-EPIPE) recovered with snd_pcm_recover.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }
    /// Times the device was reopened after vanishing.
    public var reconnects: Int { reconnectCount.load(ordering: .relaxed) }
    /// errno of the last device failure (0: none).
    public var lastErrno: Int32 { lastErrnoValue.load(ordering: .relaxed) }
    /// Kernel thread id of the capture thread (0 before start).
    public var threadID: Int32 { threadIDValue.load(ordering: .relaxed) }
    /// CPU time the capture thread used, published when it stops.
    public var cpuNanoseconds: Int64 { cpuNanosecondsValue.load(ordering: .acquiring) }
    /// Whether SCHED_FIFO was granted.
    public var isRealtime: Bool { realtimeValue.load(ordering: .relaxed) }
    /// Device frames captured but not yet read after the last read
    /// (`snd_pcm_delay`): how far the ring lags the microphone, which the
    /// echo reference adds to place what is played (`EchoReference`).
    public var delayFrames: Int { delayFramesValue.load(ordering: .relaxed) }
    /// The device's negotiated rate (0 before it is open).
    public var deviceRate: Int { deviceRateValue.load(ordering: .relaxed) }

    /// The microphone's level now, 0...32767: the loudest sample of the
    /// latest period, or less than the level before when that was louder
    /// (it falls by a quarter every 10 ms of audio, as a meter's needle would), so
    /// whoever samples it a few times a second still sees a word's peak.
    /// One atomic store a period by the capture thread, nothing more.
    public var level: Int { levelValue.load(ordering: .relaxed) }

    func set(_ state: CaptureState) { stateValue.store(state.rawValue, ordering: .releasing) }

    /// All counters at once, for status displays and periodic logging by another thread.
    public var snapshot: Snapshot {
        Snapshot(state: state, periods: periods, frames: frames, overruns: overruns, reconnects: reconnects,
                 lastErrno: lastErrno, isRealtime: isRealtime)
    }

    public struct Snapshot: Sendable, Equatable, CustomStringConvertible {
        public var state: CaptureState
        public var periods: Int
        public var frames: Int
        public var overruns: Int
        public var reconnects: Int
        public var lastErrno: Int32
        public var isRealtime: Bool

        public var description: String {
            "capture \(state): \(periods) periods, \(frames) frames, \(overruns) overruns, \(reconnects) reconnects"
                + (lastErrno != 0 ? ", last errno \(lastErrno)" : "") + (isRealtime ? ", SCHED_FIFO" : "")
        }
    }
}

/// Captures from an ALSA PCM on a dedicated named thread, converts to 16 kHz
/// mono Int16 and writes every period into `ring`. Start and stop from any
/// thread; read `ring` and `status` from any thread.
public final class CaptureService: Sendable {
    public let configuration: CaptureConfiguration
    /// The audio, for the recogniser and anyone who needs the recent past.
    public let ring: AudioRing
    public let status = CaptureStatus()
    private let alsa: ALSAFunctions
    private let logger: Logger
    private let running = Mutex<AudioThread?>(nil)
    private let control = StopFlag()
    private let wake: WakeSignal

    public convenience init(configuration: CaptureConfiguration, logger: Logger = Logger(label: "parley.audio.capture")) throws(AudioError) {
        try self.init(configuration: configuration, logger: logger, alsa: .system)
    }

    init(configuration: CaptureConfiguration, logger: Logger, alsa: ALSAFunctions) throws(AudioError) {
        try configuration.format.validate()
        self.configuration = configuration
        self.alsa = alsa
        self.logger = logger
        ring = AudioRing(seconds: configuration.ringSeconds, sampleRate: configuration.outputSampleRate)
        wake = try WakeSignal()
    }

    deinit { stop() }

    /// Opens the device (throwing a clear error for a wrong name, a busy
    /// device or an unsupported format) and starts the capture thread.
    public func start() throws(AudioError) {
        let config = configuration
        // Held here only until the loop takes it: a device that vanishes at
        // once must be closed when the loop lets go of it, not kept open by
        // this frame until start() returns.
        var opened: PCMHandle? = try openDevice(config)
        logger.info("capture opened", metadata: [
            "device": "\(config.device)", "format": "\(opened.map { "\($0.negotiated)" } ?? "")",
        ])
        try running.withLock { (thread: inout AudioThread?) throws(AudioError) in
            guard thread == nil else { return }
            control.stopping.store(false, ordering: .sequentiallyConsistent)
            wake.consume()
            let loop = CaptureLoop(pcm: opened, configuration: config, alsa: alsa, ring: ring, status: status,
                                   control: control, wake: wake, logger: logger)
            opened = nil
            let transfer = UncheckedTransfer(loop)
            status.set(.running)
            thread = try AudioThread(name: config.threadName) { transfer.value.run() }
        }
    }

    /// Opens the device, or throws the error a person can act on.
    private func openDevice(_ config: CaptureConfiguration) throws(AudioError) -> PCMHandle {
        switch PCMHandle.open(config.device, stream: SND_PCM_STREAM_CAPTURE, format: config.format, alsa: alsa) {
        case .success(let handle):
            return handle
        case .failure(let failure):
            status.lastErrnoValue.store(failure.errno, ordering: .relaxed)
            throw AudioError.from(failure, device: config.device.name, requested: config.format.description, alsa: alsa)
        }
    }

    /// Like `start()`, but a device that cannot be opened now (a USB
    /// microphone not plugged in yet, a card another program holds, a wrong
    /// name fixed by plugging in the right card) does not stop the caller:
    /// the capture thread starts in `.reconnecting` and reopens the device
    /// with the same back-off as after an unplug. Returns why the device
    /// could not be opened (nil when it was), for the caller to say once;
    /// `problem` keeps it for status displays until the device is back.
    @discardableResult
    public func startOrKeepTrying() -> AudioError? {
        do {
            try start()
            return nil
        } catch {
            launchReconnecting(after: error)
            return error
        }
    }

    /// Why the device is not delivering audio, while it is not (nil when
    /// running): the reason it could not be opened at start, or the errno of
    /// the last failed reopen.
    public var problem: String? {
        guard status.state == .reconnecting else { return nil }
        let lastErrno = status.lastErrno
        if let initial = initialFailure.withLock({ $0 }), status.reconnects == 0 { return initial }
        return lastErrno != 0
            ? "audio device '\(configuration.device.name)' lost: \(alsa.strerror(-lastErrno)) (errno \(lastErrno))"
            : "audio device '\(configuration.device.name)' lost"
    }

    /// The description of the error `startOrKeepTrying` met, until the
    /// device was opened once.
    private let initialFailure = Mutex<String?>(nil)

    private func launchReconnecting(after error: AudioError) {
        initialFailure.withLock { $0 = error.description }
        let config = configuration
        running.withLock { thread in
            guard thread == nil else { return }
            control.stopping.store(false, ordering: .sequentiallyConsistent)
            wake.consume()
            let loop = CaptureLoop(pcm: nil, configuration: config, alsa: alsa, ring: ring, status: status,
                                   control: control, wake: wake, logger: logger)
            let transfer = UncheckedTransfer(loop)
            status.set(.reconnecting)
            do {
                thread = try AudioThread(name: config.threadName) { transfer.value.run() }
            } catch {
                // No thread, no retries: say so (this is the one place it is known).
                status.set(.stopped)
                logger.error("capture thread could not start: \(error)")
            }
        }
    }

    /// Stops promptly: wakes the thread out of poll(2) and joins it.
    public func stop() {
        running.withLock { thread in
            guard let current = thread else { return }
            control.stopping.store(true, ordering: .sequentiallyConsistent)
            wake.signal()
            current.join()
            thread = nil
            status.set(.stopped)
        }
    }

}

/// The stop request shared by a service and its thread (the thread must not
/// reference the service itself, which may be in deinit when it stops).
final class StopFlag: Sendable {
    let stopping = Atomic<Bool>(false)
    var isStopping: Bool { stopping.load(ordering: .acquiring) }
}

/// Hands a non-Sendable value to the one thread that will own it from now on.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The capture thread's body. Everything per period is preallocated: the read
/// buffer, the converter, the poll set. No locks, no logging, no allocation.
final class CaptureLoop {
    private let configuration: CaptureConfiguration
    private let alsa: ALSAFunctions
    private let ring: AudioRing
    private let status: CaptureStatus
    private let service: StopFlag
    private let wake: WakeSignal
    private let logger: Logger
    private var pcm: PCMHandle?
    private var converter: SampleConverter
    private let readBuffer: UnsafeMutableRawPointer
    private let readCapacityFrames: Int
    private let fds: UnsafeMutablePointer<pollfd>
    private let fdCapacity = 16
    private var fdCount = 0
    private var pacingStart: Int64 = 0
    private var pacedFrames: Int64 = 0
    private var totalFrames = 0
    /// The meter's level (CaptureStatus.level), kept here so the thread reads no atomic back.
    private var meter = 0
    /// `CaptureConfiguration.inputLock` open for flock(2), or -1.
    private let inputLock: Int32

    /// `pcm` nil: the device could not be opened at start; the loop begins
    /// by reconnecting, with the requested format until one is negotiated.
    init(pcm: PCMHandle?, configuration: CaptureConfiguration, alsa: ALSAFunctions, ring: AudioRing,
         status: CaptureStatus, control service: StopFlag, wake: WakeSignal, logger: Logger) {
        self.pcm = pcm
        self.configuration = configuration
        self.alsa = alsa
        self.ring = ring
        self.status = status
        self.service = service
        self.wake = wake
        self.logger = logger
        let format = pcm?.negotiated ?? configuration.format
        readCapacityFrames = max(format.periodFrames, configuration.format.periodFrames) * 4
        readBuffer = .allocate(byteCount: readCapacityFrames * 4 * 8, alignment: 16)
        converter = SampleConverter(input: format, outputRate: configuration.outputSampleRate, maxFrames: readCapacityFrames)
        fds = .allocate(capacity: fdCapacity)
        fds.initialize(repeating: pollfd(), count: fdCapacity)
        inputLock = configuration.inputLock.map { open($0.path, O_RDONLY | O_CLOEXEC) } ?? -1
        if let path = configuration.inputLock?.path, inputLock < 0 {
            logger.warning("capture: cannot open \(path) to lock it around reads (errno \(errno)); reading without the lock")
        }
        refreshPollSet()
        status.deviceRateValue.store(format.sampleRate, ordering: .relaxed)
    }

    deinit {
        if inputLock >= 0 { close(inputLock) }
        readBuffer.deallocate()
        fds.deallocate()
    }

    func run() {
        status.threadIDValue.store(parley_gettid(), ordering: .relaxed)
        if let priority = configuration.realtimePriority {
            let rc = AudioThread.requestRealtime(priority: priority)
            status.realtimeValue.store(rc == 0, ordering: .relaxed)
            if rc != 0 {   // said once, at start, never inside the loop
                logger.notice("capture: SCHED_FIFO priority \(priority) not permitted (errno \(rc)); running at normal priority")
            }
        }
        let cpuStart = AudioThread.threadCPUTimeNanoseconds()
        if let pcm { _ = alsa.start(pcm.raw) }
        pacingStart = AudioThread.monotonicNanoseconds()
        while !service.isStopping {
            guard let pcm else {
                reconnect()
                continue
            }
            var period = min(converter.input.periodFrames, readCapacityFrames)
            if let limit = configuration.inputFrameLimit {
                period = min(period, limit - totalFrames)
                if period <= 0 {
                    status.set(.endOfInput)
                    sleepInterruptibly(milliseconds: -1)
                    continue
                }
            }
            if configuration.silenceBeyondInput {
                readBuffer.initializeMemory(as: UInt8.self, repeating: 0, count: period * converter.input.channels * 4)
            }
            if inputLock >= 0 && flock(inputLock, LOCK_SH | LOCK_NB) != 0 {
                // An append is under way: silence now, its samples whole afterwards.
                deliver(frames: period)
                continue
            }
            let result = ALSAStatus.check(.readi) { alsa.readi(pcm.raw, readBuffer, UInt(period)) }
            if inputLock >= 0 { flock(inputLock, LOCK_UN) }
            switch result {
            case .success(let frames) where frames > 0:
                deliver(frames: frames)
                // Non-blocking; a failure (a file device may not say) reads as no lag.
                let (rc, unread) = alsa.delay(pcm.raw)
                status.delayFramesValue.store(rc >= 0 ? max(0, unread) : 0, ordering: .relaxed)
            case .success:
                waitForDevice(pcm)
            case .failure(let failure) where failure.errno == EAGAIN:
                waitForDevice(pcm)
            case .failure(let failure) where failure.errno == EPIPE || failure.errno == ESTRPIPE:
                status.overrunCount.add(1, ordering: .relaxed)
                let recovered = ALSAStatus.check(.recover) { Int(alsa.recover(pcm.raw, -failure.errno, 1)) }
                if case .failure(let lost) = recovered { deviceLost(lost.errno) }
            case .failure(let failure):
                deviceLost(failure.errno)
            }
        }
        pcm = nil
        status.cpuNanosecondsValue.store(AudioThread.threadCPUTimeNanoseconds() - cpuStart, ordering: .releasing)
    }

    @inline(__always)
    private func deliver(frames: Int) {
        totalFrames += frames
        let produced = converter.convert(readBuffer, frames: frames)
        ring.write(UnsafeBufferPointer(start: converter.output, count: produced))
        meter = Self.meter(previous: meter, samples: converter.output, count: produced)
        status.levelValue.store(meter, ordering: .relaxed)
        status.periodCount.add(1, ordering: .relaxed)
        status.frameCount.add(frames, ordering: .relaxed)
        if configuration.pacing == .realTime {
            pacedFrames += Int64(frames)
            let due = pacingStart + pacedFrames * 1_000_000_000 / Int64(converter.input.sampleRate)
            let wait = due - AudioThread.monotonicNanoseconds()
            if wait > 0 { sleepInterruptibly(milliseconds: Int32((wait + 999_999) / 1_000_000)) }
        }
    }

    /// The period's peak, or the previous level less a quarter for each
    /// 10 ms (160 samples) of the period when that is higher: the needle
    /// falls at the same speed whatever the period. A plain loop over the
    /// converted samples, no allocation.
    @inline(__always)
    static func meter(previous: Int, samples: UnsafePointer<Int16>, count: Int) -> Int {
        var peak = 0
        for index in 0..<count {
            let sample = Int(samples[index])
            peak = max(peak, sample < 0 ? -sample : sample)
        }
        var fallen = previous
        for _ in 0..<max(1, count / 160) { fallen = fallen * 3 / 4 }
        return max(min(peak, 32_767), fallen)
    }

    /// Blocks in poll(2) on the PCM descriptors and the wake eventfd.
    private func waitForDevice(_ pcm: PCMHandle) {
        let polled = ALSAStatus.check(.poll) { Int(alsa.poll(fds, fdCount, 1_000)) }
        if case .failure(let failure) = polled { deviceLost(failure.errno); return }
        if fds[0].revents != 0 { return }                 // stop requested
        if fdCount > 1 {
            // snd_pcm_poll_descriptors_revents demangles the plugin's events; POLLERR
            // needs no handling here because the next snd_pcm_readi reports the error.
            let checked = ALSAStatus.check(.pollDescriptors) { Int(alsa.pollRevents(pcm.raw, fds + 1, UInt32(fdCount - 1)).0) }
            if case .failure(let failure) = checked { deviceLost(failure.errno); return }
        }
    }

    private func sleepInterruptibly(milliseconds: Int32) {
        var fd = pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)
        _ = alsa.poll(&fd, 1, milliseconds)
    }

    private func deviceLost(_ errnoValue: Int32) {
        status.lastErrnoValue.store(errnoValue, ordering: .relaxed)
        status.set(.reconnecting)
        pcm = nil                                          // snd_pcm_close in PCMHandle.deinit
        refreshPollSet()
    }

    /// Reopens the device with exponential back-off until it is back or we stop.
    private func reconnect() {
        var delay = configuration.reconnectInitialMilliseconds
        while !service.isStopping {
            sleepInterruptibly(milliseconds: Int32(delay))
            if service.isStopping { return }
            switch PCMHandle.open(configuration.device, stream: SND_PCM_STREAM_CAPTURE, format: configuration.format, alsa: alsa) {
            case .success(let handle):
                if handle.negotiated != converter.input {
                    converter = SampleConverter(input: handle.negotiated, outputRate: configuration.outputSampleRate,
                                                maxFrames: readCapacityFrames)
                    status.deviceRateValue.store(handle.negotiated.sampleRate, ordering: .relaxed)
                }
                pcm = handle
                refreshPollSet()
                _ = alsa.start(handle.raw)
                pacingStart = AudioThread.monotonicNanoseconds()
                pacedFrames = 0
                status.reconnectCount.add(1, ordering: .relaxed)
                status.set(.running)
                return
            case .failure(let failure):
                status.lastErrnoValue.store(failure.errno, ordering: .relaxed)
                delay = min(delay * 2, configuration.reconnectMaximumMilliseconds)
            }
        }
    }

    private func refreshPollSet() {
        fds[0] = pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)
        fdCount = 1
        if let pcm { fdCount += pcm.pollDescriptors(into: fds + 1, capacity: fdCapacity - 1) }
    }
}

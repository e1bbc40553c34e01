import CALSA
import CParleyShims
import Foundation
import Glibc
import Logging
import Synchronization

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

import Synchronization

/// What the device played, as 16 kHz mono samples numbered by the capture
/// stream's positions: sample `p` of the reference is what the speaker
/// sent out while the microphone captured sample `p` of the capture ring.
/// The echo canceller reads it beside the microphone (`FrontEndSource`).
///
/// One writer, the playback thread (`PlaybackService`'s reference tap):
/// after each write it hands over the period it wrote, in the device's
/// format, and the device's delay (`snd_pcm_delay`: frames queued before
/// it). The period is converted to 16 kHz mono by the converter the
/// capture path uses for the microphone (`SampleConverter`) and placed at
///
///     capture clock now (ring position + capture delay) + playback delay at 16 kHz
///
/// Consecutive periods follow each other; a period whose computed place
/// differs from the running one by more than `resyncSamples` (playback
/// restarted, an underrun, clocks drifting apart) moves the running place
/// there, the gap silent. After `snd_pcm_drop` (a stop) what was queued
/// will never be heard: `dropped()` cuts the reference at the clock's now.
///
/// Readers (the listen thread) copy positions that the capture ring has
/// already written, so they lie behind the writer's place by at least the
/// playback delay: the writer fills positions ahead of every reader.
/// Positions not written (nothing played, older than the ring holds, not
/// played yet) read as silence. Writing and reading allocate and lock
/// nothing (docs/architecture.md, real-time rules 1 and 4).
public final class EchoReference: EchoReferenceReading, @unchecked Sendable {
    // @unchecked: `storage` and the converter state are written by the one
    // writer thread only; readers copy positions behind the published `end`
    // (see the type comment). The converter is made in `prepare`, before
    // the writer's loop, by the thread that then writes.

    /// Samples held (a power of two, about two seconds).
    public let capacity: Int
    /// Running places that differ by more than this (20 ms) are resynchronised.
    public static let resyncSamples: Int64 = 320
    private let mask: Int
    private let storage: UnsafeMutablePointer<Int16>
    /// One past the newest position written.
    private let end = Atomic<Int64>(0)
    /// The capture stream's clock: the position the sample being captured
    /// now will have (the capture ring's write position plus what the
    /// capture device holds unread). Set once, when capture is made (the
    /// daemon makes playback first); until then nothing is written.
    private let clock = AtomicLazyReference<CaptureClock>()
    private var converter: SampleConverter?
    /// Where the next period goes when it follows the last (nil: not yet placed).
    private var next: Int64?
    /// Periods whose place had to be moved (the first of each run of speech counts too).
    private let resyncCount = Atomic<Int>(0)

    public init(seconds: Double = 2) {
        var size = 1
        while size < Int(seconds * 16_000) { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    /// A reference on a given clock (tests).
    convenience init(seconds: Double = 2, captureClock: @escaping @Sendable () -> Int64) {
        self.init(seconds: seconds)
        _ = clock.storeIfNil(CaptureClock(now: captureClock))
    }

    /// Takes `capture`'s clock: its ring's write position plus the frames
    /// the capture device holds unread (`snd_pcm_delay`, published by the
    /// capture thread). The first capture connected stays.
    public func connect(_ capture: CaptureService) {
        let ring = capture.ring, status = capture.status
        let rate = capture.configuration.outputSampleRate
        _ = clock.storeIfNil(CaptureClock {
            ring.writePosition + Int64(status.delayFrames * rate / max(1, status.deviceRate))
        })
    }

    /// Whether a capture clock is connected.
    public var isConnected: Bool { clock.load() != nil }

    deinit { storage.deallocate() }

    /// Times the writer moved its running place (playback started, or
    /// drifted more than `resyncSamples` from the clocks).
    public var resyncs: Int { resyncCount.load(ordering: .relaxed) }

    /// The newest position written.
    public var writtenEnd: Int64 { end.load(ordering: .acquiring) }

    // MARK: The writer (playback thread)

    /// Makes the converter for the playback device's format; call on the
    /// writer thread before its loop (and again if the format changes).
    /// Allocates (once), so not per period.
    public func prepare(format: PCMFormat) {
        if converter?.input == format { return }
        converter = SampleConverter(input: format, outputRate: 16_000, maxFrames: max(format.periodFrames, 1) * 4)
        next = nil
    }

    /// The playback thread wrote `frames` frames of `raw` (the device's
    /// format given to `prepare`); `delayFrames` were queued before them.
    public func played(_ raw: UnsafeRawPointer, frames: Int, delayFrames: Int) {
        guard let converter, let clock = clock.load() else { return }
        var offset = 0
        let frameBytes = converter.input.channels * (converter.input.format == .s16 ? 2 : 4)
        while offset < frames {
            let chunk = min(frames - offset, converter.maxFrames)
            let produced = converter.convert(raw + offset * frameBytes, frames: chunk)
            // The converter hands each sample out its filter's delay late:
            // placed that much earlier, where it was played (a reference
            // later than its echo could not be cancelled; the microphone's
            // own converter only delays the echo, which the filter absorbs).
            let delay = Int64((delayFrames + offset) * 16_000 / converter.input.sampleRate - converter.delayOutputSamples)
            write(UnsafeBufferPointer(start: converter.output, count: produced), at: clock.now() + delay)
            offset += chunk
        }
    }

    /// Writes samples heard from about `position` on (the running place when close to it).
    func write(_ samples: UnsafeBufferPointer<Int16>, at position: Int64) {
        var place = next ?? position
        if abs(place - position) > Self.resyncSamples || next == nil {
            place = position
            resyncCount.add(1, ordering: .relaxed)
        }
        let written = end.load(ordering: .relaxed)
        if place > written {
            // The gap since the last write is silence (bounded by the ring).
            var p = max(written, place - Int64(capacity))
            while p < place { storage[Int(p) & mask] = 0; p += 1 }
        }
        for i in 0..<samples.count { storage[Int(place + Int64(i)) & mask] = samples[i] }
        next = place + Int64(samples.count)
        end.store(place + Int64(samples.count), ordering: .releasing)
    }

    /// The playback device dropped what it held (a stop): nothing after the
    /// clock's now will be heard.
    public func dropped() {
        guard let now = clock.load()?.now() else { return }
        if end.load(ordering: .relaxed) > now { end.store(now, ordering: .releasing) }
        next = nil
    }

    // MARK: Readers

    /// Copies the reference of `position ..< position + destination.count`:
    /// what was played when those microphone samples were captured, silence
    /// where nothing was.
    public func read(from position: Int64, into destination: UnsafeMutableBufferPointer<Int16>) {
        let written = end.load(ordering: .acquiring)
        let oldest = written - Int64(capacity)
        for i in 0..<destination.count {
            let p = position + Int64(i)
            destination[i] = p >= oldest && p < written && p >= 0 ? storage[Int(p) & mask] : 0
        }
    }
}

/// Where the echo canceller reads what was played at given stream positions.
public protocol EchoReferenceReading {
    /// Fills `destination` with the reference of `position ..< position +
    /// destination.count` (silence where nothing was played). Allocates nothing.
    func read(from position: Int64, into destination: UnsafeMutableBufferPointer<Int16>)
}

/// A reference known in advance (benchmarks, tests): `samples[i]` was
/// played while stream position `i + offset` was captured.
public struct RecordedReference: EchoReferenceReading {
    public let samples: [Int16]
    public let offset: Int64

    public init(_ samples: [Int16], offset: Int64 = 0) {
        self.samples = samples
        self.offset = offset
    }

    public func read(from position: Int64, into destination: UnsafeMutableBufferPointer<Int16>) {
        samples.withUnsafeBufferPointer { source in
            for i in 0..<destination.count {
                let p = position + Int64(i) - offset
                destination[i] = p >= 0 && p < Int64(source.count) ? source[Int(p)] : 0
            }
        }
    }
}

/// The capture stream's clock, shared with the playback thread.
final class CaptureClock: Sendable {
    let now: @Sendable () -> Int64
    init(now: @escaping @Sendable () -> Int64) { self.now = now }
}

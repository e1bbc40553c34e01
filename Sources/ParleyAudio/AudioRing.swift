import CParleyShims
import Synchronization

/// A preallocated ring of 16 kHz mono Int16 samples with a few seconds of
/// history: one producer (the capture thread) and readers that address audio
/// by absolute sample position, so the recogniser can fetch the audio from
/// just before a wake phrase.
///
/// The writer never waits: it overwrites the oldest samples. It is a
/// seqlock: before copying a block the writer publishes the region it is
/// about to write (`claimed`), and only after copying the new write
/// position (`written`). A reader copies what `written` says is there and
/// then re-reads `claimed`; whatever the writer had claimed meanwhile (even
/// a copy still under way) is reported as lost, never handed out torn.
/// Readers block in `waitForSamples` on a futex the writer bumps (no lock on
/// the writer's side), and only once the position the earliest waiter asked
/// for has been written: a reader that wants 40 ms at a time is woken 25
/// times a second, not once per 10 ms capture period (each wake-up is a
/// context switch, most of what idle listening costs: BENCHMARKS.md).
public final class AudioRing: @unchecked Sendable {
    // @unchecked: `storage` is written only by the single producer; readers
    // validate every copy against `written` (see type comment).

    /// Samples the ring holds.
    public let capacity: Int
    /// Sample rate of the audio in the ring (16 kHz for capture).
    public let sampleRate: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Int16>
    /// One past the newest sample completely written.
    private let written = Atomic<Int64>(0)
    /// One past the newest sample the writer may be writing: samples older
    /// than `claimed - capacity` may be overwritten at any moment.
    private let claimed = Atomic<Int64>(0)
    private let futexWord: UnsafeMutablePointer<UInt32>
    /// The smallest `writePosition` a blocked reader waits for (Int64.max: none).
    private let wakeAt = Atomic<Int64>(.max)

    /// A ring holding at least `seconds` of audio at `sampleRate` (rounded up to a power of two).
    public init(seconds: Double, sampleRate: Int = 16_000) {
        let wanted = max(1024, Int((seconds * Double(sampleRate)).rounded(.up)))
        var size = 1
        while size < wanted { size <<= 1 }
        capacity = size
        mask = size - 1
        self.sampleRate = sampleRate
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
        futexWord = .allocate(capacity: 1)
        futexWord.initialize(to: 0)
    }

    deinit {
        storage.deallocate()
        futexWord.deallocate()
    }

    /// Total samples ever written: the position one past the newest sample.
    public var writePosition: Int64 { written.load(ordering: .acquiring) }

    /// The oldest position still held.
    public var oldestPosition: Int64 { max(0, writePosition - Int64(capacity)) }

    /// Producer only: appends samples (overwriting the oldest) and wakes readers.
    /// Allocation- and lock-free.
    public func write(_ samples: UnsafeBufferPointer<Int16>) {
        guard let base = samples.baseAddress, samples.count > 0 else { return }
        var source = base
        var remaining = samples.count
        if remaining > capacity {               // keep only the newest `capacity`
            source += remaining - capacity
            remaining = capacity
        }
        let start = written.load(ordering: .relaxed)
        // Publish the region before touching it; the fence keeps the sample
        // stores below from becoming visible before the claim.
        claimed.store(start + Int64(samples.count), ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        var index = Int(start) & mask
        while remaining > 0 {
            let chunk = min(remaining, capacity - index)
            (storage + index).update(from: source, count: chunk)
            source += chunk
            remaining -= chunk
            index = (index + chunk) & mask
        }
        let end = start + Int64(samples.count)
        written.store(end, ordering: .sequentiallyConsistent)
        // Wake the readers once the earliest of them has what it asked for.
        // The store above and the load below pair with the reader's
        // registration and its re-check of `written` (both sequentially
        // consistent): either the reader sees this write or this sees its target.
        var target = wakeAt.load(ordering: .sequentiallyConsistent)
        while end >= target {
            let (exchanged, current) = wakeAt.compareExchange(
                expected: target, desired: .max, ordering: .sequentiallyConsistent)
            if exchanged {
                parley_futex_bump_and_wake(futexWord)
                break
            }
            target = current
        }
    }

    /// The outcome of a read.
    public struct Read: Sendable, Equatable {
        /// Position of the first sample copied (later than asked if older audio was gone).
        public var position: Int64
        /// Samples copied into the destination.
        public var count: Int
        /// Samples between the asked position and `position` that were lost.
        public var lost: Int64
    }

    /// Copies samples from absolute `position` (at most `destination.count`,
    /// at most up to `writePosition`). Audio older than the ring holds is
    /// skipped and reported in `lost`. Safe from any reader thread.
    public func read(from position: Int64, into destination: UnsafeMutableBufferPointer<Int16>) -> Read {
        guard let out = destination.baseAddress else { return Read(position: position, count: 0, lost: 0) }
        let end = written.load(ordering: .acquiring)
        var start = max(position, end - Int64(capacity))
        start = min(start, end)
        let count = Int(min(Int64(destination.count), end - start))
        var index = Int(start) & mask
        var copied = 0
        while copied < count {
            let chunk = min(count - copied, capacity - index)
            (out + copied).update(from: storage + index, count: chunk)
            copied += chunk
            index = (index + chunk) & mask
        }
        // Seqlock validation: the copies above complete before the claim is
        // read (fence); anything the writer claimed meanwhile may be torn and is lost.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let after = claimed.load(ordering: .relaxed)
        let firstValid = after - Int64(capacity)
        if firstValid > start {
            let overwritten = Int(min(Int64(count), firstValid - start))
            if overwritten > 0 {
                (out).update(from: out + overwritten, count: count - overwritten)
                return Read(position: start + Int64(overwritten), count: count - overwritten, lost: start + Int64(overwritten) - position)
            }
        }
        return Read(position: start, count: count, lost: start - position)
    }

    /// Convenience for readers that accept an allocation: up to `count` samples from `position`.
    public func samples(from position: Int64, count: Int) -> [Int16] {
        var result = [Int16](repeating: 0, count: count)
        let read = result.withUnsafeMutableBufferPointer { self.read(from: position, into: $0) }
        result.removeLast(count - read.count)
        return result
    }

    /// The newest `count` samples (fewer if not yet written), e.g. the audio just before a detection.
    public func latest(_ count: Int) -> [Int16] {
        let end = writePosition
        return samples(from: max(0, end - Int64(min(count, capacity))), count: min(count, capacity))
    }

    /// Blocks the calling (reader) thread until `writePosition > position` or
    /// the timeout passes; returns whether new samples are there. Do not call
    /// from the cooperative thread pool: it is for the recogniser's own thread.
    public func waitForSamples(after position: Int64, timeoutNanoseconds: Int64) -> Bool {
        waitForSamples(after: position, minimum: 1, timeoutNanoseconds: timeoutNanoseconds)
    }

    /// Like `waitForSamples(after:timeoutNanoseconds:)`, but sleeps until at
    /// least `minimum` samples after `position` are there (or the timeout
    /// passes): the writer wakes this reader once per `minimum` samples
    /// instead of once per write. Returns whether any new sample is there.
    public func waitForSamples(after position: Int64, minimum: Int, timeoutNanoseconds: Int64) -> Bool {
        let deadline = AudioThread.monotonicNanoseconds() + timeoutNanoseconds
        let target = position + Int64(max(1, minimum))
        while true {
            // Register the target (the earliest of all waiters' wins), then re-check.
            var registered = wakeAt.load(ordering: .sequentiallyConsistent)
            while target < registered {
                let (exchanged, current) = wakeAt.compareExchange(
                    expected: registered, desired: target, ordering: .sequentiallyConsistent)
                if exchanged { break }
                registered = current
            }
            let generation = parley_futex_load(futexWord)
            let available = written.load(ordering: .sequentiallyConsistent)
            if available >= target { return true }
            let left = deadline - AudioThread.monotonicNanoseconds()
            if left <= 0 { return available > position }
            _ = parley_futex_wait(futexWord, generation, left)
        }
    }
}

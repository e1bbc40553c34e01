import ParleyAudio

/// What a `SampleSource` gave the listening driver.
public enum SampleBlock: Sendable, Equatable {
    /// `count` samples were written at the start of the driver's buffer;
    /// the first is at stream position `position`.
    case samples(position: Int64, count: Int)
    /// Nothing new yet (a live source waited and timed out): ask again.
    case waiting
    /// The stream is over (a file's end, or listening stops).
    case ended
}

/// Where the `ListeningDriver` reads audio from: one stream of 16 kHz mono
/// samples numbered from 0. The capture ring (`AudioRingSource`) and a
/// recording or test array (`SampleArraySource`) implement it; a front end
/// (noise suppression, echo cancellation) between capture and the driver
/// would be one more.
public protocol SampleSource {
    /// Reads the next samples into `buffer` (the driver's own, reused every
    /// block: nothing is allocated per block). May block until samples come.
    mutating func next(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock
    /// The samples of `range`, which starts at or after `floor`.
    func samples(_ range: Range<Int64>) -> [Int16]
    /// The oldest position an utterance's decoder input may start from.
    var floor: Int64 { get }
    /// Whether speech still open when the stream ends is an utterance (a
    /// recording: as if the trailing silence had followed) or is dropped
    /// (listening stopped).
    var endFinishesSpeech: Bool { get }
}

/// A recording or test array, read in blocks as the daemon reads the ring.
public struct SampleArraySource: SampleSource {
    public let all: [Int16]
    /// Samples per block (the daemon reads up to 100 ms at a time).
    public let blockSamples: Int
    private var position = 0

    public init(_ samples: [Int16], blockSamples: Int = 1_600) {
        precondition(blockSamples > 0, "blockSamples must be positive")
        all = samples
        self.blockSamples = blockSamples
    }

    public mutating func next(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock {
        guard position < all.count else { return .ended }
        let count = min(blockSamples, buffer.count, all.count - position)
        all.withUnsafeBufferPointer { source in
            for i in 0..<count { buffer[i] = source[position + i] }
        }
        defer { position += count }
        return .samples(position: Int64(position), count: count)
    }

    public func samples(_ range: Range<Int64>) -> [Int16] {
        Array(all[Int(range.lowerBound)..<Int(range.upperBound)])
    }

    public var floor: Int64 { 0 }
    public var endFinishesSpeech: Bool { true }
}

/// The capture ring, read by the listen thread from a starting position
/// until `isStopped` says so. Reading copies into the driver's buffer and
/// allocates nothing; the capture thread that writes the ring is not
/// touched (it stays allocation and lock free).
///
/// Blocks end on a fixed grid of stream positions (multiples of
/// `blockSamples`), however late the reader runs: where a block ends decides
/// where the endpointer is asked and where a phrase is checked complete, so
/// a listener that fell behind on a busy CPU and read everything waiting at
/// once cut utterances elsewhere and scored them differently (the same
/// recording through the file plugin, "volume three", scored -0.38 to -0.84
/// across loaded runs). On the grid the same audio is heard the same way.
public struct AudioRingSource: SampleSource {
    public let ring: AudioRing
    /// The grid: a block is read once it is complete, and holds at most
    /// this many samples (fewer wake-ups of an idle listener than one per
    /// capture period; see `ListeningPipeline.listenBatchSamples`).
    public let blockSamples: Int
    private let isStopped: () -> Bool
    private let onLost: (Int64) -> Void
    /// One past the newest sample read.
    public private(set) var position: Int64

    /// `onLost`: samples the reader found overwritten before it read them
    /// (it fell more than the ring's length behind).
    public init(ring: AudioRing, from start: Int64, blockSamples: Int,
                isStopped: @escaping () -> Bool, onLost: @escaping (Int64) -> Void = { _ in }) {
        precondition(blockSamples > 0, "AudioRingSource: blockSamples \(blockSamples), expected a positive number of samples")
        self.ring = ring
        position = start
        self.blockSamples = blockSamples
        self.isStopped = isStopped
        self.onLost = onLost
    }

    public mutating func next(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock {
        guard !isStopped() else { return .ended }
        // To the next grid line (a first block started between lines is short).
        let grid = Int64(blockSamples)
        let wanted = min(Int(grid - position % grid), buffer.count)
        // 100 ms at most, so a stop is seen that soon; a partial block waits.
        guard ring.waitForSamples(after: position, minimum: wanted, timeoutNanoseconds: 100_000_000),
              ring.writePosition - position >= Int64(wanted) else {
            return .waiting
        }
        let read = ring.read(from: position, into: UnsafeMutableBufferPointer(rebasing: buffer[0..<wanted]))
        // After a loss the block starts later and may cross a line; the
        // next one is measured from where this one ends, back on the grid.
        if read.lost > 0 { onLost(read.lost) }
        guard read.count > 0 else { return .waiting }
        position = read.position + Int64(read.count)
        return .samples(position: read.position, count: read.count)
    }

    public func samples(_ range: Range<Int64>) -> [Int16] {
        ring.samples(from: range.lowerBound, count: Int(range.count))
    }

    /// 100 ms above the oldest sample held: the capture thread keeps
    /// writing while an utterance begins, and must not overwrite its start
    /// before it is fed.
    public var floor: Int64 { ring.oldestPosition + 1_600 }
    public var endFinishesSpeech: Bool { false }
}

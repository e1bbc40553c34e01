import ParleyAudio

/// A `SampleSource` that runs the capture front end on what another source
/// gives: first the echo canceller (`EchoCanceller`, with what the device
/// played at the same stream positions as its reference), then `FrontEnd`
/// (noise suppression, automatic gain), so the endpointer and the
/// recogniser hear the cleaned signal. The daemon (the capture ring),
/// `parley understand` and the benchmarks (a recording) wrap their source
/// in it when `speech.front_end` is not `none` or `speech.echo_cancel` is on.
///
/// The front end takes whole 10 ms frames: a block's last partial frame is
/// held back and goes out, processed, at the start of the next block (at
/// most 159 samples later, at its own stream position). The processed
/// samples are kept in a history ring of their own, allocated at init, from
/// which `samples(_:)` answers (the wrapped source holds only raw audio).
/// Reading allocates nothing.
public struct FrontEndSource<Base: SampleSource>: SampleSource {
    public private(set) var base: Base
    public let frontEnd: FrontEnd?
    public let echo: EchoStage?
    /// The reference of the block being processed (preallocated).
    private var referenceBlock: [Int16]
    /// Processed samples by stream position modulo its length.
    private var history: [Int16]
    /// One past the newest processed sample handed out.
    private var newest: Int64 = 0
    /// Raw samples of the last partial frame, not yet processed.
    private var held: [Int16]
    private var heldCount = 0
    /// Stream position of `held[0]`.
    private var heldPosition: Int64 = 0

    /// `historySamples`: how far back `samples(_:)` can answer (by default
    /// 8 s, as the capture ring).
    public init(_ base: Base, frontEnd: FrontEnd, historySamples: Int = 8 * 16_000) {
        self.init(base, frontEnd: frontEnd, echo: nil, historySamples: historySamples)
    }

    /// At least one of `frontEnd` and `echo`. `maximumBlockSamples`: the
    /// largest buffer the driver reads into (the echo stage's reference
    /// block is allocated here for it).
    public init(_ base: Base, frontEnd: FrontEnd?, echo: EchoStage?, historySamples: Int = 8 * 16_000,
                maximumBlockSamples: Int = 16_000) {
        precondition(historySamples >= 16_000, "the front end's history must hold at least a second")
        precondition(frontEnd != nil || echo != nil, "a front end source with no stage")
        self.base = base
        self.frontEnd = frontEnd
        self.echo = echo
        history = [Int16](repeating: 0, count: historySamples)
        held = [Int16](repeating: 0, count: FrontEnd.frameSamples)
        referenceBlock = [Int16](repeating: 0, count: echo == nil ? 0 : maximumBlockSamples)
    }

    public mutating func next(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock {
        let frame = FrontEnd.frameSamples
        precondition(buffer.count >= 2 * frame, "the listening buffer must hold two 10 ms frames")
        // Read after the held samples, leaving room for them at the start.
        let block = base.next(into: UnsafeMutableBufferPointer(rebasing: buffer[heldCount...]))
        switch block {
        case .waiting:
            return .waiting
        case .ended:
            return flushHeld(into: buffer)
        case .samples(let position, let count):
            if heldCount > 0 && position != heldPosition + Int64(heldCount) {
                // The wrapped source skipped samples (a reader that fell
                // behind the ring): what was held is no longer contiguous.
                for i in 0..<count { buffer[i] = buffer[heldCount + i] }
                heldCount = 0
            }
            let start = heldCount > 0 ? heldPosition : position
            for i in 0..<heldCount { buffer[i] = held[i] }
            let total = heldCount + count
            let whole = total - total % frame
            heldCount = total - whole
            heldPosition = start + Int64(whole)
            for i in 0..<heldCount { held[i] = buffer[whole + i] }
            guard whole > 0 else { return .waiting }
            process(UnsafeMutableBufferPointer(rebasing: buffer[0..<whole]), at: start)
            remember(UnsafeBufferPointer(rebasing: buffer[0..<whole]), at: start)
            return .samples(position: start, count: whole)
        }
    }

    /// At the end of the stream: the held partial frame, padded with
    /// silence for the preprocessor, then the end.
    private mutating func flushHeld(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock {
        guard heldCount > 0 else { return .ended }
        let count = heldCount
        let frame = FrontEnd.frameSamples
        for i in 0..<frame { buffer[i] = i < count ? held[i] : 0 }
        heldCount = 0
        process(UnsafeMutableBufferPointer(rebasing: buffer[0..<frame]), at: heldPosition)
        remember(UnsafeBufferPointer(rebasing: buffer[0..<count]), at: heldPosition)
        return .samples(position: heldPosition, count: count)
    }

    /// Whole frames from stream position `position`: the echo canceller
    /// with the reference of the same positions, then the front end.
    private mutating func process(_ samples: UnsafeMutableBufferPointer<Int16>, at position: Int64) {
        if let echo {
            precondition(samples.count <= referenceBlock.count,
                         "a block of \(samples.count) samples, the echo stage holds \(referenceBlock.count)")
            referenceBlock.withUnsafeMutableBufferPointer { block in
                let reference = UnsafeMutableBufferPointer(rebasing: block[0..<samples.count])
                echo.reference.read(from: position, into: reference)
                echo.canceller.process(samples, reference: UnsafeBufferPointer(reference))
            }
        }
        frontEnd?.process(samples)
    }

    private mutating func remember(_ samples: UnsafeBufferPointer<Int16>, at position: Int64) {
        let length = Int64(history.count)
        history.withUnsafeMutableBufferPointer { ring in
            for i in 0..<samples.count { ring[Int((position + Int64(i)) % length)] = samples[i] }
        }
        newest = position + Int64(samples.count)
    }

    /// Positions older than the history (an utterance longer than it, asked
    /// for whole by a listener that fell far behind under load: seen in the
    /// test suite, where it ended the daemon) come back as silence, as the
    /// capture ring's lost samples do; the listener counts and logs the loss.
    public func samples(_ range: Range<Int64>) -> [Int16] {
        precondition(range.upperBound <= newest, "front end history ends at \(newest), asked \(range)")
        let length = Int64(history.count)
        let oldest = newest - length
        return range.map { $0 < oldest ? 0 : history[Int($0 % length)] }
    }

    /// The wrapped source's floor, or 100 ms above the oldest processed
    /// sample still held, whichever is later (as the capture ring's).
    public var floor: Int64 { max(base.floor, newest - Int64(history.count) + 1_600) }
    public var endFinishesSpeech: Bool { base.endFinishesSpeech }
}

/// The echo canceller and where its reference comes from: the playback
/// tap's `EchoReference` in the daemon, a recording (`RecordedReference`)
/// in benchmarks and tests.
public struct EchoStage {
    public let canceller: EchoCanceller
    public let reference: any EchoReferenceReading

    public init(canceller: EchoCanceller, reference: any EchoReferenceReading) {
        self.canceller = canceller
        self.reference = reference
    }
}

extension FrontEndSource where Base == SampleArraySource {
    /// A whole recording through the capture front end as the listen thread
    /// runs it (in the daemon's 100 ms blocks, through this source), for
    /// tools that score files: `parley detect-wake --front-end`, `parley-bench
    /// speech-wake-scores --front-end`. A fresh front-end state per call;
    /// `none` gives the samples back untouched. Same length as `samples`.
    public static func processed(_ samples: [Int16], settings: FrontEndSettings,
                                 blockSamples: Int = 1_600) throws(FrontEndError) -> [Int16] {
        guard let stage = try FrontEnd(settings) else { return samples }
        var source = FrontEndSource(SampleArraySource(samples, blockSamples: blockSamples), frontEnd: stage,
                                    historySamples: 16_000)
        var out: [Int16] = []
        out.reserveCapacity(samples.count)
        var buffer = [Int16](repeating: 0, count: max(blockSamples, FrontEnd.frameSamples) + FrontEnd.frameSamples)
        while true {
            let block = buffer.withUnsafeMutableBufferPointer { source.next(into: $0) }
            switch block {
            case .ended: return out
            // Only a block shorter than a frame waits (held for the next one).
            case .waiting: continue
            case .samples(_, let count): out.append(contentsOf: buffer[0..<count])
            }
        }
    }
}

import CParleyMallocCounter
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing
@testable import ParleySpeech

/// The capture front end as a `SampleSource` wrapper: whatever the block
/// sizes, it hands out the stream processed in whole frames at the right
/// positions, answers `samples(_:)` with the processed audio, and the
/// driver listens through it. The real speexdsp; no decoder.
@Suite struct FrontEndSourceTests {
    static let speech = SyntheticSpeech.samples(seconds: 8, words: [2.0...3.2, 5.0...6.2])

    /// Everything a source gives until it ends: (position, samples) per block.
    func drain<S: SampleSource>(_ source: inout S, bufferSamples: Int = 1_600) -> [(Int64, [Int16])] {
        var buffer = [Int16](repeating: 0, count: bufferSamples)
        var blocks: [(Int64, [Int16])] = []
        while true {
            let block = buffer.withUnsafeMutableBufferPointer { source.next(into: $0) }
            switch block {
            case .ended: return blocks
            case .waiting: continue
            case .samples(let position, let count): blocks.append((position, Array(buffer[0..<count])))
            }
        }
    }

    /// The whole stream through one front end in one go, padded to whole frames.
    func processedAtOnce(_ samples: [Int16], _ settings: FrontEndSettings) throws -> [Int16] {
        let frame = FrontEnd.frameSamples
        var padded = samples + [Int16](repeating: 0, count: (frame - samples.count % frame) % frame)
        let stage = try #require(try FrontEnd(settings))
        padded.withUnsafeMutableBufferPointer { stage.process($0) }
        return Array(padded[0..<samples.count])
    }

    @Test(arguments: [1_600, 1_000, 333])
    func anyBlockSizeGivesTheStreamProcessedOnce(blockSamples: Int) throws {
        let settings = FrontEndSettings(mode: .denoiseAGC)
        let input = Array(Self.speech[0..<(Self.speech.count - 77)])   // ends in a partial frame
        let stage = try #require(try FrontEnd(settings))
        var source = FrontEndSource(SampleArraySource(input, blockSamples: blockSamples), frontEnd: stage)
        let blocks = drain(&source)
        var expected: Int64 = 0
        for (position, samples) in blocks {
            #expect(position == expected, "contiguous positions")
            expected += Int64(samples.count)
        }
        #expect(expected == Int64(input.count), "every sample handed out once")
        let output = blocks.flatMap(\.1)
        #expect(output == (try processedAtOnce(input, settings)), "the same as processing the stream in one go")
        #expect(output != input, "the stage changed the signal")
        #expect(stage.frames == (input.count + 159) / 160)
        let tail = Int64(input.count - 16_000)..<Int64(input.count)
        #expect(source.samples(tail) == Array(output[Int(tail.lowerBound)...]), "samples(_:) answers with processed audio")
    }

    /// What `parley detect-wake --front-end` and `parley-bench
    /// speech-wake-scores --front-end` give the detector: the recording as
    /// the listen thread hands it out through this source.
    @Test(arguments: [FrontEndSettings(mode: .denoise), FrontEndSettings(mode: .denoiseAGC, noiseSuppressDecibels: -25)])
    func aRecordingProcessedWholeIsTheStreamThroughTheSource(settings: FrontEndSettings) throws {
        let input = Array(Self.speech[0..<(Self.speech.count - 77)])   // ends in a partial frame
        let output = try FrontEndSource.processed(input, settings: settings)
        #expect(output.count == input.count)
        #expect(output == (try processedAtOnce(input, settings)))
        #expect(output != input)
        // A fresh state per call: the same recording twice gives the same samples.
        #expect(try FrontEndSource.processed(input, settings: settings) == output)
    }

    @Test func noFrontEndGivesTheRecordingBackUntouched() throws {
        let input = Array(Self.speech[0..<12_345])
        #expect(try FrontEndSource.processed(input, settings: .none) == input)
    }

    @Test func historyFloorFollowsTheNewestSample() throws {
        let stage = try #require(try FrontEnd(FrontEndSettings(mode: .denoise)))
        var source = FrontEndSource(SampleArraySource(Self.speech), frontEnd: stage, historySamples: 32_000)
        _ = drain(&source)
        #expect(source.floor == Int64(Self.speech.count) - 32_000 + 1_600)
    }

    /// A live source that loses samples in the middle (a reader that fell
    /// behind the capture ring).
    struct Skipping: SampleSource {
        var file: SampleArraySource
        var reads = 0
        mutating func next(into buffer: UnsafeMutableBufferPointer<Int16>) -> SampleBlock {
            reads += 1
            if reads == 3 { _ = file.next(into: buffer) }   // this block is lost
            return file.next(into: buffer)
        }
        func samples(_ range: Range<Int64>) -> [Int16] { file.samples(range) }
        var floor: Int64 { 0 }
        var endFinishesSpeech: Bool { false }
    }

    @Test func aSkipDropsTheHeldPartialFrame() throws {
        let stage = try #require(try FrontEnd(FrontEndSettings(mode: .denoise)))
        var source = FrontEndSource(Skipping(file: SampleArraySource(Self.speech, blockSamples: 1_000)), frontEnd: stage)
        let positions = drain(&source).map(\.0)
        // Blocks of 1000: 960 out, 40 held; 1000 + 40 -> 960 (1920 .. ), then
        // block 3 (2000..<3000) is lost: the held 80 go, output resumes at 3000.
        #expect(Array(positions.prefix(3)) == [0, 960, 3_000])
    }

    @Test func theDriverListensThroughIt() throws {
        let decoder = ScriptedDecoder<String>([.init(.extendable, "first"), .init(.extendable, "second")],
                                              otherwise: .init(.incomplete, "extra"))
        let stage = try #require(try FrontEnd(FrontEndSettings(mode: .denoise)))
        var source = FrontEndSource(SampleArraySource(Self.speech), frontEnd: stage)
        var driver = ListeningDriver()
        var found: [DecodedUtterance<String>] = []
        let ending = try driver.run(&source, handler: DecoderUtterances(decoder)) { found.append($0); return false }
        #expect(found.map(\.result) == ["first", "second"])
        #expect(ending.utterances == 2)
        let processed = try processedAtOnce(Self.speech, FrontEndSettings(mode: .denoise))
        for (utterance, fed) in zip(found, decoder.utterances) {
            let range = Int(utterance.range.lowerBound)..<Int(utterance.range.upperBound)
            #expect(fed.fed == Array(processed[range]), "the decoder is fed the processed audio")
            #expect(fed.fed != Array(Self.speech[range]))
        }
    }

    @Test(arguments: [1_600, 333])
    func theEchoStageCancelsWithTheReferenceOfTheSamePositions(blockSamples: Int) throws {
        // The device's voice heard 3 ms later at half level; the reference
        // is placed 400 samples into the stream.
        let played = Array(Self.speech[0..<96_000])
        let offset = 400
        var microphone = [Int16](repeating: 0, count: played.count + offset + 77)
        for i in 0..<played.count where i + offset + 48 < microphone.count { microphone[i + offset + 48] = played[i] / 2 }
        let reference = RecordedReference(played, offset: Int64(offset))
        func stage() throws -> EchoStage {
            EchoStage(canceller: try #require(try EchoCanceller(EchoSettings(mode: .linear))), reference: reference)
        }
        var source = FrontEndSource(SampleArraySource(microphone, blockSamples: blockSamples), frontEnd: nil,
                                    echo: try stage(), historySamples: 160_000)
        let output = drain(&source).flatMap(\.1)
        #expect(output.count == microphone.count, "every sample handed out once")
        // The same as the stream through one canceller in one go.
        let frame = 160
        var padded = microphone + [Int16](repeating: 0, count: (frame - microphone.count % frame) % frame)
        var block = [Int16](repeating: 0, count: padded.count)
        block.withUnsafeMutableBufferPointer { reference.read(from: 0, into: $0) }
        let whole = try stage().canceller
        padded.withUnsafeMutableBufferPointer { mic in block.withUnsafeBufferPointer { whole.process(mic, reference: $0) } }
        #expect(output == Array(padded[0..<microphone.count]))
        // And the echo is gone once the filter has adapted.
        func energy(_ x: ArraySlice<Int16>) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }
        let late = 48_000..<96_000
        #expect(energy(output[late]) < energy(microphone[late]) / 10)
    }

    @Test func readingThroughTheEchoStageAllocatesNothing() throws {
        let played = Array(Self.speech[0..<64_000])
        let microphone = played.map { $0 / 2 }
        let stage = EchoStage(canceller: try #require(try EchoCanceller(EchoSettings(mode: .on))),
                              reference: RecordedReference(played))
        var source = FrontEndSource(SampleArraySource(microphone, blockSamples: 480),
                                    frontEnd: try FrontEnd(FrontEndSettings(mode: .denoise)), echo: stage)
        var buffer = [Int16](repeating: 0, count: 1_600)
        try buffer.withUnsafeMutableBufferPointer { block in
            // Warm up: the first call of each path may touch lazily initialised runtime state.
            _ = source.next(into: block)
            let before = parley_malloc_count_current_thread()
            var blocks = 0
            while case .samples = source.next(into: block) { blocks += 1 }
            let after = parley_malloc_count_current_thread()
            _ = try #require(blocks > 100)
            #expect(after == before, "\(after - before) allocations in \(blocks) blocks")
        }
    }
}

import CParleyMallocCounter
import Foundation
import Testing
import ParleyTestKit
@testable import ParleyAudio

@Suite struct EndpointerTests {
    /// Deterministic noise at `amplitude` with a 200 Hz "voiced" tone burst in `speech`.
    func signal(seconds: Double, noise: Double, speech: Range<Double>, toneAmplitude: Double = 6_000, seed: UInt64 = 9) -> [Int16] {
        var rng = SplitMix64(seed: seed)
        return (0..<Int(seconds * 16_000)).map { i in
            let t = Double(i) / 16_000
            var v = (Double(rng.next() % 2_001) - 1_000) / 1_000 * noise
            if speech.contains(t) { v += toneAmplitude * sin(2 * Double.pi * 200 * t) }
            return Int16(max(-32_768, min(32_767, v)))
        }
    }

    func events(_ samples: [Int16], _ config: EndpointerConfiguration = .init()) -> [EndpointEvent] {
        let endpointer = Endpointer(configuration: config)
        var out: [EndpointEvent] = []
        // Feed in uneven chunks, as a reader of the ring would.
        var i = 0
        var chunk = 97
        while i < samples.count {
            let n = min(chunk, samples.count - i)
            endpointer.process(Array(samples[i..<i + n])) { out.append($0) }
            i += n
            chunk = chunk == 97 ? 480 : 97
        }
        return out
    }

    @Test func reportsOneSegmentWithTimestampsAndTheConfiguredTrailingSilence() {
        for trailing in [300, 600, 900] {
            let config = EndpointerConfiguration(trailingSilenceMilliseconds: trailing)
            let found = events(signal(seconds: 5, noise: 300, speech: 1.5..<3.0), config)
            #expect(found.count == 2)
            guard case .speechStarted(let start, let startReported) = found.first,
                  case .speechEnded(let segmentStart, let end, let reported) = found.last else {
                Issue.record("unexpected events \(found)")
                continue
            }
            #expect(segmentStart == start)
            #expect(start <= 24_000 && start >= 24_000 - 3_200 - 800)     // pre-roll 200 ms (+ one frame)
            #expect(startReported > 24_000 && startReported <= 24_000 + 1_600)
            #expect(end >= 48_000 && end <= 48_000 + 4_800 + 960, "end \(end)")  // post-roll 300 ms + level decay
            let delay = reported - 48_000
            #expect(delay >= Int64(trailing * 16) && delay <= Int64(trailing * 16) + 480, "delay \(delay) samples")
        }
    }

    @Test func reportsEachPauseOnceAtTheChosenSilenceWhileTheSegmentStaysOpen() {
        var config = EndpointerConfiguration()
        config.pauseMilliseconds = [150]
        // Speech 1.5-2.5 s, a 300 ms pause, speech 2.8-3.5 s, then silence.
        let first = signal(seconds: 2.8, noise: 300, speech: 1.5..<2.5)
        let second = signal(seconds: 2.2, noise: 300, speech: 0..<0.7, seed: 11)
        let found = events(first + second, config)
        let pauses = found.compactMap { event -> (end: Int64, reportedAt: Int64)? in
            if case .speechPaused(_, let end, let reportedAt, let silence) = event, silence == 150 { return (end, reportedAt) }
            return nil
        }
        #expect(found.filter { if case .speechStarted = $0 { true } else { false } }.count == 1, "\(found)")
        #expect(found.filter { if case .speechEnded = $0 { true } else { false } }.count == 1, "\(found)")
        #expect(pauses.count == 2, "one in the pause, one after the last word: \(found)")
        for (pause, voicedEnd) in zip(pauses, [Int64(40_000), 56_000]) {
            let delay = pause.reportedAt - voicedEnd
            #expect(delay >= 2_400 && delay <= 2_400 + 960, "delay \(delay) samples")
            #expect(pause.end == pause.reportedAt, "a pause shorter than the post-roll ends where it is reported")
        }
        // Off by default and when not shorter than the trailing silence.
        #expect(!events(first + second).contains { if case .speechPaused = $0 { true } else { false } })
        config.pauseMilliseconds = [config.trailingSilenceMilliseconds]
        #expect(!events(first + second, config).contains { if case .speechPaused = $0 { true } else { false } })
        // Several lengths: each reported in each pause, shortest first.
        config.pauseMilliseconds = [250, 150]
        let silences = events(first + second, config).compactMap { event -> Int? in
            if case .speechPaused(_, _, _, let silence) = event { return silence }
            return nil
        }
        #expect(silences == [150, 250, 150, 250])
    }

    @Test func aSegmentEndedByItsListenerLetsTheNextSpeechStartAnew() {
        var config = EndpointerConfiguration()
        config.pauseMilliseconds = [150]
        let endpointer = Endpointer(configuration: config)
        var found: [EndpointEvent] = []
        // Speech, 250 ms of pause (the listener ends the segment at the pause), more speech.
        let samples = signal(seconds: 2.75, noise: 300, speech: 1.5..<2.5) + signal(seconds: 2, noise: 300, speech: 0..<0.7, seed: 11)
        for start in stride(from: 0, to: samples.count, by: 160) {
            endpointer.process(Array(samples[start..<min(samples.count, start + 160)])) { event in
                found.append(event)
                if case .speechPaused = event { endpointer.endSegment() }
            }
        }
        let starts = found.filter { if case .speechStarted = $0 { true } else { false } }
        #expect(starts.count == 2, "the second stretch is a segment of its own: \(found)")
        #expect(!found.contains { if case .speechEnded = $0 { true } else { false } }, "both were ended by the listener")
        #expect(!endpointer.isInSpeech)
    }

    @Test func adaptsToALouderRoom() {
        // Quiet room for 3 s, then the noise jumps 20 dB (a fan starts) for 6 s, then speech.
        var quiet = signal(seconds: 3, noise: 100, speech: 0..<0)
        quiet += signal(seconds: 11, noise: 1_000, speech: 8.0..<9.5, toneAmplitude: 12_000, seed: 10)
        let found = events(quiet)
        // The level jump may open one segment, but the floor follows the room and the
        // real utterance (8.0-9.5 s into the loud part, i.e. 11-12.5 s) is found as its own segment.
        let ends = found.compactMap { event -> (Int64, Int64)? in
            if case .speechEnded(let s, let e, _) = event { return (s, e) }
            return nil
        }
        let utterance = ends.first { segment in
            let (start, end) = segment
            return start >= 10 * 16_000 && start <= 11 * 16_000 && end >= 200_000
        }
        #expect(utterance != nil, "segments \(ends)")
        #expect(ends.count <= 2)
    }

    @Test func silenceAndSteadyNoiseYieldNothing() {
        #expect(events([Int16](repeating: 0, count: 16_000 * 3)).isEmpty)
        #expect(events(signal(seconds: 6, noise: 2_000, speech: 0..<0)).isEmpty)
    }

    @Test func realRecordingsCleanAndNoisy() throws {
        // A small share of the evaluation, as a regression guard: the first ten recordings.
        let files = Array(try Fixtures.wavFiles(in: Fixtures.coffeeClean).prefix(10))
        let results = try EndpointEvaluation.run(recordings: files, noise: Fixtures.kitchenNoise, snrs: [24],
                                                 configuration: EndpointerConfiguration())
        #expect(results.map(\.label) == ["clean", "24 dB"])
        #expect(results[0].recordings == 10)
        #expect(results[0].oneSegmentShare >= 0.8)
        #expect(results[1].someSegmentShare >= 0.7)
        #expect(results[0].medianEndDelaySeconds >= 0.6 && results[0].medianEndDelaySeconds < 0.8)
    }

    @Test func trueSpeechExtentFollowsTheDocumentedThreshold() {
        var samples = [Int16](repeating: 0, count: 16_000)
        for i in 960..<1_120 { samples[i] = 10_000 }            // a 10 ms click: not speech
        for i in 4_000..<4_480 { samples[i] = 10_000 }          // loud 30 ms
        for i in 8_000..<8_480 { samples[i] = 200 }             // 34 dB down for 30 ms: inside
        for i in 12_000..<12_480 { samples[i] = 100 }           // 40 dB down: outside
        #expect(SpeechExtent.of(samples) == 4_000..<8_480)
        #expect(SpeechExtent.of(samples, minimumRunFrames: 1) == 960..<8_480)
    }

    @Test func voicingCheckRejectsLoudUnvoicedNoise() {
        // A loud burst of white noise (a clatter) in a quiet room: loud but not voiced.
        var rng = SplitMix64(seed: 5)
        let samples = (0..<Int(4 * 16_000)).map { i -> Int16 in
            let t = Double(i) / 16_000
            let amplitude = (1.5..<2.5).contains(t) ? 8_000.0 : 100.0
            return Int16((Double(rng.next() % 2_001) - 1_000) / 1_000 * amplitude)
        }
        #expect(events(samples).isEmpty)
        var withoutVoicing = EndpointerConfiguration()
        withoutVoicing.onsetVoicedFrames = 0
        #expect(events(samples, withoutVoicing).count == 2)      // energy alone calls it speech
    }

    /// Steady noise, then a command whose first second is only 8 dB above it
    /// (above the continue threshold, below the start one), then 1 s at
    /// 11 dB: the loudness of speech in a loud kitchen. `toneSNR` in dB over
    /// the noise's power (uniform noise: power a²/3; tone: a²/2).
    func quietCommand(noise: Double = 1_000) -> [Int16] {
        func amplitude(_ snr: Double) -> Double { noise * (2.0 / 3.0 * pow(10, snr / 10)).squareRoot() }
        return signal(seconds: 3, noise: noise, speech: 2.0..<3.5, toneAmplitude: amplitude(8))
            + signal(seconds: 4, noise: noise, speech: 0..<1, toneAmplitude: amplitude(11), seed: 12)
    }

    @Test func speechBelowTheStartThresholdDoesNotTeachTheNoiseModel() {
        let samples = quietCommand()
        let loudStart = Int64(3 * 16_000)
        var learning = EndpointerConfiguration()
        learning.noiseLearning = .always
        // Learning from the quiet first words raises the floor under the louder ones: no speech at all.
        #expect(events(samples, learning).isEmpty)
        learning.noiseLearning = .deferredInRuns
        #expect(events(samples, learning).count == 2, "deferred: what the run taught is not used during it")
        let found = events(samples)
        let segments = found.compactMap { event -> (start: Int64, end: Int64)? in
            if case .speechEnded(let start, let end, _) = event { return (start, end) }
            return nil
        }
        #expect(segments.count == 1, "\(found)")
        guard let segment = segments.first else { return }
        #expect(segment.end >= 4 * 16_000, "the louder words are in the segment")
        // Without the look-back the segment starts at the first frame above the start threshold (the
        // louder words, the smoothing may take a few frames), less the pre-roll; with it, 500 ms earlier:
        // the quieter words before them, above the continue threshold for a whole second, are in it.
        var noLookback = EndpointerConfiguration()
        noLookback.onsetLookbackMilliseconds = 0
        let starts = events(samples, noLookback).compactMap { event -> Int64? in
            if case .speechStarted(let start, _) = event { return start }
            return nil
        }
        #expect(starts.count == 1, "\(starts)")
        guard let loudOnly = starts.first else { return }
        #expect(loudOnly >= loudStart - 3_200 && loudOnly <= loudStart - 3_200 + 800, "\(loudOnly)")
        #expect(segment.start == loudOnly - 8_000, "start \(segment.start)")
    }

    @Test func aRoomThatGetsLouderIsStillFollowedWhileNoiseLearningIsGated() {
        // 3 s quiet, then 6 s of noise 20 dB louder: every frame of it is above the
        // continue threshold at first, so only the minimum over the window lets the floor follow.
        let samples = signal(seconds: 3, noise: 100, speech: 0..<0) + signal(seconds: 6, noise: 1_000, speech: 0..<0, seed: 4)
        for mode in NoiseLearning.allCases {
            var config = EndpointerConfiguration()
            config.noiseLearning = mode
            let endpointer = Endpointer(configuration: config)
            endpointer.process(Array(samples[0..<(3 * 16_000)])) { _ in }
            let quietFloor = endpointer.noiseFloorDB
            endpointer.process(Array(samples[(3 * 16_000)...])) { _ in }
            #expect(endpointer.noiseFloorDB - quietFloor > 17, "\(mode): floor \(quietFloor) -> \(endpointer.noiseFloorDB)")
        }
    }

    @Test func noisySegmentsKeepALongerPostRoll() throws {
        var config = EndpointerConfiguration()
        config.noisySegmentPeakDB = 25
        config.noisyPostRollMilliseconds = 450
        // Loud speech in a quiet room (about 40 dB over the noise) keeps the ordinary 300 ms post-roll.
        let clean = events(signal(seconds: 4, noise: 100, speech: 1.0..<2.0), config)
        // Speech 11 dB over steady noise gets 450 ms: its weak endings are under the noise.
        let noisy = events(signal(seconds: 4, noise: 1_000, speech: 1.0..<2.0, toneAmplitude: 2_900), config)
        func postRoll(_ found: [EndpointEvent]) -> Int64? {
            for event in found { if case .speechEnded(_, let end, _) = event { return end - 2 * 16_000 } }
            return nil
        }
        let cleanRoll = try #require(postRoll(clean))
        let noisyRoll = try #require(postRoll(noisy))
        #expect(cleanRoll >= 4_800 && cleanRoll < 4_800 + 960, "\(cleanRoll)")
        #expect(noisyRoll >= 7_200 && noisyRoll < 7_200 + 960, "\(noisyRoll)")
        config.noisySegmentPeakDB = 0
        #expect(postRoll(events(signal(seconds: 4, noise: 1_000, speech: 1.0..<2.0, toneAmplitude: 2_900), config))
            .map { $0 < 4_800 + 960 } == true, "off: the ordinary post-roll")
    }
}

@Suite struct EndpointerAllocationTests {
    @Test func processingAllocatesNothing() throws {
        let samples = try WAVFile.read(try Fixtures.wavFiles(in: Fixtures.coffeeClean)[0]).samples
        var starts = 0, ends = 0
        try samples.withUnsafeBufferPointer { buffer in
            // Warm up on the whole recording with another endpointer: the first
            // use of each path, events included, may touch lazily initialised
            // runtime state (type metadata), which is allocated once per
            // process by whichever thread gets there first; which one that is
            // depends on the order the parallel tests run in.
            Endpointer().process(buffer) { _ in }
            let endpointer = Endpointer()
            endpointer.process(UnsafeBufferPointer(rebasing: buffer[0..<1_600])) { _ in }
            let before = parley_malloc_count_current_thread()
            var offset = 1_600
            while offset < buffer.count {
                let n = min(160, buffer.count - offset)
                endpointer.process(UnsafeBufferPointer(rebasing: buffer[offset..<offset + n])) { event in
                    if case .speechStarted = event { starts += 1 } else { ends += 1 }
                }
                offset += n
            }
            let after = parley_malloc_count_current_thread()
            #expect(after == before, "\(after - before) allocations")
            _ = try #require(buffer.count > 16_000)
        }
        #expect(starts >= 1)
    }
}

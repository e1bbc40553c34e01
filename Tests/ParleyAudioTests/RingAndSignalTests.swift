import Foundation
import Synchronization
import Testing
import ParleyTestKit
@testable import ParleyAudio

@Suite struct AudioRingTests {
    @Test func keepsHistoryAcrossTheWrapAndReportsLostAudio() {
        let ring = AudioRing(seconds: 0.1, sampleRate: 16_000)      // rounded up to 2048 samples
        #expect(ring.capacity == 2_048)
        var next: Int16 = 0
        for _ in 0..<7 {
            let block = (0..<500).map { _ -> Int16 in next &+= 1; return next }
            block.withUnsafeBufferPointer { ring.write($0) }
        }
        #expect(ring.writePosition == 3_500)
        #expect(ring.oldestPosition == 3_500 - 2_048)
        // The newest 100 samples are 3401...3500.
        #expect(ring.latest(100) == (3_401...3_500).map { Int16($0) })
        // Asking for audio that was overwritten: skipped and reported.
        var out = [Int16](repeating: 0, count: 10)
        let read = out.withUnsafeMutableBufferPointer { ring.read(from: 0, into: $0) }
        #expect(read.position == 3_500 - 2_048)
        #expect(read.lost == 3_500 - 2_048)
        #expect(out == (1_453...1_462).map { Int16($0) })
        // Reading past the end returns only what exists.
        #expect(ring.samples(from: 3_495, count: 50).count == 5)
    }

    /// A writer lapping the ring while a reader copies its oldest samples:
    /// every sample a read hands out must be the one written at its
    /// position (the writer writes each position's own number), so a copy
    /// torn by a write in progress is caught. Counts, not timing: the reader
    /// reads as often as it can while the writer runs.
    @Test func aReadRacingTheWriterIsNeverTorn() {
        let ring = AudioRing(seconds: 0.05, sampleRate: 16_000)     // 1024 samples
        let running = Atomic<Bool>(true)
        let writer = Thread {
            var block = [Int16](repeating: 0, count: 160)
            var position: Int64 = 0
            while running.load(ordering: .relaxed) {
                for i in block.indices { block[i] = Int16(truncatingIfNeeded: position + Int64(i)) }
                block.withUnsafeBufferPointer { ring.write($0) }
                position += Int64(block.count)
            }
        }
        writer.start()
        var out = [Int16](repeating: 0, count: 512)
        var accepted = 0, torn = 0, lost = 0
        while accepted < 20_000 {
            let oldest = max(0, ring.writePosition - Int64(ring.capacity))
            let read = out.withUnsafeMutableBufferPointer { ring.read(from: oldest, into: $0) }
            if read.lost > 0 { lost += 1 }
            guard read.count > 0 else { continue }
            accepted += 1
            for i in 0..<read.count where out[i] != Int16(truncatingIfNeeded: read.position + Int64(i)) {
                torn += 1
                break
            }
        }
        running.store(false, ordering: .relaxed)
        #expect(torn == 0, "\(torn) of \(accepted) reads handed out overwritten samples (\(lost) reported losses)")
    }

    @Test func waiterWakesWhenTheProducerWrites() async {
        let ring = AudioRing(seconds: 1)
        let waiter = Thread {
            _ = ring.waitForSamples(after: 0, timeoutNanoseconds: 30_000_000_000)
        }
        waiter.start()
        let block: [Int16] = [1, 2, 3]
        block.withUnsafeBufferPointer { ring.write($0) }
        #expect(ring.waitForSamples(after: 0, timeoutNanoseconds: 0))
        #expect(!ring.waitForSamples(after: 3, timeoutNanoseconds: 1_000_000))   // nothing new: times out
    }

    @Test func waiterForABatchSleepsThroughSmallerWrites() async throws {
        let ring = AudioRing(seconds: 1)
        final class Seen: Sendable {
            let started = Atomic<Bool>(false)
            let gotSamples = Atomic<Bool>(false)
            let result = Mutex<(returned: Bool, position: Int64)>((false, 0))
        }
        let seen = Seen()
        // The waiter's time-out only ends a broken run: the test task that
        // starts the writer may itself wait a long time for a thread.
        let waiter = Thread {
            seen.started.store(true, ordering: .releasing)
            let got = ring.waitForSamples(after: 0, minimum: 480, timeoutNanoseconds: 300_000_000_000)
            seen.gotSamples.store(got, ordering: .releasing)
            seen.result.withLock { $0 = (true, ring.writePosition) }
        }
        waiter.start()
        try await Poll.until("the waiter thread started", polls: 120_000, every: .milliseconds(1)) { seen.started.load(ordering: .acquiring) }
        // The writes come from a thread of their own, like the capture thread:
        // a test task sleeping between them can be resumed tens of seconds
        // later when parallel tests hold every thread of the cooperative pool,
        // and the waiter's time-out then says nothing about its wake-ups.
        let writer = Thread {
            let period = [Int16](repeating: 7, count: 160)
            for _ in 0..<3 {
                period.withUnsafeBufferPointer { ring.write($0) }
                usleep(20_000)
            }
        }
        writer.start()
        try await Poll.until("the waiter returned", polls: 120_000, every: .milliseconds(1)) { seen.result.withLock { $0.returned } }
        // Woken only once the batch it asked for was there, not by the first period.
        let gotSamples = seen.gotSamples.load(ordering: .acquiring)
        #expect(gotSamples, "the wait timed out without a sample")
        #expect(seen.result.withLock { $0.position } >= 480)
    }
}

@Suite struct ResamplerTests {
    @Test func unityGainAndNoDelayAfterTrimming() {
        let input = (0..<22_050).map { Int16(8_000 * sin(2 * Double.pi * 300 * Double($0) / 22_050)) }
        let out = PolyphaseResampler.resample(input, from: 22_050, to: 16_000)
        #expect(out.count == 16_000)
        // Compare with the ideal 300 Hz tone at 16 kHz in the middle.
        var maxError = 0.0
        for i in 1_000..<15_000 {
            let ideal = 8_000 * sin(2 * Double.pi * 300 * Double(i) / 16_000)
            maxError = max(maxError, abs(Double(out[i]) - ideal))
        }
        #expect(maxError < 80, "max deviation \(maxError)")     // 1% of amplitude: gain and phase are right
    }
}

@Suite struct WAVAndMixerTests {
    @Test func readsTheSharedRecordingsAndRoundTrips() throws {
        let file = try Fixtures.wavFiles(in: Fixtures.coffeeClean).first!
        let (samples, rate) = try WAVFile.read(file)
        #expect(rate == 16_000)
        #expect(samples.count > 16_000)
        let dir = try TemporaryDirectory()
        let copy = dir.url.appendingPathComponent("copy.wav")
        try WAVFile.write(samples, sampleRate: rate, to: copy)
        let again = try WAVFile.read(copy)
        #expect(firstDifference(again.samples, samples) == nil)
        #expect(again.sampleRate == rate)
    }

    @Test func badFilesNameTheFileAndTheProblem() throws {
        let dir = try TemporaryDirectory()
        let text = dir.url.appendingPathComponent("notes.wav")
        try Data("hello world, not audio".utf8).write(to: text)
        #expect(throws: AudioError.badFile(path: text.path, reason: "not a RIFF/WAVE file")) { try WAVFile.read(text) }
        let stereo = dir.url.appendingPathComponent("stereo.wav")
        try WAVFile.write([1, 2, 3, 4], sampleRate: 8_000, channels: 2, to: stereo)
        #expect(throws: AudioError.badFile(path: stereo.path, reason: "expected 1 channel, found 2")) { try WAVFile.read(stereo) }
        let missing = dir.url.appendingPathComponent("missing.wav")
        #expect { try WAVFile.read(missing) } throws: { error in
            guard case AudioError.badFile(let path, let reason) = error else { return false }
            return path == missing.path && reason.hasPrefix("cannot read")
        }
    }

    @Test func mixHasThePeakFrameSNRAndIsFixedBySeed() throws {
        let speech = try WAVFile.read(try Fixtures.wavFiles(in: Fixtures.coffeeClean)[3]).samples
        let noise = try WAVFile.read(Fixtures.kitchenNoise).samples
        for snr in [6.0, 15.0, 24.0] {
            let mixed = NoiseMixer.mix(speech: speech, noise: noise, snrDB: snr, seed: 42)
            #expect(mixed == NoiseMixer.mix(speech: speech, noise: noise, snrDB: snr, seed: 42))
            #expect(mixed != NoiseMixer.mix(speech: speech, noise: noise, snrDB: snr, seed: 43))
            // Recover the noise part: mixed/g - speech, with g the normalisation gain.
            let peak = mixed.map { abs(Int($0)) }.max()!
            #expect(abs(peak - 16_383) <= 1)                      // normalised to half scale, as published
            let slice = NoiseMixer.noiseSlice(noise, length: speech.count, seed: 42)
            // Least-squares fit mixed ≈ a·speech + b·noise gives the noise scale relative to speech.
            var ss = 0.0, nn = 0.0, sn = 0.0, ms = 0.0, mn = 0.0
            for i in 0..<speech.count {
                let s = Double(speech[i]), n = Double(slice[slice.startIndex + i]), m = Double(mixed[i])
                ss += s * s; nn += n * n; sn += s * n; ms += m * s; mn += m * n
            }
            let det = ss * nn - sn * sn
            let a = (ms * nn - mn * sn) / det
            let b = (mn * ss - ms * sn) / det
            let ratio = NoiseMixer.peakFrameEnergy(speech[...]) * a * a / (NoiseMixer.peakFrameEnergy(slice) * b * b)
            #expect(abs(10 * log10(ratio) - snr) < 0.1, "SNR \(10 * log10(ratio)) dB, wanted \(snr)")
        }
    }
}

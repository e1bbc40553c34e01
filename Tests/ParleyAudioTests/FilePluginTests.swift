import CParleyMallocCounter
import Foundation
import Glibc
import Logging
import Synchronization
import ParleyTestKit
import Testing
@testable import ParleyAudio

/// Integration tests through the real libasound and its file plugin.
@Suite struct FilePluginTests {
    @Test func fileCaptureReturnsExactlyTheInputSamples() throws {
        let dir = try TemporaryDirectory()
        var samples = [Int16](repeating: 0, count: 16_000 * 3)
        var state: UInt32 = 12345
        for i in samples.indices {
            state = state &* 1_664_525 &+ 1_013_904_223
            samples[i] = Int16(truncatingIfNeeded: state >> 16)
        }
        let raw = dir.url.appendingPathComponent("in.raw")
        try FileAudioDevice.writeRaw(samples, to: raw)
        let service = try CaptureService(configuration: CaptureConfiguration(
            device: FileAudioDevice.capture(rawInput: raw), ringSeconds: 4, realtimePriority: nil,
            inputFrameLimit: samples.count))
        try service.start()
        #expect(service.ring.waitUntil(atLeast: Int64(samples.count)))
        #expect(Poll.holdsBlocking("the capture read its whole file") { service.status.state == .endOfInput })
        #expect(service.ring.writePosition == Int64(samples.count))
        service.stop()
        let captured = service.ring.samples(from: 0, count: samples.count)
        #expect(captured.count == samples.count)
        let firstMismatch = captured.indices.first { captured[$0] != samples[$0] }
        #expect(firstMismatch == nil, "ring at \(service.ring.writePosition), periods \(service.status.periods)")
        #expect(service.status.overruns == 0)
        #expect(service.status.state == .stopped)
    }
}

/// Index of the first differing sample (or of the length mismatch); nil if equal.
/// Keeps failure messages short, unlike comparing whole arrays.
func firstDifference(_ a: [Int16], _ b: [Int16]) -> Int? {
    if let i = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset { return i }
    return a.count == b.count ? nil : min(a.count, b.count)
}

/// Waits until `condition` holds, for as long as `progress` keeps moving: a
/// long capture on a starved machine is slow, not stuck. Fails only when
/// `progress` stands still for a whole `Poll.holdsBlocking` bound.
func waitWhileProgressing(_ progress: () -> Int, until condition: () -> Bool) -> Bool {
    while !condition() {
        let before = progress()
        if !Poll.holdsBlocking("the condition, or progress from \(before)", { condition() || progress() != before }) { return false }
    }
    return true
}

extension AudioRing {
    /// Test helper: waits (bounded by a generous count of futex waits, not a
    /// timed assertion) until the ring has at least `count` samples.
    func waitUntil(atLeast count: Int64, maxWaits: Int = 20_000) -> Bool {
        var waits = 0
        while writePosition < count && waits < maxWaits {
            _ = waitForSamples(after: writePosition, timeoutNanoseconds: 10_000_000)
            waits += 1
        }
        return writePosition >= count
    }
}

@Suite struct WAVCaptureTests {
    @Test func aRealRecordingComesBackSampleForSample() throws {
        let dir = try TemporaryDirectory()
        let wav = try Fixtures.wavFiles(in: Fixtures.coffeeClean, atLeast: 6)[5]
        let expected = try WAVFile.read(wav).samples
        let service = try CaptureService(configuration: .file(wav: wav, workDirectory: dir.url, pacing: .device, ringSeconds: 30))
        try service.start()
        #expect(Poll.holdsBlocking("the capture read its whole file") { service.status.state == .endOfInput })
        service.stop()
        #expect(service.ring.writePosition == Int64(expected.count))
        let captured = service.ring.samples(from: 0, count: expected.count)
        #expect(captured.count == expected.count)
        #expect(firstDifference(captured, expected) == nil)
    }
}

/// Real-ALSA capture: conversion, allocation-free loop, injected overruns.
@Suite struct CaptureIntegrationTests {
    /// Interleaved stereo tone at `rate` with identical channels.
    func stereoTone(frequency: Double, rate: Int, seconds: Double, amplitude: Double = 10_000) -> [Int16] {
        let frames = Int(Double(rate) * seconds)
        var out = [Int16](repeating: 0, count: frames * 2)
        for i in 0..<frames {
            let v = Int16(amplitude * sin(2 * Double.pi * frequency * Double(i) / Double(rate)))
            out[2 * i] = v
            out[2 * i + 1] = v
        }
        return out
    }

    func capture(_ interleaved: [Int16], rate: Int, channels: Int, dir: TemporaryDirectory,
                 alsa: ALSAFunctions = .system) throws -> (samples: [Int16], status: CaptureStatus) {
        let raw = dir.url.appendingPathComponent("tone.raw")
        try FileAudioDevice.writeRaw(interleaved, to: raw)
        let frames = interleaved.count / channels
        let service = try CaptureService(
            configuration: CaptureConfiguration(
                device: FileAudioDevice.capture(rawInput: raw),
                format: PCMFormat(sampleRate: rate, channels: channels, periodFrames: rate / 100, bufferFrames: rate / 25),
                ringSeconds: 8, realtimePriority: nil, inputFrameLimit: frames),
            logger: Logger(label: "test"), alsa: alsa)
        try service.start()
        #expect(Poll.holdsBlocking("the capture read its whole file") { service.status.state == .endOfInput })
        service.stop()
        return (service.ring.samples(from: 0, count: Int(service.ring.writePosition)), service.status)
    }

    /// Frequency from positive-going zero crossings over `samples`.
    func zeroCrossingFrequency(_ samples: ArraySlice<Int16>, rate: Int) -> Double {
        var crossings = 0
        var previous = samples.first!
        for s in samples.dropFirst() {
            if previous < 0 && s >= 0 { crossings += 1 }
            previous = s
        }
        return Double(crossings) * Double(rate) / Double(samples.count)
    }

    func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    @Test func oneKilohertzAt48kStereoComesOutAsOneKilohertzAt16kMono() throws {
        let dir = try TemporaryDirectory()
        let (out, status) = try capture(stereoTone(frequency: 1_000, rate: 48_000, seconds: 2), rate: 48_000, channels: 2, dir: dir)
        #expect(status.frames == 96_000)
        #expect(abs(out.count - 32_000) <= 2)                    // 2 s at 16 kHz
        let middle = out[4_000..<28_000]                          // skip the filter's start-up
        let frequency = zeroCrossingFrequency(middle, rate: 16_000)
        #expect(abs(frequency - 1_000) < 2, "measured \(frequency) Hz")
        #expect(abs(rms(middle) - 10_000 / 2.squareRoot()) < 150)  // unity gain in the pass band
    }

    @Test func levelIsTheLastPeriodsPeakAndFallsAfterIt() throws {
        let dir = try TemporaryDirectory()
        // A tone ending the file: the level is its peak (unity gain at 16 kHz mono).
        let (_, loud) = try capture(stereoTone(frequency: 1_000, rate: 16_000, seconds: 1, amplitude: 8_000).enumerated()
            .filter { $0.offset % 2 == 0 }.map(\.element), rate: 16_000, channels: 1, dir: dir)
        #expect(abs(loud.level - 8_000) < 100, "level \(loud.level)")
        // The same tone and then 20 periods of silence: the meter fell by a quarter each period.
        let tone = stereoTone(frequency: 1_000, rate: 16_000, seconds: 1, amplitude: 8_000).enumerated()
            .filter { $0.offset % 2 == 0 }.map(\.element)
        let (_, quiet) = try capture(tone + [Int16](repeating: 0, count: 3_200), rate: 16_000, channels: 1, dir: dir)
        #expect(quiet.level > 0 && quiet.level < 8_000 / 100, "level \(quiet.level)")
        // Silence throughout reads as zero.
        let (_, silent) = try capture([Int16](repeating: 0, count: 16_000), rate: 16_000, channels: 1, dir: dir)
        #expect(silent.level == 0)
    }

    @Test func tonesAboveTheNewNyquistAreRemovedNotAliased() throws {
        // 10 kHz at 48 kHz would alias to 6 kHz at 16 kHz without the low-pass.
        let dir = try TemporaryDirectory()
        let (out, _) = try capture(stereoTone(frequency: 10_000, rate: 48_000, seconds: 1), rate: 48_000, channels: 2, dir: dir)
        let level = rms(out[2_000..<14_000])
        #expect(level < 10_000 / 2.squareRoot() / 100, "residual RMS \(level) (want > 40 dB down)")
    }

    @Test func captureThreadAllocatesNothingPerPeriod() throws {
        let dir = try TemporaryDirectory()
        for (rate, channels) in [(16_000, 1), (48_000, 2)] {
            let raw = dir.url.appendingPathComponent("noise-\(rate).raw")
            var rng = SplitMix64(seed: 1)
            let frames = rate * 60                                  // 6000 periods of 10 ms
            try FileAudioDevice.writeRaw((0..<frames * channels).map { _ in Int16(truncatingIfNeeded: rng.next()) >> 2 }, to: raw)
            // Hold the capture thread inside its 100th read until the baseline is taken,
            // so the measured window is exactly periods 100...6000 however busy the machine is.
            let reads = Atomic<Int>(0)
            let gate = Atomic<Bool>(false)
            var alsa = ALSAFunctions.system
            let realRead = alsa.readi
            alsa.readi = { pcm, buffer, count in
                if reads.add(1, ordering: .relaxed).newValue == 100 {
                    while !gate.load(ordering: .acquiring) { usleep(200) }
                }
                return realRead(pcm, buffer, count)
            }
            let service = try CaptureService(
                configuration: CaptureConfiguration(
                    device: FileAudioDevice.capture(rawInput: raw),
                    format: PCMFormat(sampleRate: rate, channels: channels, periodFrames: rate / 100, bufferFrames: rate / 25),
                    realtimePriority: nil, inputFrameLimit: frames),
                logger: Logger(label: "test"), alsa: alsa)
            try service.start()
            #expect(Poll.holdsBlocking("a hundred reads") { reads.load(ordering: .relaxed) >= 100 })
            let tid = service.status.threadID
            let before = parley_malloc_count_for_thread(tid)
            let periodsBefore = service.status.periods
            gate.store(true, ordering: .releasing)
            #expect(waitWhileProgressing({ service.status.periods }, until: { service.status.state == .endOfInput }))
            let after = parley_malloc_count_for_thread(tid)
            let periods = service.status.periods - periodsBefore
            service.stop()
            #expect(periods == 5_901)                              // reads 100...6000, all inside the window
            #expect(after == before, "\(after - before) allocations over \(periods) periods at \(rate) Hz \(channels) ch")
            #expect(before > 0)                                    // the counter does see this thread (setup allocates)
        }
    }

    @Test func injectedOverrunsAreRecoveredWithoutLosingSamples() throws {
        let dir = try TemporaryDirectory()
        var rng = SplitMix64(seed: 3)
        let samples = (0..<32_000).map { _ in Int16(truncatingIfNeeded: rng.next()) }
        let calls = Atomic<Int>(0)
        var alsa = ALSAFunctions.system
        let realRead = alsa.readi
        alsa.readi = { pcm, buffer, frames in
            // Every 25th read reports an overrun (-EPIPE) instead of reading.
            calls.add(1, ordering: .relaxed).newValue % 25 == 0 ? -Int(EPIPE) : realRead(pcm, buffer, frames)
        }
        let (out, status) = try capture(samples, rate: 16_000, channels: 1, dir: dir, alsa: alsa)
        #expect(status.overruns == calls.load(ordering: .relaxed) / 25)
        #expect(status.overruns >= 7)
        #expect(status.reconnects == 0)
        #expect(out.count == samples.count)
        #expect(firstDifference(out, samples) == nil, "snd_pcm_recover must not rewind or skip the stream")
    }

    @Test func wrongDeviceNameIsAClearErrorThroughRealALSA() throws {
        let service = try CaptureService(configuration: CaptureConfiguration(
            device: PCMDevice(name: "parley_no_such_pcm"), realtimePriority: nil))
        #expect {
            try service.start()
        } throws: { error in
            guard case AudioError.deviceNotFound(let name, _) = error else { return false }
            return name == "parley_no_such_pcm"
        }
    }

    @Test func badInputConfigurationNamesTheValue() throws {
        #expect(throws: AudioError.invalidConfiguration("buffer 100 frames (expected at least two periods, 320)")) {
            _ = try CaptureService(configuration: CaptureConfiguration(
                device: PCMDevice(name: "default"),
                format: PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 160, bufferFrames: 100)))
        }
    }
}

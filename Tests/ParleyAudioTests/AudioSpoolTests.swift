import Foundation
import ParleyTestKit
import Testing
@testable import ParleyAudio

/// The spool microphone: samples appended while the capture runs arrive
/// through the real ALSA file plugin, silence in between, nothing repeated.
@Suite struct AudioSpoolTests {
    static func ramp(_ count: Int, from start: Int16) -> [Int16] {
        (0..<count).map { Int16(truncatingIfNeeded: Int(start) + $0 % 1_000 + 1) }
    }

    @Test func appendedSamplesAreCapturedWithSilenceBetween() throws {
        let dir = try TemporaryDirectory()
        let spool = try AudioSpool(url: dir.url.appendingPathComponent("mic.raw"))
        let first = Self.ramp(3_200, from: 1_000)
        try spool.append(first)
        var configuration = spool.captureConfiguration
        // Paced as a microphone: at the file plugin's own pace the capture
        // raced through seconds of silence before a loaded machine let the
        // reader see the append, past any fixed window after it.
        configuration.pacing = .realTime
        configuration.ringSeconds = 30
        let service = try CaptureService(configuration: configuration)
        try service.start()
        defer { service.stop() }
        #expect(service.ring.waitUntil(atLeast: 16_000))
        // Past the end of the input: silence, not the last period again.
        #expect(service.ring.samples(from: 0, count: first.count) == first)
        let after = service.ring.samples(from: Int64(first.count), count: 12_000)
        #expect(after.allSatisfy { $0 == 0 })

        // Appended later: captured once, after the silence, wherever the
        // reader saw it (found by scanning what arrives, up to 20 s of audio).
        let second = Self.ramp(1_600, from: 9_000)
        let appendedAt = service.ring.writePosition
        try spool.append(second)
        var start: Int64?
        var scanned = appendedAt
        while start == nil && scanned < appendedAt + 320_000 && service.ring.waitUntil(atLeast: scanned + 1_600) {
            let end = service.ring.writePosition
            let block = service.ring.samples(from: scanned, count: Int(end - scanned))
            start = block.firstIndex { $0 != 0 }.map { scanned + Int64($0) }
            scanned = end
        }
        #expect(start != nil)
        if let start {
            #expect(service.ring.waitUntil(atLeast: start + Int64(second.count) + 16_000))
            #expect(service.ring.samples(from: start, count: second.count) == second)
            #expect(service.ring.samples(from: start + Int64(second.count), count: 16_000).allSatisfy { $0 == 0 })
        }
    }

    /// A writer preempted half-way through an append (a busy CPU): the
    /// file has grown by half the samples, the rest come later. Under the
    /// spool's lock the capture takes silence meanwhile and then the whole
    /// append in one piece, never half an utterance with a gap in it.
    @Test func anAppendHalfWrittenIsNotReadUntilItIsWhole() throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("mic.raw")
        let spool = try AudioSpool(url: url)
        var configuration = spool.captureConfiguration
        configuration.pacing = .device
        configuration.ringSeconds = 30
        let service = try CaptureService(configuration: configuration)
        try service.start()
        defer { service.stop() }
        #expect(service.ring.waitUntil(atLeast: 3_200))

        // What `append` does, with a long pause in the middle of the write.
        let utterance = Self.ramp(6_400, from: 2_000)
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        #expect(fd >= 0)
        #expect(flock(fd, LOCK_EX) == 0)
        utterance.withUnsafeBytes { bytes in
            #expect(write(fd, bytes.baseAddress!, bytes.count / 2) == bytes.count / 2)
        }
        // The capture goes on (silence) while the writer is away.
        let pausedAt = service.ring.writePosition
        #expect(service.ring.waitUntil(atLeast: pausedAt + 8_000))
        utterance.withUnsafeBytes { bytes in
            #expect(write(fd, bytes.baseAddress! + bytes.count / 2, bytes.count / 2) == bytes.count / 2)
        }
        close(fd)  // and the lock with it
        let resumedAt = service.ring.writePosition
        #expect(service.ring.waitUntil(atLeast: resumedAt + 16_000))
        let captured = service.ring.samples(from: pausedAt - 1_600, count: Int(resumedAt + 16_000 - pausedAt + 1_600))
        let start = captured.firstIndex { $0 != 0 }
        #expect(start != nil)
        if let start {
            #expect(Array(captured[start..<start + utterance.count]) == utterance, "the append arrived whole, without a gap")
        }
    }

    @Test func wavFilesAreMixedToMonoResampledAndPadded() throws {
        let dir = try TemporaryDirectory()
        // 1 kHz at 48 kHz stereo (right channel silent: the mix halves it).
        var stereo: [Int16] = []
        for n in 0..<48_000 {
            let value = Int16(16_000 * sin(2 * Double.pi * 1_000 * Double(n) / 48_000))
            stereo += [value, 0]
        }
        let wav = dir.url.appendingPathComponent("tone.wav")
        try WAVFile.write(stereo, sampleRate: 48_000, channels: 2, to: wav)
        let spool = try AudioSpool(url: dir.url.appendingPathComponent("mic.raw"))
        let seconds = try spool.append(wav: wav, lead: 0.5, padding: 1)
        let data = try Data(contentsOf: spool.url)
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(samples.count % AudioSpool.periodFrames == 0)
        // 2.5 s, padded to a whole 30 ms period.
        #expect(seconds >= 2.5 && seconds < 2.5 + Double(AudioSpool.periodFrames) / 16_000, "\(seconds) s")
        #expect(samples[..<7_900].allSatisfy { $0 == 0 })
        // One second of tone: 2,000 zero crossings at 1 kHz, about half the level.
        let tone = Array(samples[9_000..<24_000])
        let crossings = zip(tone, tone.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(crossings - 1_875) < 20)  // 15,000 samples = 0.9375 s
        #expect((7_000...8_500).contains(Int(tone.map { abs(Int($0)) }.max() ?? 0)))
        #expect(samples.suffix(15_000).allSatisfy { $0 == 0 })

        // A file that is not a WAV is named in the error.
        let bad = dir.url.appendingPathComponent("bad.wav")
        try Data("nope".utf8).write(to: bad)
        let error = #expect(throws: AudioError.self) { try spool.append(wav: bad) }
        #expect("\(error.map { "\($0)" } ?? "")".contains(bad.path))
    }

    @Test func anEmptiedSpoolForgetsWhatAnEarlierRunLeft() throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("mic.raw")
        try AudioSpool(url: url).append([1, 2, 3])
        #expect(try Data(contentsOf: url).count == 6)
        _ = try AudioSpool(url: url)
        #expect(try Data(contentsOf: url).count == 6)
        _ = try AudioSpool(url: url, empty: true)
        #expect(try Data(contentsOf: url).isEmpty)
    }
}

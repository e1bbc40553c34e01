import CParleyMallocCounter
import Foundation
import Glibc
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
        #expect(waitFor { service.status.state == .endOfInput })
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

/// Polls `condition` up to 20 000 times 0.5 ms apart (a bound, not a timed assertion).
func waitFor(_ condition: () -> Bool) -> Bool {
    for _ in 0..<20_000 where !condition() { usleep(500) }
    return condition()
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

/// A fresh directory under /tmp, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

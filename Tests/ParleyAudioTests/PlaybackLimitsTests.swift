import Foundation
import ParleyTestKit
import Testing

@testable import ParleyAudio

/// Queued speech is bounded: past `maximumQueuedSeconds` a block is dropped
/// and counted, never appended.
@Suite struct PlaybackLimitsTests {
    @Test func blocksPastTheQueueLimitAreDroppedAndCounted() throws {
        let dir = try TemporaryDirectory()
        let output = dir.url.appendingPathComponent("out.wav")
        var configuration = PlaybackConfiguration(device: FileAudioDevice.playback(output: output))
        configuration.maximumQueuedSeconds = 1
        let service = try PlaybackService(configuration: configuration)
        // Not started: nothing is played, so the queue only grows. 48 kHz in,
        // the configured device rate, so no resampling changes the counts.
        let rate = configuration.format.sampleRate
        service.enqueue([Int16](repeating: 1000, count: rate * 6 / 10), sampleRate: rate)   // 0.6 s queued
        service.enqueue([Int16](repeating: 1000, count: rate * 6 / 10), sampleRate: rate)   // 1.2 s: dropped
        #expect(service.droppedBlockCount == 1)
        service.enqueue([Int16](repeating: 1000, count: rate * 4 / 10), sampleRate: rate)   // exactly 1 s: kept
        service.enqueue([1], sampleRate: rate)                                               // one sample over: dropped
        #expect(service.droppedBlockCount == 2)
        try service.start()
        service.waitUntilIdle()
        service.shutdown()
        let played = try WAVFile.readInterleaved(output)
        #expect(abs(played.samples.count / played.channels - rate) <= 2)
    }
}

import Foundation
import Glibc
import Logging
import Synchronization
import ParleyTestKit
import Testing
@testable import ParleyAudio

/// Playback through ALSA's file plugin.
@Suite struct PlaybackTests {
    func tone(_ frequency: Double, rate: Int, seconds: Double) -> [Int16] {
        (0..<Int(Double(rate) * seconds)).map { Int16(8_000 * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    @Test func speechAt22050IsResampledToTheDeviceRate() throws {
        let dir = try TemporaryDirectory()
        let output = dir.url.appendingPathComponent("out.wav")
        let changes = Mutex<[Bool]>([])
        let service = try PlaybackService(configuration: PlaybackConfiguration(
            device: FileAudioDevice.playback(output: output),
            onSpeakingChanged: { value in changes.withLock { $0.append(value) } }))
        try service.start()
        service.enqueue(tone(440, rate: 22_050, seconds: 1), sampleRate: 22_050)
        service.waitUntilIdle()
        #expect(!service.isSpeaking)
        service.shutdown()
        #expect(changes.withLock { $0 } == [true, false])
        let played = try WAVFile.readInterleaved(output)
        #expect(played.sampleRate == 48_000)
        #expect(played.channels == 2)
        let frames = played.samples.count / 2
        #expect(abs(frames - 48_000) <= 2)
        let left = stride(from: 0, to: played.samples.count, by: 2).map { played.samples[$0] }
        let right = stride(from: 1, to: played.samples.count, by: 2).map { played.samples[$0] }
        #expect(firstDifference(left, right) == nil)
        var crossings = 0
        for i in 4_801..<43_200 where left[i - 1] < 0 && left[i] >= 0 { crossings += 1 }
        let frequency = Double(crossings) / (Double(43_200 - 4_800) / 48_000)
        #expect(abs(frequency - 440) < 2, "measured \(frequency) Hz")
    }

    @Test func stopSilencesWithinOnePeriod() throws {
        let dir = try TemporaryDirectory()
        let output = dir.url.appendingPathComponent("out.wav")
        let service = try PlaybackService(configuration: PlaybackConfiguration(
            device: FileAudioDevice.playback(output: output), pacing: .realTime))
        try service.start()
        service.enqueue(tone(300, rate: 22_050, seconds: 3), sampleRate: 22_050)
        service.enqueue(tone(500, rate: 22_050, seconds: 3), sampleRate: 22_050)
        #expect(Poll.holdsBlocking("the device speaking, 0.3 s written") { service.isSpeaking && service.framesWritten >= 4_800 })
        service.stopSpeaking()
        #expect(!service.isSpeaking)
        let atStop = service.framesWritten
        // At most one 10 ms period (480 frames at 48 kHz) went out after the request:
        // with snd_pcm_drop that bounds the time to silence by the period, well under 50 ms.
        #expect(service.framesWrittenAfterLastStop <= service.configuration.format.periodFrames)
        service.waitUntilIdle()
        #expect(service.framesWritten == atStop)          // the queue was dropped too
        // Playback works again after a stop.
        service.enqueue(tone(440, rate: 16_000, seconds: 0.05), sampleRate: 16_000)
        #expect(Poll.holdsBlocking("the silence after the stop written") { service.framesWritten >= atStop + 2_400 })
        service.shutdown()
        #expect(service.framesWritten < 48_000 * 6 / 2)   // far less than the six seconds queued
    }

    /// A cue (the wake tone) plays but is not talking; words are, from their
    /// block on, a cue after them included, until all has played out or stops.
    /// Counts and polls, no timed expectations: each cue outlasts a poll by seconds.
    @Test func aCueIsPlayedButIsNotTalking() throws {
        let dir = try TemporaryDirectory()
        let service = try PlaybackService(configuration: PlaybackConfiguration(
            device: FileAudioDevice.playback(output: dir.url.appendingPathComponent("out.wav")), pacing: .realTime))
        try service.start()
        // A cue alone: sampled all the while it plays, never talking.
        service.enqueue(tone(660, rate: 16_000, seconds: 0.3), sampleRate: 16_000, cue: true)
        #expect(Poll.holdsBlocking("the cue playing") { service.isSpeaking })
        var talkingSeen = 0, samples = 0
        while service.isSpeaking {
            samples += 1
            if service.isTalking { talkingSeen += 1 }
            usleep(1_000)
        }
        #expect(samples > 0 && talkingSeen == 0, "\(talkingSeen) of \(samples) samples talking")
        #expect(service.framesWritten >= 48_000 * 3 / 10)

        // A cue, words, a long cue, queued at once: talking from the words on,
        // through the cue after them, until stopped. Every sound is made
        // before the first is queued and the long cue comes at the device's
        // rate (no resampling): `enqueue` resamples on this thread, and on a
        // loaded machine the words had played out, and talking ended, before
        // a 5 s cue made and resampled here was queued behind them
        // (2026-12-03). The first cue lasts a second for the same reason.
        let rate = service.deviceSampleRate
        let (lead, words, long) = (tone(990, rate: 16_000, seconds: 1), tone(440, rate: 22_050, seconds: 0.2),
                                   tone(660, rate: rate, seconds: 5))
        service.enqueue(lead, sampleRate: 16_000, cue: true)
        service.enqueue(words, sampleRate: 22_050)
        service.enqueue(long, sampleRate: rate, cue: true)
        #expect(Poll.holdsBlocking("the words playing") { service.isTalking })
        // Past the 1.5 s before it (cues of 0.3 s and 1 s and 0.2 s of words).
        #expect(Poll.holdsBlocking("the cue after the words playing") { service.framesWritten > rate * 15 / 10 })
        #expect(service.isTalking && service.isSpeaking)
        service.stopSpeaking()
        #expect(!service.isTalking && !service.isSpeaking)
        service.shutdown()
    }

    @Test func captureAndPlaybackRunTogether() throws {
        let dir = try TemporaryDirectory()
        let raw = dir.url.appendingPathComponent("in.raw")
        let input = tone(700, rate: 16_000, seconds: 2)
        try FileAudioDevice.writeRaw(input, to: raw)
        let capture = try CaptureService(configuration: CaptureConfiguration(
            device: FileAudioDevice.capture(rawInput: raw), realtimePriority: nil, pacing: .realTime,
            inputFrameLimit: input.count))
        let playback = try PlaybackService(configuration: PlaybackConfiguration(
            device: FileAudioDevice.playback(output: dir.url.appendingPathComponent("out.wav")), pacing: .realTime))
        try capture.start()
        try playback.start()
        playback.enqueue(tone(440, rate: 22_050, seconds: 0.5), sampleRate: 22_050)
        #expect(Poll.holdsBlocking("the device speaking") { playback.isSpeaking })
        let capturedWhileSpeaking = capture.ring.writePosition
        #expect(Poll.holdsBlocking("the capture read its whole file") { capture.status.state == .endOfInput })
        playback.waitUntilIdle()
        #expect(capture.ring.writePosition == Int64(input.count))
        #expect(capture.ring.writePosition > capturedWhileSpeaking)
        #expect(firstDifference(capture.ring.samples(from: 0, count: input.count), input) == nil)
        #expect(playback.framesWritten >= 24_000 - 2)
        capture.stop()
        playback.shutdown()
    }

    @Test func wrongPlaybackDeviceIsAClearError() throws {
        let service = try PlaybackService(configuration: PlaybackConfiguration(device: PCMDevice(name: "parley_missing_speaker")))
        #expect {
            try service.start()
        } throws: { error in
            guard case AudioError.deviceNotFound(let name, _) = error else { return false }
            return name == "parley_missing_speaker"
        }
    }
}

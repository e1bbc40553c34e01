import Foundation
import Glibc
import Logging
import ParleyAudio
import ParleyCore
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// Which of the engine's sounds count as the device talking (the listener's
/// barge-in and the engine's deadline hold follow `isTalking`): the wake tone
/// and the volume tick are cues, the chime leads an announcement's words.
@Suite struct SpeakerCueTests {
    /// While `speaker` plays what was just queued: how many samples of
    /// `isTalking` were true, of how many.
    static func talkingWhilePlaying(_ playback: PlaybackService) -> (talking: Int, samples: Int) {
        _ = Poll.holdsBlocking("the sound playing") { playback.isSpeaking }
        var talking = 0, samples = 0
        while playback.isSpeaking {
            samples += 1
            if playback.isTalking { talking += 1 }
            usleep(1_000)
        }
        return (talking, samples)
    }

    @Test func theWakeToneAndTheVolumeTickAreCuesTheChimeIsNot() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let playback = try PlaybackService(configuration: PlaybackConfiguration(
            device: FileAudioDevice.playback(output: dir.url.appendingPathComponent("out.wav")), pacing: .realTime))
        try playback.start()
        defer { playback.shutdown() }
        let speaker = try Speaker(playback: playback, voice: .init(), latency: LatencyProbe(), logger: Logger(label: "test"))
        for sound in [EngineSound.wake, .volume] {
            speaker.play(sound)
            let seen = Self.talkingWhilePlaying(playback)
            #expect(seen.samples > 0 && seen.talking == 0, "\(sound): \(seen.talking) of \(seen.samples) samples talking")
        }
        speaker.play(.chime)
        let seen = Self.talkingWhilePlaying(playback)
        #expect(seen.talking > 0, "chime: \(seen.talking) of \(seen.samples) samples talking")
    }
}

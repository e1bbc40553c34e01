import CParleyTestMixer
import Foundation
import Glibc
import Synchronization
import ParleyTestKit
import Testing
@testable import ParleyAudio

/// The volume's two outputs (issue 28): a card's mixer control through
/// alsa-lib's simple mixer, and Parley's own sample scaling where there is none.
@Suite(.serialized) struct VolumeOutputTests {
    /// The real libasound, attached to the in-process test card instead of
    /// "hw:N" (this machine has no sound card): every other mixer call is
    /// alsa-lib's own (hctl, simple elements, ranges, reads and writes).
    /// The mixer calls made, in order.
    final class Trace: Sendable {
        private let calls = Mutex<[String]>([])
        func append(_ call: String) { calls.withLock { $0.append(call) } }
        var all: [String] { calls.withLock { $0 } }
    }

    static func testCard(recording trace: Trace? = nil) -> ALSAFunctions {
        var alsa = ALSAFunctions.system
        let real = alsa.mixer
        alsa.mixer.attach = { mixer, card in
            trace?.append("snd_mixer_attach(\(card))")
            return parley_test_mixer_attach(mixer)
        }
        if let trace {
            alsa.mixer.register = { trace.append("snd_mixer_selem_register"); return real.register($0) }
            alsa.mixer.load = { trace.append("snd_mixer_load"); return real.load($0) }
            alsa.mixer.find = { mixer, name, index in
                trace.append("snd_mixer_find_selem(\(name),\(index))")
                return real.find(mixer, name, index)
            }
            alsa.mixer.setPlaybackVolume = { element, value in
                trace.append("snd_mixer_selem_set_playback_volume_all(\(value))")
                return real.setPlaybackVolume(element, value)
            }
            alsa.mixer.setPlaybackSwitch = { element, on in
                trace.append("snd_mixer_selem_set_playback_switch_all(\(on ? 1 : 0))")
                return real.setPlaybackSwitch(element, on)
            }
            alsa.mixer.close = { trace.append("snd_mixer_close"); return real.close($0) }
        }
        return alsa
    }

    @Test func levelsAreSetOnTheControlAndReadBackFromTheCard() throws {
        parley_test_mixer_reset(0, 255, 1)
        let mixer = try ALSAMixer(card: "hw:0", control: "Speaker", alsa: Self.testCard())
        #expect(mixer.range == 0...255)
        #expect(mixer.hasSwitch)
        try mixer.apply(level: 7, muted: false)
        // What the card holds, read past alsa-lib: 7/10 of the range on both channels.
        #expect(parley_test_mixer_volume(0) == 179 && parley_test_mixer_volume(1) == 179)
        #expect(try mixer.reading() == ALSAMixer.Reading(value: 179, range: 0...255, switchOn: true))
        try mixer.apply(level: 0, muted: false)
        #expect(parley_test_mixer_volume(0) == 0)
        try mixer.apply(level: 10, muted: false)
        #expect(parley_test_mixer_volume(1) == 255)
    }

    @Test func muteTurnsTheSwitchOffAndKeepsTheLevel() throws {
        parley_test_mixer_reset(0, 100, 1)
        let mixer = try ALSAMixer(card: "hw:0", control: "Speaker", alsa: Self.testCard())
        try mixer.apply(level: 4, muted: true)
        #expect(parley_test_mixer_switch(0) == 0 && parley_test_mixer_switch(1) == 0)
        #expect(parley_test_mixer_volume(0) == 40)
        try mixer.apply(level: 4, muted: false)
        #expect(parley_test_mixer_switch(0) == 1)
        #expect(try mixer.reading().switchOn == true)
    }

    @Test func withoutASwitchMuteIsTheBottomOfTheRange() throws {
        parley_test_mixer_reset(-60, 0, 0)
        let mixer = try ALSAMixer(card: "hw:0", control: "Speaker", alsa: Self.testCard())
        #expect(!mixer.hasSwitch)
        try mixer.apply(level: 5, muted: false)
        #expect(parley_test_mixer_volume(0) == -30)
        try mixer.apply(level: 5, muted: true)
        #expect(parley_test_mixer_volume(0) == -60)
        #expect(try mixer.reading() == ALSAMixer.Reading(value: -60, range: -60...0, switchOn: nil))
    }

    @Test func theLevelSurvivesClosingAndReopeningTheMixer() throws {
        parley_test_mixer_reset(0, 255, 1)
        do {
            let mixer = try ALSAMixer(card: "hw:0", control: "Speaker", alsa: Self.testCard())
            try mixer.apply(level: 3, muted: false)
        }
        let again = try ALSAMixer(card: "hw:0", control: "Speaker", alsa: Self.testCard())
        #expect(try again.reading().value == ALSAMixer.raw(level: 3, in: 0...255))
    }

    @Test func callTraceOfOpeningAndSetting() throws {
        parley_test_mixer_reset(0, 255, 1)
        let trace = Trace()
        do {
            let mixer = try ALSAMixer(card: "hw:CARD=Device", control: "Speaker", alsa: Self.testCard(recording: trace))
            try mixer.apply(level: 2, muted: true)
        }
        #expect(trace.all == [
            "snd_mixer_attach(hw:CARD=Device)", "snd_mixer_selem_register", "snd_mixer_load",
            "snd_mixer_find_selem(Speaker,0)",
            "snd_mixer_selem_set_playback_volume_all(51)", "snd_mixer_selem_set_playback_switch_all(0)",
            "snd_mixer_close",
        ])
    }

    @Test func aMissingControlIsNamedWithTheCardsControls() throws {
        parley_test_mixer_reset(0, 255, 1)
        let error = #expect(throws: AudioError.self) { _ = try ALSAMixer(card: "hw:0", control: "Master", alsa: Self.testCard()) }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("'Master'") && text.contains("hw:0") && text.contains("the card has 'Speaker'"), "\(text)")
    }

    @Test func aMissingCardIsReportedAsNotFound() throws {
        var alsa = ALSAFunctions.system
        alsa.mixer.attach = { (_: OpaquePointer, _: String) -> Int32 in -ENOENT }
        let error = #expect(throws: AudioError.self) { _ = try ALSAMixer(card: "hw:7", control: "PCM", alsa: alsa) }
        guard case .deviceNotFound(let device, _)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(device == "mixer 'hw:7'")
    }

    @Test func aFailedWriteBecomesAnErrorNamingTheControl() throws {
        parley_test_mixer_reset(0, 255, 1)
        var alsa = Self.testCard()
        alsa.mixer.setPlaybackVolume = { _, _ in -EIO }
        let mixer = try ALSAMixer(card: "hw:0", control: "Speaker", alsa: alsa)
        let error = #expect(throws: AudioError.self) { try mixer.apply(level: 5, muted: false) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("control 'Speaker'") && text.contains("snd_mixer_selem_set_playback_volume_all"), "\(text)")
    }

    @Test func rawLevelsSpanTheRange() {
        #expect(ALSAMixer.raw(level: 0, in: 10...20) == 10)
        #expect(ALSAMixer.raw(level: 10, in: 10...20) == 20)
        #expect(ALSAMixer.raw(level: 5, in: -100...0) == -50)
        #expect(ALSAMixer.raw(level: 12, in: 0...10) == 10)   // clamped
    }

    // MARK: Sample scaling (no mixer control)

    func rms(_ samples: ArraySlice<Int16>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    /// Plays the same tone at gain 1 and `gain` through the file plugin; the RMS of what it wrote, each.
    func playedLevels(gain: Double) throws -> (full: Double, scaled: Double) {
        let dir = try TemporaryDirectory()
        let output = dir.url.appendingPathComponent("out.wav")
        let service = try PlaybackService(configuration: PlaybackConfiguration(
            device: FileAudioDevice.playback(output: output),
            format: PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 160, bufferFrames: 1_280)))
        try service.start()
        let tone = (0..<8_000).map { Int16(16_000 * sin(2 * Double.pi * 500 * Double($0) / 16_000)) }
        service.enqueue(tone, sampleRate: 16_000)
        service.waitUntilIdle()
        service.setGain(gain)
        service.enqueue(tone, sampleRate: 16_000)
        service.waitUntilIdle()
        service.shutdown()
        let played = try WAVFile.readInterleaved(output).samples
        #expect(played.count >= 16_000)
        return (rms(played[1_000..<7_000]), rms(played[9_000..<15_000]))
    }

    @Test func softwareGainScalesWhatTheFilePluginWrites() throws {
        let (full, half) = try playedLevels(gain: 0.5)
        #expect(full > 10_000)
        #expect(abs(half / full - 0.5) < 0.01, "ratio \(half / full)")
    }

    @Test func gainZeroIsSilence() throws {
        let (full, silent) = try playedLevels(gain: 0)
        #expect(full > 10_000)
        #expect(silent == 0)
    }

    @Test func gainIsClampedToUnity() throws {
        let service = try PlaybackService(configuration: PlaybackConfiguration(device: PCMDevice(name: "null")))
        service.setGain(3)
        #expect(service.gain == 1)
        service.setGain(-1)
        #expect(service.gain == 0)
    }
}

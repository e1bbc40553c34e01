import CParleyMallocCounter
import CSpeexDSP
import Foundation
import Testing
import ParleyTestKit
@testable import ParleyAudio

/// The echo canceller through a scripted speexdsp: what it asks of the
/// library and in which order, and what it does when the library refuses.
@Suite struct EchoCancellerCallTraceTests {
    @Test func onLinksAPreprocessorForTheResidualEcho() throws {
        let mock = MockSpeex()
        do { _ = try EchoCanceller(settings: EchoSettings(mode: .on, tailMilliseconds: 200), speex: mock.functions) }
        #expect(mock.calls == [
            "speex_echo_state_init(160, 3200)",
            "speex_echo_ctl(\(SPEEX_ECHO_SET_SAMPLING_RATE), 16000)",
            "speex_preprocess_state_init(160, 16000)",
            "speex_preprocess_ctl(\(SpeexRequest.denoise), 1)",
            "speex_preprocess_ctl(\(SpeexRequest.noiseSuppress), 0)",
            "speex_preprocess_ctl(\(SpeexRequest.agc), 0)",
            "speex_preprocess_ctl(\(SpeexRequest.dereverb), 0)",
            "speex_preprocess_ctl(SET_ECHO_STATE)",
            "speex_preprocess_state_destroy",
            "speex_echo_state_destroy",
        ])
    }

    /// A quiet device costs nothing: with a silent reference speexdsp is
    /// not called; the first frame of the device's voice runs it again, and
    /// it keeps running through the tail and a second of silence after.
    @Test func aQuietDeviceRunsNoSpeexCall() throws {
        let mock = MockSpeex()
        let canceller = try EchoCanceller(settings: EchoSettings(mode: .on), speex: mock.functions)
        var microphone = [Int16](repeating: 1_000, count: 160)
        let silence = [Int16](repeating: 0, count: 160)
        let voice = (0..<160).map { Int16($0 * 10 - 800) }
        func frame(_ reference: [Int16]) {
            microphone.withUnsafeMutableBufferPointer { mic in reference.withUnsafeBufferPointer { canceller.process(mic, reference: $0) } }
        }
        for _ in 0..<500 { frame(silence) }
        #expect(mock.count("speex_echo_cancellation") == 0 && mock.count("speex_preprocess_run") == 0)
        #expect(canceller.skippedFrames == 500)
        frame(voice)
        #expect(mock.count("speex_echo_cancellation") == 1 && mock.count("speex_preprocess_run") == 1)
        // 128 ms of tail and a second of silence (112 frames) are still
        // processed, then the fade frame, then nothing.
        for _ in 0..<200 { frame(silence) }
        #expect(mock.count("speex_echo_cancellation") == 1 + 112 + 1)
        #expect(canceller.skippedFrames == 500 + 200 - 113)
    }

    @Test func linearRunsTheFilterAlone() throws {
        let mock = MockSpeex()
        let canceller = try EchoCanceller(settings: EchoSettings(mode: .linear), speex: mock.functions)
        var microphone = [Int16](repeating: 1_000, count: 3 * 160)
        // Loud enough to be the device's voice (a silent reference passes the microphone through).
        let reference = (0..<(3 * 160)).map { Int16($0 % 50 * 10) }
        microphone.withUnsafeMutableBufferPointer { mic in
            reference.withUnsafeBufferPointer { canceller.process(mic, reference: $0) }
        }
        #expect(mock.count("speex_echo_cancellation") == 3)
        #expect(mock.count("speex_preprocess_run") == 0)
        #expect(canceller.frames == 3)
        // The scripted filter subtracts the reference: each microphone
        // sample went with the reference sample of the same position, in place.
        // The first frame fades from the microphone as captured (nothing
        // had been played before it) into the filter's output.
        let filtered = reference.map { 1_000 - $0 }
        #expect(microphone[160...] == filtered[160...])
        #expect((0..<160).allSatisfy { microphone[$0] >= filtered[$0] && microphone[$0] <= 1_000 })
        #expect(microphone[80] > filtered[80] && microphone[80] < 1_000, "half-way through the fade")
    }

    @Test func failedInitIsAClearErrorAndNothingLeaks() {
        let mock = MockSpeex(.init(echoInitFails: true))
        #expect(throws: FrontEndError.initFailed(frameSize: 160, sampleRate: 16_000)) {
            try EchoCanceller(settings: EchoSettings(mode: .on), speex: mock.functions)
        }
        #expect(mock.calls == ["speex_echo_state_init(160, 2048)"], "nothing to destroy")
    }

    @Test func aRefusedSettingDestroysEachStateOnce() {
        let mock = MockSpeex(.init(refusedRequest: SpeexRequest.noiseSuppress))
        do {
            _ = try EchoCanceller(settings: EchoSettings(mode: .on), speex: mock.functions)
            Issue.record("init succeeded")
        } catch {
            #expect(error == .controlRefused(request: "noise suppression (dB)", value: "0"))
        }
        #expect(mock.count("speex_preprocess_state_destroy") == 1)
        #expect(mock.count("speex_echo_state_destroy") == 1)
    }

    @Test func itHasAdaptedAfterThreeSecondsOfTheDevicesVoiceNotOfSilence() throws {
        let mock = MockSpeex()
        let canceller = try EchoCanceller(settings: EchoSettings(mode: .linear), speex: mock.functions)
        var microphone = [Int16](repeating: 0, count: 160)
        let silence = [Int16](repeating: 40, count: 160)          // below -50 dBFS: not the device's voice
        let voice = (0..<160).map { Int16($0 * 10 - 800) }
        for _ in 0..<400 {
            microphone.withUnsafeMutableBufferPointer { mic in silence.withUnsafeBufferPointer { canceller.process(mic, reference: $0) } }
        }
        #expect(!canceller.hasAdapted && canceller.playedFrames == 0)
        for _ in 0..<(EchoCanceller.adaptedFrames - 1) {
            microphone.withUnsafeMutableBufferPointer { mic in voice.withUnsafeBufferPointer { canceller.process(mic, reference: $0) } }
        }
        #expect(!canceller.hasAdapted)
        microphone.withUnsafeMutableBufferPointer { mic in voice.withUnsafeBufferPointer { canceller.process(mic, reference: $0) } }
        #expect(canceller.hasAdapted && canceller.playedFrames == EchoCanceller.adaptedFrames)
    }

    @Test func offRunsNoStage() throws {
        #expect(try EchoCanceller(.off) == nil)
    }
}

@Suite struct EchoSettingsTests {
    @Test func readsTheKnownSettings() throws {
        #expect(try EchoSettings(parsing: "off") == .off)
        #expect(try EchoSettings(parsing: "on") == EchoSettings(mode: .on))
        let long = try EchoSettings(parsing: "linear:300")
        #expect(long.mode == .linear && long.tailMilliseconds == 300)
        #expect(try EchoSettings(parsing: long.description) == long, "the description reads back")
        #expect(EchoSettings(mode: .on).description == "on")
    }

    @Test(arguments: ["", "yes", "on:5", "on:501", "on:long", "off:100", "On", "webrtc"])
    func rejectsOthersNamingTheValue(_ text: String) {
        do {
            _ = try EchoSettings(parsing: text)
            Issue.record("'\(text)' accepted")
        } catch {
            #expect(error.description.contains("'\(text)'"))
            #expect(error.description.contains("off, on or linear"))
        }
    }
}

/// The real speexdsp on a real recording played into a small synthetic
/// room: the echo goes, a person's voice stays, nothing is allocated.
@Suite struct EchoCancellerSignalTests {
    /// The device's voice: real speech (two fixture recordings, back to back).
    static func played() throws -> [Int16] {
        let files = try Fixtures.wavFiles(in: Fixtures.coffeeClean, atLeast: 3)
        return try files.prefix(2).flatMap { try WAVFile.read($0).samples }
    }

    /// The played speech as the microphone hears it: 3 ms later, at half
    /// level, with two reflections (a 40 ms and a 90 ms path).
    static func echo(of played: [Int16]) -> [Int16] {
        (0..<played.count).map { i in
            func at(_ delay: Int) -> Double { i >= delay ? Double(played[i - delay]) : 0 }
            return Int16(0.5 * at(48) + 0.2 * at(640) - 0.1 * at(1_440))
        }
    }

    func energy(_ samples: ArraySlice<Int16>) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
    }

    func cancel(_ microphone: [Int16], _ reference: [Int16], _ mode: EchoSettings.Mode) throws -> [Int16] {
        let count = microphone.count / 160 * 160
        var output = Array(microphone[0..<count])
        let canceller = try #require(try EchoCanceller(EchoSettings(mode: mode)))
        let played = Array(reference[0..<count])
        output.withUnsafeMutableBufferPointer { mic in played.withUnsafeBufferPointer { canceller.process(mic, reference: $0) } }
        return output
    }

    @Test(arguments: [EchoSettings.Mode.linear, .on])
    func theEchoOfWhatWasPlayedIsRemoved(_ mode: EchoSettings.Mode) throws {
        let played = try Self.played()
        let microphone = Self.echo(of: played)
        let output = try cancel(microphone, played, mode)
        // After the filter has adapted (two seconds), most of the echo is gone.
        let settled = 32_000..<output.count
        let enhancement = 10 * log10(energy(microphone[settled]) / max(1, energy(output[settled])))
        #expect(enhancement > (mode == .on ? 15 : 10), "ERLE \(enhancement) dB")
    }

    @Test(arguments: [EchoSettings.Mode.linear, .on])
    func aPersonSpeakingOverTheEchoIsKept(_ mode: EchoSettings.Mode) throws {
        let played = try Self.played()
        let files = try Fixtures.wavFiles(in: Fixtures.coffeeClean, atLeast: 3)
        let person = try WAVFile.read(files[2]).samples
        // The person speaks from the third second on, over the device.
        let start = 48_000
        let length = min(person.count, played.count - start)
        var microphone = Self.echo(of: played)
        for i in 0..<length { microphone[start + i] = microphone[start + i] &+ person[i] / 2 }
        let output = try cancel(microphone, played, mode)
        // What is left around the person's words is mostly the person: the
        // error against their voice alone is far below the echo that was there.
        // speexdsp's preprocessor (`on`) hands each frame out a frame later
        // (its overlap-add; 160 samples, measured): the person is compared there.
        let lag = mode == .on ? 160 : 0
        let span = start..<min(output.count - lag, start + length)
        let residual = span.map { Int16(clamping: Int(output[$0 + lag]) - Int(person[$0 - start] / 2)) }
        let echoEnergy = energy(Self.echo(of: played)[span])
        let kept = energy(span.map { output[$0 + lag] }[...]) / energy(span.map { person[$0 - start] / 2 }[...])
        #expect(energy(residual[...]) < echoEnergy / 4, "\(mode): the echo under the person's words is cut: \(energy(residual[...]) / echoEnergy)")
        #expect(kept > 0.3, "the person's voice kept: energy ratio \(kept)")
    }

    /// Before the device speaks, and a second (plus the tail) after it
    /// stopped, the microphone goes out as captured: the same samples, one
    /// frame late after the preprocessor (`on`); while it speaks they are
    /// processed.
    @Test(arguments: [EchoSettings.Mode.linear, .on])
    func aQuietDevicesMicrophonePassesThroughUnchanged(_ mode: EchoSettings.Mode) throws {
        let person = try WAVFile.read(try Fixtures.wavFiles(in: Fixtures.coffeeClean, atLeast: 3)[2]).samples
        let played = try Self.played()
        // The person, then the device speaking (its echo alone) for two
        // seconds, then the person again once the device is quiet.
        let speaking = 2 * 16_000
        let microphone = person + Self.echo(of: Array(played.prefix(speaking))) + person
        var reference = [Int16](repeating: 0, count: microphone.count)
        for i in 0..<speaking { reference[person.count + i] = played[i] }
        let output = try cancel(microphone, reference, mode)
        let lag = mode == .on ? 160 : 0
        func passed(_ range: Range<Int>) -> Bool { range.allSatisfy { output[$0 + lag] == microphone[$0] } }
        #expect(passed(0..<(person.count - lag)), "before the device spoke")
        // The tail (128 ms) and a second after the last played sample, plus the cross-fade frame.
        let quiet = person.count + speaking + (128 + 1_000) * 16 + 2 * 160
        #expect(passed(quiet..<(output.count - lag)), "a second after it stopped")
        let whileSpeaking = (person.count + 16_000)..<(person.count + speaking)
        #expect(!passed(whileSpeaking), "processed while it spoke")
    }

    @Test func processingAllocatesNothing() throws {
        let played = try Self.played()
        let microphone = Self.echo(of: played)
        let frames = microphone.count / 160
        for mode in [EchoSettings.Mode.on, .linear] {
            var copy = Array(microphone[0..<frames * 160])
            let canceller = try #require(try EchoCanceller(EchoSettings(mode: mode)))
            try copy.withUnsafeMutableBufferPointer { mic in
                try played.withUnsafeBufferPointer { reference in
                    // Warm up: the first call of each path may touch lazily initialised runtime state.
                    canceller.process(UnsafeMutableBufferPointer(rebasing: mic[0..<1_600]),
                                      reference: UnsafeBufferPointer(rebasing: reference[0..<1_600]))
                    let before = parley_malloc_count_current_thread()
                    var offset = 1_600
                    while offset < mic.count {
                        canceller.process(UnsafeMutableBufferPointer(rebasing: mic[offset..<offset + 160]),
                                          reference: UnsafeBufferPointer(rebasing: reference[offset..<offset + 160]))
                        offset += 160
                    }
                    let after = parley_malloc_count_current_thread()
                    #expect(after == before, "\(mode): \(after - before) allocations")
                    _ = try #require(canceller.frames == frames)
                }
            }
        }
    }
}

/// The reference ring between playback and the echo canceller: what is
/// played lands at the capture position it will be heard at.
@Suite struct EchoReferenceTests {
    final class Clock: @unchecked Sendable {
        // @unchecked: set by the test between calls on the same thread.
        var now: Int64 = 0
    }

    func read(_ reference: EchoReference, _ range: Range<Int64>) -> [Int16] {
        var out = [Int16](repeating: -1, count: range.count)
        out.withUnsafeMutableBufferPointer { reference.read(from: range.lowerBound, into: $0) }
        return out
    }

    @Test func aPeriodLandsAtTheClockPlusThePlaybackDelay() {
        let clock = Clock()
        let reference = EchoReference { clock.now }
        reference.prepare(format: PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 160, bufferFrames: 1_280))
        clock.now = 1_000
        let period = (1...160).map { Int16($0) }
        period.withUnsafeBytes { reference.played($0.baseAddress!, frames: 160, delayFrames: 480) }
        #expect(read(reference, 1_480..<1_640) == period)
        #expect(read(reference, 1_000..<1_480).allSatisfy { $0 == 0 }, "nothing was played before it")
        #expect(read(reference, 1_640..<1_700).allSatisfy { $0 == 0 }, "nor after it yet")
        // The next period follows on, though the clocks moved a little (jitter under 20 ms).
        clock.now = 1_170
        period.withUnsafeBytes { reference.played($0.baseAddress!, frames: 160, delayFrames: 480) }
        #expect(read(reference, 1_640..<1_800) == period)
        #expect(reference.resyncs == 1, "only the first period was placed by the clocks")
    }

    @Test func aLargeJumpResynchronisesAndADropCutsWhatWillNotBeHeard() {
        let clock = Clock()
        let reference = EchoReference { clock.now }
        reference.prepare(format: PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 160, bufferFrames: 1_280))
        let period = [Int16](repeating: 9, count: 160)
        period.withUnsafeBytes { reference.played($0.baseAddress!, frames: 160, delayFrames: 0) }
        clock.now = 8_000                    // an underrun: half a second later
        period.withUnsafeBytes { reference.played($0.baseAddress!, frames: 160, delayFrames: 320) }
        #expect(reference.resyncs == 2)
        #expect(read(reference, 8_320..<8_480) == period)
        #expect(read(reference, 160..<8_320).allSatisfy { $0 == 0 }, "the gap is silence")
        clock.now = 8_400                    // stopped: what was queued after now is never heard
        reference.dropped()
        #expect(read(reference, 8_320..<8_400) == Array(period[0..<80]))
        #expect(read(reference, 8_400..<8_480).allSatisfy { $0 == 0 })
    }

    @Test func aStereoDevicePeriodIsConvertedAsCaptureConvertsTheMicrophone() {
        let clock = Clock()
        let reference = EchoReference { clock.now }
        let format = PCMFormat(sampleRate: 48_000, channels: 2, periodFrames: 480, bufferFrames: 1_920)
        reference.prepare(format: format)
        // A 500 Hz tone at 48 kHz on both channels, for a quarter second.
        let frames = 12_000
        var interleaved = [Int16](repeating: 0, count: frames * 2)
        for i in 0..<frames {
            let s = Int16(10_000 * sin(2 * Double.pi * 500 * Double(i) / 48_000))
            interleaved[2 * i] = s
            interleaved[2 * i + 1] = s
        }
        interleaved.withUnsafeBytes { raw in
            var offset = 0
            while offset < frames {
                reference.played(raw.baseAddress! + offset * 4, frames: 480, delayFrames: 0)
                offset += 480
                clock.now += 160                 // capture runs on: 10 ms per period
            }
        }
        // 16 kHz mono at the clock: a quarter second, the tone at its level.
        let tone = read(reference, 1_600..<3_600)
        let rms = (tone.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(tone.count)).squareRoot()
        #expect(abs(rms - 10_000 / 2.0.squareRoot()) < 500, "RMS \(rms)")
        #expect(reference.writtenEnd >= 3_900 && reference.writtenEnd <= 4_000)
    }

    @Test func withoutACaptureClockNothingIsWritten() {
        let reference = EchoReference()
        reference.prepare(format: PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 160, bufferFrames: 1_280))
        let period = [Int16](repeating: 5, count: 160)
        period.withUnsafeBytes { reference.played($0.baseAddress!, frames: 160, delayFrames: 0) }
        #expect(!reference.isConnected && reference.writtenEnd == 0)
    }

    @Test func writingAPeriodAllocatesNothing() {
        let clock = Clock()
        let reference = EchoReference { clock.now }
        reference.prepare(format: PCMFormat(sampleRate: 48_000, channels: 2, periodFrames: 480, bufferFrames: 1_920))
        let period = [Int16](repeating: 300, count: 960)
        var out = [Int16](repeating: 0, count: 160)
        period.withUnsafeBytes { raw in
            out.withUnsafeMutableBufferPointer { block in
                reference.played(raw.baseAddress!, frames: 480, delayFrames: 0)
                reference.read(from: 0, into: block)
                let before = parley_malloc_count_current_thread()
                for _ in 0..<100 {
                    clock.now += 160
                    reference.played(raw.baseAddress!, frames: 480, delayFrames: 960)
                    reference.read(from: clock.now - 160, into: block)
                }
                #expect(parley_malloc_count_current_thread() == before)
            }
        }
    }
}

@Suite struct EchoGateTests {
    @Test func keptEnergyIsMeasuredOverTheUtterance() {
        let microphone = (0..<1_600).map { Int16(($0 % 200) * 50 - 5_000) }
        #expect(EchoGate.keptDecibels(microphone: microphone[...], cleaned: microphone[...]) == 0)
        let tenth = microphone.map { $0 / 10 }
        #expect(abs(EchoGate.keptDecibels(microphone: microphone[...], cleaned: tenth[...]) + 20) < 0.1)
        let silence = [Int16](repeating: 0, count: 1_600)
        #expect(EchoGate.keptDecibels(microphone: silence[...], cleaned: silence[...]) == 0, "nothing to judge")
        #expect(EchoGate.keptDecibels(microphone: microphone[...], cleaned: silence[...]) < -60)
    }

    @Test func aPersonsLevelPassesAndTheResidualEchoDoesNot() {
        // The simulated room's figures: a person 10 dB under the echo kept
        // -10 to -19 dB, the device's own residual -35 dB and less.
        #expect(EchoGate.accepts(keptDecibels: -10) && EchoGate.accepts(keptDecibels: -19))
        #expect(!EchoGate.accepts(keptDecibels: -35) && !EchoGate.accepts(keptDecibels: -26))
        #expect(EchoGate.accepts(keptDecibels: -26, threshold: -30), "the threshold can be given")
    }
}

/// The playback tap through ALSA's file plugin: what the playback thread
/// writes reaches the reference, converted to 16 kHz mono, at the capture
/// clock's positions.
@Suite struct PlaybackReferenceTapTests {
    @Test func whatIsPlayedReachesTheReference() throws {
        let dir = try TemporaryDirectory()
        // A capture clock running in real time, as the capture ring fills.
        let start = AudioThread.monotonicNanoseconds()
        let reference = EchoReference { (AudioThread.monotonicNanoseconds() - start) * 16_000 / 1_000_000_000 }
        var configuration = PlaybackConfiguration(device: FileAudioDevice.playback(output: dir.url.appendingPathComponent("out.wav")),
                                                  pacing: .realTime)
        configuration.echoReference = reference
        let service = try PlaybackService(configuration: configuration)
        try service.start()
        // Half a second of a 400 Hz tone at 16 kHz (the device runs at 48 kHz stereo).
        let tone = (0..<8_000).map { Int16(8_000 * sin(2 * Double.pi * 400 * Double($0) / 16_000)) }
        service.enqueue(tone, sampleRate: 16_000)
        service.waitUntilIdle()
        service.shutdown()
        let end = reference.writtenEnd
        #expect(end >= 8_000, "half a second written, ending at \(end)")
        var heard = [Int16](repeating: 0, count: 8_000)
        heard.withUnsafeMutableBufferPointer { reference.read(from: end - 8_000, into: $0) }
        let rms = (heard.reduce(0.0) { $0 + Double($1) * Double($1) } / 8_000).squareRoot()
        // Most of the tone is there at its level (8000 / sqrt 2: 5657), in mono.
        #expect(rms > 4_000 && rms < 6_000, "RMS \(rms)")
    }
}

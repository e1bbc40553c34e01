import CParleyMallocCounter
import CSpeexDSP
import Foundation
import Testing
import ParleyTestKit
@testable import ParleyAudio

/// The capture front end through a scripted speexdsp: what it asks of the
/// library, frame by frame, and what it does when the library refuses.
@Suite struct FrontEndCallTraceTests {
    typealias Request = SpeexRequest

    @Test func denoiseSetsUpTenMillisecondFramesWithoutGain() throws {
        let mock = MockSpeex()
        do {
            let frontEnd = try FrontEnd(settings: FrontEndSettings(mode: .denoise, noiseSuppressDecibels: -25), speex: mock.functions)
            #expect(frontEnd.settings.mode == .denoise)
        }
        #expect(mock.calls == [
            "speex_preprocess_state_init(160, 16000)",
            "speex_preprocess_ctl(\(Request.denoise), 1)",
            "speex_preprocess_ctl(\(Request.noiseSuppress), -25)",
            "speex_preprocess_ctl(\(Request.agc), 0)",
            "speex_preprocess_ctl(\(Request.dereverb), 0)",
            "speex_preprocess_state_destroy",
        ])
        // The request numbers are speexdsp's own.
        #expect(Request.denoise == SPEEX_PREPROCESS_SET_DENOISE && Request.agcLevel == SPEEX_PREPROCESS_SET_AGC_LEVEL)
    }

    @Test func automaticGainSetsItsLevelAndMaximum() throws {
        let mock = MockSpeex()
        _ = try FrontEnd(settings: FrontEndSettings(mode: .denoiseAGC, agcLevel: 12_000, agcMaxGainDecibels: 20),
                         speex: mock.functions)
        #expect(mock.calls.contains("speex_preprocess_ctl(\(Request.agc), 1)"))
        #expect(mock.calls.contains("speex_preprocess_ctl(\(Request.agcLevel), 12000.0)"))
        #expect(mock.calls.contains("speex_preprocess_ctl(\(Request.agcMaxGain), 20)"))
        #expect(mock.count("speex_preprocess_state_destroy") == 1)
    }

    @Test func oneCallPerFrameInPlaceAfterPrimingWithTheFirst() throws {
        let mock = MockSpeex()
        let frontEnd = try FrontEnd(settings: FrontEndSettings(mode: .denoise), speex: mock.functions)
        var samples = [Int16](repeating: 7, count: 4 * 160)
        samples.withUnsafeMutableBufferPointer { frontEnd.process($0) }
        // The first frame once more before it (the preprocessor's lag), then one call per frame.
        #expect(mock.count("speex_preprocess_run") == 5)
        #expect(frontEnd.frames == 4)
        #expect(samples.allSatisfy { $0 == 8 }, "every sample went through the preprocessor once, in place")
        var more = [Int16](repeating: 7, count: 2 * 160)
        more.withUnsafeMutableBufferPointer { frontEnd.process($0) }
        #expect(mock.count("speex_preprocess_run") == 7, "primed once, not per call")
    }

    @Test func failedInitIsAClearError() {
        let mock = MockSpeex(.init(initFails: true))
        #expect(throws: FrontEndError.initFailed(frameSize: 160, sampleRate: 16_000)) {
            try FrontEnd(settings: FrontEndSettings(mode: .denoise), speex: mock.functions)
        }
        #expect(mock.calls == ["speex_preprocess_state_init(160, 16000)"], "nothing to destroy")
        #expect(FrontEndError.initFailed(frameSize: 160, sampleRate: 16_000).description.contains("160-sample frames at 16000 Hz"))
    }

    @Test func refusedControlDestroysTheStateOnce() {
        let mock = MockSpeex(.init(refusedRequest: SpeexRequest.agcMaxGain))
        do {
            _ = try FrontEnd(settings: FrontEndSettings(mode: .denoiseAGC, agcMaxGainDecibels: 40), speex: mock.functions)
            Issue.record("init succeeded")
        } catch {
            #expect(error == .controlRefused(request: "automatic gain maximum (dB)", value: "40"))
            #expect(error.description == "speexdsp refused automatic gain maximum (dB) = 40")
        }
        #expect(mock.count("speex_preprocess_state_destroy") == 1)
        #expect(mock.calls.last == "speex_preprocess_state_destroy")
    }

    @Test func noneRunsNoStage() throws {
        #expect(try FrontEnd(.none) == nil)
    }
}

@Suite struct FrontEndSettingsTests {
    @Test func readsTheKnownSettings() throws {
        #expect(try FrontEndSettings(parsing: "none") == .none)
        #expect(try FrontEndSettings(parsing: "denoise").mode == .denoise)
        let agc = try FrontEndSettings(parsing: "denoise+agc:-30")
        #expect(agc.mode == .denoiseAGC && agc.noiseSuppressDecibels == -30)
        #expect(agc.description == "denoise+agc:-30")
        #expect(try FrontEndSettings(parsing: agc.description) == agc, "the description reads back")
    }

    @Test(arguments: ["", "webrtc", "denoise:loud", "denoise:-90", "denoise:5", "none:-20", "Denoise"])
    func rejectsOthersNamingTheValue(_ text: String) {
        do {
            _ = try FrontEndSettings(parsing: text)
            Issue.record("'\(text)' accepted")
        } catch {
            #expect(error.description.contains("'\(text)'"))
            #expect(error.description.contains("none, denoise, denoise+agc or neural"))
        }
    }
}

/// The real speexdsp: the preprocessor does what the stage is for, and
/// allocates nothing per frame.
@Suite struct FrontEndSignalTests {
    func noise(seconds: Double, amplitude: Double, seed: UInt64 = 3) -> [Int16] {
        var rng = SplitMix64(seed: seed)
        return (0..<Int(seconds * 16_000)).map { _ in
            Int16((Double(rng.next() % 20_001) / 10_000 - 1) * amplitude)
        }
    }

    func energy(_ samples: ArraySlice<Int16>) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(samples.count)
    }

    @Test func denoiseAttenuatesSteadyNoise() throws {
        let input = noise(seconds: 3, amplitude: 2_000)
        var output = input
        let frontEnd = try #require(try FrontEnd(FrontEndSettings(mode: .denoise)))
        output.withUnsafeMutableBufferPointer { frontEnd.process($0) }
        // After the noise estimate settles (the first second), steady noise
        // is suppressed by several dB (the setting allows up to 15).
        let ratio = energy(output[16_000...]) / energy(input[16_000...])
        #expect(ratio < 0.5, "energy kept: \(ratio)")
    }

    /// The room is in the very first frame handed out, not 10 ms of
    /// silence (the preprocessor's lag): an endpointer calibrating on it
    /// would otherwise take a noise floor of zero.
    @Test func theFirstFrameHandedOutHoldsTheRoom() throws {
        let input = noise(seconds: 0.1, amplitude: 2_000)
        var output = input
        let frontEnd = try #require(try FrontEnd(FrontEndSettings(mode: .denoise)))
        output.withUnsafeMutableBufferPointer { frontEnd.process($0) }
        let ratio = energy(output[0..<160]) / energy(input[0..<160])
        #expect(ratio > 0.1, "energy of the first frame kept: \(ratio)")
    }

    @Test func automaticGainRaisesAQuietRecording() throws {
        // A command recorded far from the microphone: a real recording at an eighth of its level.
        let quiet = try WAVFile.read(try Fixtures.wavFiles(in: Fixtures.coffeeClean)[0]).samples.map { $0 / 8 }
        func through(_ mode: FrontEndSettings.Mode) throws -> [Int16] {
            var output = quiet
            let frontEnd = try #require(try FrontEnd(FrontEndSettings(mode: mode)))
            output.withUnsafeMutableBufferPointer { frontEnd.process(UnsafeMutableBufferPointer(rebasing: $0[0..<($0.count / 160 * 160)])) }
            return output
        }
        let gained = try through(.denoiseAGC), denoised = try through(.denoise)
        let ratio = energy(gained[...]) / energy(denoised[...])
        #expect(ratio > 2, "automatic gain over denoise alone: \(ratio)")
    }

    @Test func processingAllocatesNothing() throws {
        let samples = try WAVFile.read(try Fixtures.wavFiles(in: Fixtures.coffeeClean)[0]).samples
        let frames = samples.count / FrontEnd.frameSamples
        _ = try #require(frames > 100)
        for mode in [FrontEndSettings.Mode.denoise, .denoiseAGC] {
            var copy = Array(samples[0..<frames * FrontEnd.frameSamples])
            let frontEnd = try #require(try FrontEnd(FrontEndSettings(mode: mode)))
            try copy.withUnsafeMutableBufferPointer { buffer in
                // Warm up: the first call of each path may touch lazily
                // initialised runtime state (see EndpointerAllocationTests).
                frontEnd.process(UnsafeMutableBufferPointer(rebasing: buffer[0..<1_600]))
                let before = parley_malloc_count_current_thread()
                var offset = 1_600
                while offset < buffer.count {
                    frontEnd.process(UnsafeMutableBufferPointer(rebasing: buffer[offset..<offset + 160]))
                    offset += 160
                }
                let after = parley_malloc_count_current_thread()
                #expect(after == before, "\(mode): \(after - before) allocations")
                _ = try #require(frontEnd.frames == frames)
            }
        }
    }
}

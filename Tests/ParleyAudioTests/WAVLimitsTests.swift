import Foundation
import Testing

@testable import ParleyAudio

/// WAV headers are outside input (`parley play`, `parley understand`): an
/// absurd rate or channel count is refused with a reason, not resampled.
@Suite struct WAVLimitsTests {
    static func header(rate: Int, channels: Int) -> Data {
        var data = WAVFile.encode([1, 2, 3, 4], sampleRate: 16_000, channels: 1)
        func put(_ value: Int, bytes: Int, at offset: Int) {
            for i in 0..<bytes { data[offset + i] = UInt8((value >> (8 * i)) & 0xFF) }
        }
        put(channels, bytes: 2, at: 22)
        put(rate, bytes: 4, at: 24)
        return data
    }

    @Test func ratesAndChannelsAtTheBoundsAreReadAndBeyondThemRefused() throws {
        #expect(try WAVFile.decode(Self.header(rate: 4_000, channels: 1), path: "a.wav").sampleRate == 4_000)
        #expect(try WAVFile.decode(Self.header(rate: 192_000, channels: 4), path: "a.wav").channels == 4)
        for (rate, channels, reason) in [
            (1, 1, "sample rate 1 Hz; expected 4000-192000 Hz"), (3_999, 1, "sample rate 3999 Hz"),
            (192_001, 1, "sample rate 192001 Hz"), (4_294_967_295, 1, "sample rate 4294967295 Hz"),
            (16_000, 33, "33 channels; expected 1-32"),
        ] {
            do {
                _ = try WAVFile.decode(Self.header(rate: rate, channels: channels), path: "a.wav")
                Issue.record("rate \(rate), \(channels) channels accepted")
            } catch {
                #expect("\(error)".contains(reason), "\(error)")
                #expect("\(error)".contains("a.wav"))
            }
        }
    }

    @Test func theSpoolTakesAnyRateWithinTheBoundsAsMono16k() throws {
        let stereo = WAVFile.Contents(samples: [Int16](repeating: 100, count: 8_000 * 2), sampleRate: 8_000, channels: 2)
        let mono = try AudioSpool.microphoneSamples(stereo, path: "a.wav")
        #expect(abs(mono.count - 16_000) <= 2)
        for rate in [11_025, 22_050, 44_100, 48_000, 192_000] {
            let contents = WAVFile.Contents(samples: [Int16](repeating: 100, count: rate / 10), sampleRate: rate, channels: 1)
            #expect(abs(try AudioSpool.microphoneSamples(contents, path: "a.wav").count - 1_600) <= 2, "\(rate) Hz")
        }
    }

    /// Found by scripts/fuzz.sh wav (Tests/Fuzz/regressions/wav/): a header
    /// declaring 44098 Hz made `parley play` design a 635,000-tap filter.
    @Test func anOddRateIsRefusedBeforeAnyFilterIsDesigned() {
        let odd = WAVFile.Contents(samples: [1, 2, 3, 4], sampleRate: 44_098, channels: 2)
        #expect(throws: AudioError.self) { try AudioSpool.microphoneSamples(odd, path: "odd.wav") }
        do { _ = try AudioSpool.microphoneSamples(odd, path: "odd.wav") } catch {
            #expect("\(error)".hasPrefix("odd.wav: sample rate 44098 Hz is not a common rate"))
        }
    }
}

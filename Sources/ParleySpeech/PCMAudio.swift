import Foundation
import ParleyAudio

/// 16 kHz, 16-bit, mono PCM audio: the only format the recogniser accepts.
public struct PCMAudio: Sendable, Equatable {
    public static let sampleRate = 16_000
    public var samples: [Int16]
    public init(samples: [Int16]) { self.samples = samples }
    public var seconds: Double { Double(samples.count) / Double(Self.sampleRate) }

    /// Reads a WAV file (ParleyAudio's reader) and checks it is 16 kHz mono.
    public static func read(_ url: URL) throws -> PCMAudio {
        let (samples, rate) = try WAVFile.read(url)
        guard rate == sampleRate else {
            throw SpeechError.badFile(path: url.path, reason: "sample rate \(rate) Hz; expected 16000 Hz mono 16-bit PCM")
        }
        return PCMAudio(samples: samples)
    }

    /// This audio with noise added at `snr` dB, the published way
    /// (ParleyAudio's `NoiseMixer`: loudest 2048-sample frames).
    public func mixed(with noise: PCMAudio, snr: Double, seed: UInt64) -> PCMAudio {
        PCMAudio(samples: NoiseMixer.mix(speech: samples, noise: noise.samples, snrDB: snr, seed: seed))
    }
}

import Foundation
import ParleyAudio

/// Voice settings for speech out.
public struct VoiceSettings: Sendable, Hashable {
    /// espeak-ng voice name (espeak-ng --voices), e.g. "en-us".
    public var voice = "en-us"
    /// Words per minute, 80...450.
    public var rate = 175
    /// 0...200 (100 is normal).
    public var volume = 100
    public init(voice: String = "en-us", rate: Int = 175, volume: Int = 100) {
        self.voice = voice
        self.rate = rate
        self.volume = volume
    }
}

/// Speech out with espeak-ng (espeak_Synth in AUDIO_OUTPUT_SYNCHRONOUS mode):
/// text is normalised (`SpokenText`) and audio is handed to `sink` chunk by
/// chunk as espeak produces it, so playback can start before the sentence
/// is finished. The engine is process-wide; calls are serialised.
public struct SpeechSynthesizer: Sendable {
    public var settings: VoiceSettings

    public init(settings: VoiceSettings = VoiceSettings()) throws {
        guard (80...450).contains(settings.rate) else {
            throw SpeechError.badSetting(name: "rate", value: "\(settings.rate)", expected: "80...450 words per minute")
        }
        guard (0...200).contains(settings.volume) else {
            throw SpeechError.badSetting(name: "volume", value: "\(settings.volume)", expected: "0...200")
        }
        self.settings = settings
    }

    /// The engine's output sample rate (espeak-ng produces 22050 Hz).
    public var sampleRate: Int { get throws { try Espeak.shared.withEngine { Espeak.shared.sampleRate } } }

    /// Speaks `text`, streaming mono Int16 chunks to `sink`; `sink` returns
    /// false to stop early (barge-in).
    public func speak(_ text: String, sink: @escaping (UnsafeBufferPointer<Int16>) -> Bool) throws {
        let spoken = SpokenText.normalise(text)
        try Espeak.shared.withEngine {
            try Espeak.shared.setVoice(settings.voice)
            espeakParameter(rate: settings.rate, volume: settings.volume)
            try Espeak.shared.synthesize(spoken, sink: sink)
        }
    }

    /// The whole utterance at 16 kHz (for the recogniser and tests).
    public func render16k(_ text: String) throws -> PCMAudio {
        var samples: [Int16] = []
        try speak(text) { chunk in samples.append(contentsOf: chunk); return true }
        return PCMAudio(samples: PolyphaseResampler.resample(samples, from: try sampleRate, to: PCMAudio.sampleRate))
    }
}

import Foundation
import Glibc

/// A stand-in microphone for machines without a sound card that stays open:
/// a raw file (S16_LE, 16 kHz, mono) that ALSA's file plugin reads as its
/// capture input while other processes append to it. The plugin reads the
/// input file with plain read(2) from where it left off, so samples
/// appended to the file are captured as they arrive, and reads past its end
/// leave the period untouched, which the capture service turns into silence
/// (`CaptureConfiguration.silenceBeyondInput`). `parley play FILE.wav`
/// appends through the daemon; a person's recording then reaches the
/// recogniser exactly as it would from a card: ALSA, ring, endpointer.
public struct AudioSpool: Sendable {
    public static let sampleRate = 16_000
    /// Appends are padded to whole capture periods (a microphone's,
    /// `PCMFormat.microphone`), so the plugin never reads a period that is
    /// only partly written.
    public static let periodFrames = PCMFormat.microphone.periodFrames

    public let url: URL

    /// Opens the spool, creating it if needed. `empty`: drop what an earlier
    /// run left in it (the capture reads the file from its start, so a
    /// restarted daemon would hear old recordings again).
    public init(url: URL, empty: Bool = false) throws {
        self.url = url
        if empty || !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw AudioError.badFile(path: url.path, reason: "cannot create the audio spool")
            }
        }
    }

    /// The capture configuration that listens to this spool in real time.
    public var captureConfiguration: CaptureConfiguration {
        var configuration = CaptureConfiguration(
            device: FileAudioDevice.capture(rawInput: url, name: "parley_spool_capture"),
            format: .microphone,
            realtimePriority: nil, pacing: .realTime)
        configuration.silenceBeyondInput = true
        configuration.inputLock = url
        return configuration
    }

    /// Appends a 16-bit WAV file (any rate, any channel count: mixed to mono
    /// and resampled to 16 kHz) between `lead` and `padding` seconds of
    /// silence, so the endpointer sees where the utterance starts and ends
    /// even when the file is trimmed tight. Returns the seconds appended.
    @discardableResult
    public func append(wav: URL, lead: Double = 0.3, padding: Double = 1.0) throws -> Double {
        var samples = try Self.microphoneSamples(try WAVFile.readInterleaved(wav), path: wav.path)
        samples = [Int16](repeating: 0, count: Int(lead * Double(Self.sampleRate))) + samples
        samples += [Int16](repeating: 0, count: Int(padding * Double(Self.sampleRate)))
        let remainder = samples.count % Self.periodFrames
        if remainder != 0 { samples += [Int16](repeating: 0, count: Self.periodFrames - remainder) }
        try append(samples)
        return Double(samples.count) / Double(Self.sampleRate)
    }

    /// The finest rate ratio converted: rate/16000 reduced to up/down with
    /// `up` at most this. Every common rate qualifies (11025 Hz, the finest,
    /// is 640/441); an odd one such as 44098 Hz (8000/22049) would need a
    /// filter of over half a million taps, seconds of work for one file
    /// (found by scripts/fuzz.sh wav).
    public static let maximumUpsampling = 640

    /// A WAV file's samples as the microphone delivers them: mono, 16 kHz.
    /// Throws for a rate that cannot be converted cheaply, naming `path`.
    public static func microphoneSamples(_ contents: WAVFile.Contents, path: String) throws -> [Int16] {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let up = sampleRate / gcd(contents.sampleRate, sampleRate)
        guard up <= maximumUpsampling else {
            throw AudioError.badFile(path: path, reason: "sample rate \(contents.sampleRate) Hz is not a common rate; "
                + "convert it first (8000, 11025, 16000, 22050, 32000, 44100 or 48000 Hz, for example)")
        }
        let samples = mono(contents.samples, channels: contents.channels)
        return contents.sampleRate == sampleRate ? samples : resample(samples, from: contents.sampleRate)
    }

    /// Appends samples in one write(2) with O_APPEND.
    public func append(_ samples: [Int16]) throws {
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else {
            throw AudioError.badFile(path: url.path, reason: "cannot open the audio spool: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }  // and the lock with it
        // The capture reads under a shared lock and skips a period while
        // this one is held (`CaptureConfiguration.inputLock`).
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw AudioError.badFile(path: url.path, reason: "cannot lock the audio spool: \(String(cString: strerror(errno)))")
            }
        }
        try samples.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw AudioError.badFile(path: url.path, reason: "cannot append to the audio spool: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    static func mono(_ interleaved: [Int16], channels: Int) -> [Int16] {
        guard channels > 1 else { return interleaved }
        var result = [Int16](repeating: 0, count: interleaved.count / channels)
        for frame in result.indices {
            var sum = 0
            for channel in 0..<channels { sum += Int(interleaved[frame * channels + channel]) }
            result[frame] = Int16(sum / channels)
        }
        return result
    }

    static func resample(_ samples: [Int16], from rate: Int) -> [Int16] {
        let block = 4_096
        let resampler = PolyphaseResampler(inputRate: rate, outputRate: sampleRate, maxInput: block)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: resampler.maxOutput(forInput: block))
        defer { output.deallocate() }
        var result: [Int16] = []
        result.reserveCapacity(samples.count * sampleRate / rate + 2)
        var start = 0
        while start < samples.count {
            let count = min(block, samples.count - start)
            for i in 0..<count { resampler.inputSlot[i] = Float(samples[start + i]) }
            let produced = resampler.process(count: count, output: output)
            for i in 0..<produced { result.append(Int16(max(-32_768, min(32_767, output[i].rounded())))) }
            start += count
        }
        return result
    }
}

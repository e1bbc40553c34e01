import Foundation

/// ALSA devices backed by files, through ALSA's own `file` plugin over the
/// `null` plugin, for machines without a sound card (tests, the simulated
/// board, the daemon's development default). The configuration is generated
/// asoundrc text, opened privately with `snd_pcm_open_lconf`, so nothing in
/// the user's or system's ALSA configuration changes.
///
/// Capture: `infile` supplies the samples; the null slave never blocks, so
/// reads run as fast as possible unless the capture service paces them
/// (`Pacing.realTime`). After the end of the file the plugin delivers the
/// null slave's silence. The file plugin reads raw interleaved frames in the
/// PCM's own format, so WAV input is first written as a raw file.
/// Playback: the plugin writes everything played to a WAV file.
public enum FileAudioDevice {
    /// The generated ALSA configuration (an asoundrc) defining PCM `name`.
    public static func captureConfiguration(name: String = "parley_file_capture", rawInput: URL) -> String {
        """
        pcm.\(name) {
            type file
            slave.pcm { type null }
            file "/dev/null"
            format "raw"
            infile "\(escaped(rawInput.path))"
        }
        """
    }

    public static func playbackConfiguration(name: String = "parley_file_playback", output: URL) -> String {
        """
        pcm.\(name) {
            type file
            slave.pcm { type null }
            file "\(escaped(output.path))"
            format "wav"
        }
        """
    }

    /// A capture device reading raw interleaved frames from `rawInput`.
    public static func capture(rawInput: URL, name: String = "parley_file_capture") -> PCMDevice {
        PCMDevice(name: name, configuration: captureConfiguration(name: name, rawInput: rawInput))
    }

    /// A capture device playing the samples of a 16-bit WAV file: writes its
    /// frames as raw into `workDirectory` and returns the device and the
    /// file's format (open the PCM with that rate and channel count).
    public static func capture(wav: URL, workDirectory: URL) throws -> (device: PCMDevice, sampleRate: Int, channels: Int) {
        let contents = try WAVFile.readInterleaved(wav)
        let raw = workDirectory.appendingPathComponent(wav.deletingPathExtension().lastPathComponent + ".raw")
        try writeRaw(contents.samples, to: raw)
        return (capture(rawInput: raw), contents.sampleRate, contents.channels)
    }

    /// A playback device writing what is played to the WAV file `output`.
    public static func playback(output: URL, name: String = "parley_file_playback") -> PCMDevice {
        PCMDevice(name: name, configuration: playbackConfiguration(name: name, output: output))
    }

    /// Writes interleaved S16_LE samples as a raw file.
    public static func writeRaw(_ samples: [Int16], to url: URL) throws {
        // Parley runs on little-endian machines only (x86-64, AArch64, ARMv7).
        let data = samples.withUnsafeBufferPointer { Data(buffer: $0) }
        do { try data.write(to: url) } catch {
            throw AudioError.badFile(path: url.path, reason: "cannot write raw audio: \(error.localizedDescription)")
        }
    }

    private static func escaped(_ path: String) -> String {
        path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}

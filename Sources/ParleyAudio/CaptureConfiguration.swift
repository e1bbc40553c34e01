import Foundation

/// How a capture or playback loop is paced.
public enum Pacing: String, Sendable, Codable {
    /// As the PCM delivers: a sound card's clock, or as fast as possible for
    /// the file plugin (whose null slave never waits).
    case device
    /// At most one second of audio per second of wall-clock time, for file
    /// devices that should behave like a microphone (simulated board, demos).
    case realTime
}

/// Everything the capture service needs, usually read from configuration.
public struct CaptureConfiguration: Sendable {
    public var device: PCMDevice
    /// What to ask the card for; rate and channels are converted to `outputSampleRate` mono.
    public var format: PCMFormat
    /// Rate of the audio in the ring (the recogniser's rate).
    public var outputSampleRate: Int
    /// Seconds of history the ring keeps.
    public var ringSeconds: Double
    /// SCHED_FIFO priority to request for the capture thread (nil: don't ask).
    /// The default, 20, is what dist/parleyd.service permits (LimitRTPRIO=20):
    /// above every normal thread, below the kernel's threaded interrupt
    /// handlers (50), which the sound card's own interrupt needs.
    public var realtimePriority: Int32?
    public var pacing: Pacing
    /// Back-off between reopen attempts after the device vanished: starts at
    /// `reconnectInitialMilliseconds`, doubles up to `reconnectMaximumMilliseconds`.
    public var reconnectInitialMilliseconds: Int
    public var reconnectMaximumMilliseconds: Int
    /// Name of the capture thread (visible in top -H, ps -L).
    public var threadName: String
    /// Device frames to capture before the service reports `.endOfInput`
    /// and idles until stopped: the length of a file source (after its end
    /// ALSA's file plugin repeats its last buffer). nil for microphones.
    public var inputFrameLimit: Int?
    /// Clear each period before reading it, for a file source that may run
    /// dry and fill up again (`AudioSpool`): past the end of its input the
    /// file plugin returns the period without writing to it (measured on
    /// alsa-lib 1.2.8), which would otherwise repeat the last audio.
    public var silenceBeyondInput = false
    /// A file whose shared lock (flock(2), never waited for) is held around
    /// each read: a writer appending to the input under an exclusive lock
    /// (`AudioSpool.append`) is never read half-way. A file grows page by
    /// page as a write proceeds, and a writer preempted mid-append on a busy
    /// CPU would otherwise leave a reader at the end of a half-written
    /// utterance, which then gets silence in its middle. While the writer
    /// holds it, a period of silence is captured instead of a read.
    public var inputLock: URL?

    public init(
        device: PCMDevice,
        format: PCMFormat = .microphone,
        outputSampleRate: Int = 16_000, ringSeconds: Double = 8, realtimePriority: Int32? = 20,
        pacing: Pacing = .device, reconnectInitialMilliseconds: Int = 100, reconnectMaximumMilliseconds: Int = 5_000,
        threadName: String = "parley-capture", inputFrameLimit: Int? = nil
    ) {
        self.inputFrameLimit = inputFrameLimit
        self.device = device
        self.format = format
        self.outputSampleRate = outputSampleRate
        self.ringSeconds = ringSeconds
        self.realtimePriority = realtimePriority
        self.pacing = pacing
        self.reconnectInitialMilliseconds = reconnectInitialMilliseconds
        self.reconnectMaximumMilliseconds = reconnectMaximumMilliseconds
        self.threadName = threadName
    }
}

extension CaptureConfiguration {
    /// Capture from a 16-bit WAV file through ALSA's file plugin (no sound
    /// card): the device format is the file's, capture ends at the file's end
    /// (`CaptureState.endOfInput`). `workDirectory` receives the raw copy the
    /// plugin reads. `.realTime` behaves like a microphone; `.device` runs as
    /// fast as possible.
    public static func file(wav: URL, workDirectory: URL, pacing: Pacing = .realTime,
                            ringSeconds: Double = 8) throws -> CaptureConfiguration {
        let (device, rate, channels) = try FileAudioDevice.capture(wav: wav, workDirectory: workDirectory)
        let frames = try WAVFile.readInterleaved(wav).samples.count / channels
        // The microphone's period in time (30 ms), at the file's rate.
        let period = max(16, rate * PCMFormat.microphone.periodFrames / PCMFormat.microphone.sampleRate)
        return CaptureConfiguration(
            device: device,
            format: PCMFormat(sampleRate: rate, channels: channels, periodFrames: period, bufferFrames: period * 8),
            ringSeconds: ringSeconds, realtimePriority: nil, pacing: pacing, inputFrameLimit: frames)
    }
}

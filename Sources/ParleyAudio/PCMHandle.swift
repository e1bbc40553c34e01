import CALSA
import Glibc

/// Sample formats Parley negotiates with a card. USB microphones offer S16_LE;
/// many I2S HATs offer only S32_LE.
public enum SampleFormat: String, Sendable, Codable, CaseIterable {
    case s16 = "S16_LE"
    case s32 = "S32_LE"

    public var bytesPerSample: Int { self == .s16 ? 2 : 4 }
    var alsa: snd_pcm_format_t { self == .s16 ? SND_PCM_FORMAT_S16_LE : SND_PCM_FORMAT_S32_LE }
}

/// What to ask a PCM for; the card may adjust rate, period and buffer.
public struct PCMFormat: Sendable, Equatable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int
    public var format: SampleFormat
    public var periodFrames: Int
    public var bufferFrames: Int

    /// What Parley asks of a microphone unless told otherwise: 16 kHz mono,
    /// 30 ms periods (the listener's block, `ListeningPipeline.listenBatchSamples`,
    /// so the capture thread wakes once per block read; 10 ms periods woke it
    /// three times: BENCHMARKS.md "Capture periods of 30 ms"), eight periods
    /// (240 ms) of buffer before an overrun. The capture default, the
    /// spool's and `audio.capture_*`'s.
    public static let microphone = PCMFormat(sampleRate: 16_000, channels: 1, periodFrames: 480, bufferFrames: 3_840)

    public init(sampleRate: Int, channels: Int, format: SampleFormat = .s16, periodFrames: Int, bufferFrames: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    public var description: String {
        "\(format.rawValue) \(channels) ch \(sampleRate) Hz, period \(periodFrames), buffer \(bufferFrames) frames"
    }

    var bytesPerFrame: Int { channels * format.bytesPerSample }

    func validate() throws(AudioError) {
        guard (4000...384_000).contains(sampleRate) else {
            throw .invalidConfiguration("sample rate \(sampleRate) Hz (expected 4000...384000)")
        }
        guard (1...8).contains(channels) else { throw .invalidConfiguration("channels \(channels) (expected 1...8)") }
        guard periodFrames >= 16 else { throw .invalidConfiguration("period \(periodFrames) frames (expected >= 16)") }
        guard bufferFrames >= 2 * periodFrames else {
            throw .invalidConfiguration("buffer \(bufferFrames) frames (expected at least two periods, \(2 * periodFrames))")
        }
    }
}

/// Where a PCM lives: an ALSA device name ("default", "hw:1,0",
/// "plughw:CARD=Device"), optionally resolved in a private configuration
/// (the generated asoundrc of a file device) instead of the system one.
public struct PCMDevice: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    /// ALSA configuration text defining `name`, loaded with
    /// `snd_pcm_open_lconf`; nil means the system configuration.
    public var configuration: String?

    public init(name: String, configuration: String? = nil) {
        self.name = name
        self.configuration = configuration
    }

    public var description: String { name }
}

/// Owns one `snd_pcm_t` (opened non-blocking) and closes it with
/// `snd_pcm_close` in deinit. Used by one thread at a time.
final class PCMHandle {
    let alsa: ALSAFunctions
    let raw: OpaquePointer
    let device: PCMDevice
    /// The format the card accepted.
    private(set) var negotiated: PCMFormat

    private init(alsa: ALSAFunctions, raw: OpaquePointer, device: PCMDevice, format: PCMFormat) {
        self.alsa = alsa
        self.raw = raw
        self.device = device
        self.negotiated = format
    }

    deinit { _ = alsa.close(raw) }

    /// Opens `device` for `stream` (non-blocking) and negotiates `format`
    /// (interleaved access; rate, period and buffer "near" the request).
    static func open(_ device: PCMDevice, stream: snd_pcm_stream_t, format: PCMFormat, alsa: ALSAFunctions) -> Result<PCMHandle, ALSAStatus> {
        var config: OpaquePointer?
        if let text = device.configuration {
            let loaded = ALSAStatus.check(.configLoad, retryOnInterrupt: false) {
                let (rc, tree) = alsa.configLoad(text)
                config = tree
                return Int(rc)
            }
            if case .failure(let status) = loaded { return .failure(status) }
        }
        defer { if let config { alsa.configDelete(config) } }
        var pcm: OpaquePointer?
        let opened = ALSAStatus.check(.open) {
            let (rc, handle) = alsa.open(device.name, stream, SND_PCM_NONBLOCK, config)
            pcm = handle
            return Int(rc)
        }
        if case .failure(let status) = opened { return .failure(status) }
        guard let pcm else { return .failure(ALSAStatus(call: .open, errno: ENODEV)) }
        let handle = PCMHandle(alsa: alsa, raw: pcm, device: device, format: format)
        switch handle.configure(format) {
        case .success: return .success(handle)
        case .failure(let status): return .failure(status)
        }
    }

    private func configure(_ request: PCMFormat) -> Result<Void, ALSAStatus> {
        var maybeParams: OpaquePointer?
        let allocated = ALSAStatus.check(.hwParamsMalloc) {
            let (rc, params) = alsa.hwParamsMalloc()
            maybeParams = params
            return Int(rc)
        }
        if case .failure(let status) = allocated { return .failure(status) }
        guard let params = maybeParams else { return .failure(ALSAStatus(call: .hwParamsMalloc, errno: ENOMEM)) }
        defer { alsa.hwParamsFree(params) }
        let pcm = raw
        var result = request
        let steps: [() -> Result<Int, ALSAStatus>] = [
            { ALSAStatus.check(.hwParamsAny) { Int(self.alsa.hwParamsAny(pcm, params)) } },
            { ALSAStatus.check(.setAccess) { Int(self.alsa.hwParamsSetAccess(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)) } },
            { ALSAStatus.check(.setFormat) { Int(self.alsa.hwParamsSetFormat(pcm, params, request.format.alsa)) } },
            { ALSAStatus.check(.setChannels) { Int(self.alsa.hwParamsSetChannels(pcm, params, UInt32(request.channels))) } },
            {
                ALSAStatus.check(.setRate) {
                    let (rc, rate) = self.alsa.hwParamsSetRateNear(pcm, params, UInt32(request.sampleRate))
                    result.sampleRate = Int(rate)
                    return Int(rc)
                }
            },
            {
                ALSAStatus.check(.setPeriodSize) {
                    let (rc, frames) = self.alsa.hwParamsSetPeriodSizeNear(pcm, params, UInt(request.periodFrames))
                    result.periodFrames = Int(frames)
                    return Int(rc)
                }
            },
            {
                ALSAStatus.check(.setBufferSize) {
                    let (rc, frames) = self.alsa.hwParamsSetBufferSizeNear(pcm, params, UInt(request.bufferFrames))
                    result.bufferFrames = Int(frames)
                    return Int(rc)
                }
            },
            { ALSAStatus.check(.hwParams) { Int(self.alsa.hwParams(pcm, params)) } },
            { ALSAStatus.check(.prepare) { Int(self.alsa.prepare(pcm)) } },
        ]
        for step in steps {
            if case .failure(let status) = step() { return .failure(status) }
        }
        negotiated = result
        return .success(())
    }

    /// The PCM's poll descriptors, written to `fds` (capacity `capacity`); returns how many.
    func pollDescriptors(into fds: UnsafeMutablePointer<pollfd>, capacity: Int) -> Int {
        let count = min(Int(alsa.pollDescriptorsCount(raw)), capacity)
        guard count > 0 else { return 0 }
        let filled = alsa.pollDescriptors(raw, fds, UInt32(count))
        return max(0, Int(filled))
    }
}

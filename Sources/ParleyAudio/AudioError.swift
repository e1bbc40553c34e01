import Glibc

/// Errors the audio services report at their boundary, each naming the device
/// and what was expected. Inside the loops failures stay `ALSAStatus` values.
public enum AudioError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No PCM of that name (snd_pcm_open: ENOENT/ENODEV/ENXIO).
    case deviceNotFound(device: String, detail: String)
    /// Another program holds the device (EBUSY).
    case deviceBusy(device: String)
    /// The device rejected the requested sample format, channel count or access.
    case unsupportedFormat(device: String, requested: String, detail: String)
    /// Any other libasound failure: which call and its message.
    case deviceFailed(device: String, call: String, errno: Int32, message: String)
    /// A configuration value out of range (never reached libasound).
    case invalidConfiguration(String)
    /// A file that is not what we expected (WAV reader, file devices).
    case badFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .deviceNotFound(let device, let detail):
            return "audio device '\(device)' not found (\(detail)); check the PCM name (aplay -L / arecord -L)"
        case .deviceBusy(let device):
            return "audio device '\(device)' is busy: another program has it open"
        case .unsupportedFormat(let device, let requested, let detail):
            return "audio device '\(device)' does not support \(requested): \(detail)"
        case .deviceFailed(let device, let call, let errno, let message):
            return "audio device '\(device)': \(call) failed: \(message) (errno \(errno))"
        case .invalidConfiguration(let what):
            return "invalid audio configuration: \(what)"
        case .badFile(let path, let reason):
            return "\(path): \(reason)"
        }
    }

    /// Maps a failed libasound call on `device` to the error a person can act on.
    static func from(_ status: ALSAStatus, device: String, requested: String, alsa: ALSAFunctions) -> AudioError {
        let message = alsa.strerror(-status.errno)
        switch (status.call, status.errno) {
        case (.open, ENOENT), (.open, ENODEV), (.open, ENXIO):
            return .deviceNotFound(device: device, detail: message)
        case (_, EBUSY):
            return .deviceBusy(device: device)
        case (.setFormat, _), (.setChannels, _), (.setAccess, _), (.setRate, _):
            return .unsupportedFormat(device: device, requested: requested, detail: "\(status.call.rawValue): \(message)")
        default:
            return .deviceFailed(device: device, call: status.call.rawValue, errno: status.errno, message: message)
        }
    }
}

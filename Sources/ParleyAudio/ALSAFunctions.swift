import CALSA
import Glibc

/// Every libasound (and poll(2)) entry point ParleyAudio calls, as one table of
/// function values: the swift-system "syscall mocking" shape. Production code
/// uses `ALSAFunctions.system`, whose entries call libasound directly; the
/// tests substitute entries that record a call trace and inject failures
/// (-EPIPE, -EBUSY, -ENODEV, -EINTR) without a sound card.
///
/// Entries return libasound's own status convention (negative errno on
/// failure) and never throw: translation happens in `ALSAStatus.check` only.
/// `snd_pcm_t *` is an `OpaquePointer`, owned by `PCMHandle`.
struct ALSAFunctions: Sendable {
    /// `snd_pcm_open`, or `snd_pcm_open_lconf` when a private configuration is given.
    var open: @Sendable (_ name: String, _ stream: snd_pcm_stream_t, _ mode: Int32, _ config: OpaquePointer?) -> (Int32, OpaquePointer?)
    /// `snd_pcm_close`.
    var close: @Sendable (OpaquePointer) -> Int32
    /// The hardware-parameter negotiation (`snd_pcm_hw_params_*`), one call per entry.
    var hwParamsMalloc: @Sendable () -> (Int32, OpaquePointer?)
    var hwParamsFree: @Sendable (OpaquePointer) -> Void
    var hwParamsAny: @Sendable (OpaquePointer, OpaquePointer) -> Int32
    var hwParamsSetAccess: @Sendable (OpaquePointer, OpaquePointer, snd_pcm_access_t) -> Int32
    var hwParamsSetFormat: @Sendable (OpaquePointer, OpaquePointer, snd_pcm_format_t) -> Int32
    var hwParamsSetChannels: @Sendable (OpaquePointer, OpaquePointer, UInt32) -> Int32
    var hwParamsSetRateNear: @Sendable (OpaquePointer, OpaquePointer, UInt32) -> (Int32, UInt32)
    var hwParamsSetPeriodSizeNear: @Sendable (OpaquePointer, OpaquePointer, UInt) -> (Int32, UInt)
    var hwParamsSetBufferSizeNear: @Sendable (OpaquePointer, OpaquePointer, UInt) -> (Int32, UInt)
    var hwParams: @Sendable (OpaquePointer, OpaquePointer) -> Int32
    /// `snd_pcm_prepare`, `snd_pcm_start`, `snd_pcm_drop`, `snd_pcm_recover`.
    var prepare: @Sendable (OpaquePointer) -> Int32
    var start: @Sendable (OpaquePointer) -> Int32
    var drop: @Sendable (OpaquePointer) -> Int32
    var recover: @Sendable (OpaquePointer, Int32, Int32) -> Int32
    /// `snd_pcm_readi` / `snd_pcm_writei` (interleaved frames).
    var readi: @Sendable (OpaquePointer, UnsafeMutableRawPointer, UInt) -> Int
    var writei: @Sendable (OpaquePointer, UnsafeRawPointer, UInt) -> Int
    /// `snd_pcm_delay`: frames queued but not yet heard (playback).
    var delay: @Sendable (OpaquePointer) -> (Int32, Int)
    /// `snd_pcm_poll_descriptors_count`, `snd_pcm_poll_descriptors`, `snd_pcm_poll_descriptors_revents`.
    var pollDescriptorsCount: @Sendable (OpaquePointer) -> Int32
    var pollDescriptors: @Sendable (OpaquePointer, UnsafeMutablePointer<pollfd>, UInt32) -> Int32
    var pollRevents: @Sendable (OpaquePointer, UnsafeMutablePointer<pollfd>, UInt32) -> (Int32, UInt16)
    /// poll(2) on the PCM descriptors plus the service's wake-up eventfd;
    /// returns the number of ready descriptors or a negative errno.
    var poll: @Sendable (UnsafeMutablePointer<pollfd>, Int, Int32) -> Int32
    /// Parses configuration text into a private `snd_config_t` tree
    /// (`snd_config_top`, `snd_input_buffer_open`, `snd_config_load`) for
    /// `snd_pcm_open_lconf`; `configDelete` is `snd_config_delete`.
    var configLoad: @Sendable (String) -> (Int32, OpaquePointer?)
    var configDelete: @Sendable (OpaquePointer) -> Void
    /// `snd_strerror`, used only at the error boundary.
    var strerror: @Sendable (Int32) -> String
    /// The simple mixer (`snd_mixer_*`), for the volume (`ALSAMixer`).
    var mixer: ALSAMixerFunctions = .system

    /// The real libasound.
    static let system = ALSAFunctions(
        open: { name, stream, mode, config in
            var pcm: OpaquePointer?
            let rc: Int32
            if let config {
                rc = snd_pcm_open_lconf(&pcm, name, stream, mode, config)
            } else {
                rc = snd_pcm_open(&pcm, name, stream, mode)
            }
            return (rc, pcm)
        },
        close: { snd_pcm_close($0) },
        hwParamsMalloc: {
            var params: OpaquePointer?
            let rc = snd_pcm_hw_params_malloc(&params)
            return (rc, params)
        },
        hwParamsFree: { snd_pcm_hw_params_free($0) },
        hwParamsAny: { snd_pcm_hw_params_any($0, $1) },
        hwParamsSetAccess: { snd_pcm_hw_params_set_access($0, $1, $2) },
        hwParamsSetFormat: { snd_pcm_hw_params_set_format($0, $1, $2) },
        hwParamsSetChannels: { snd_pcm_hw_params_set_channels($0, $1, $2) },
        hwParamsSetRateNear: { pcm, params, rate in
            var value = rate
            var dir: Int32 = 0
            let rc = snd_pcm_hw_params_set_rate_near(pcm, params, &value, &dir)
            return (rc, value)
        },
        hwParamsSetPeriodSizeNear: { pcm, params, frames in
            var value = snd_pcm_uframes_t(frames)
            var dir: Int32 = 0
            let rc = snd_pcm_hw_params_set_period_size_near(pcm, params, &value, &dir)
            return (rc, UInt(value))
        },
        hwParamsSetBufferSizeNear: { pcm, params, frames in
            var value = snd_pcm_uframes_t(frames)
            let rc = snd_pcm_hw_params_set_buffer_size_near(pcm, params, &value)
            return (rc, UInt(value))
        },
        hwParams: { snd_pcm_hw_params($0, $1) },
        prepare: { snd_pcm_prepare($0) },
        start: { snd_pcm_start($0) },
        drop: { snd_pcm_drop($0) },
        recover: { snd_pcm_recover($0, $1, $2) },
        readi: { Int(snd_pcm_readi($0, $1, snd_pcm_uframes_t($2))) },
        writei: { Int(snd_pcm_writei($0, $1, snd_pcm_uframes_t($2))) },
        delay: { pcm in
            var frames: snd_pcm_sframes_t = 0
            let rc = snd_pcm_delay(pcm, &frames)
            return (rc, Int(frames))
        },
        pollDescriptorsCount: { snd_pcm_poll_descriptors_count($0) },
        pollDescriptors: { snd_pcm_poll_descriptors($0, $1, $2) },
        pollRevents: { pcm, fds, count in
            var revents: UInt16 = 0
            let rc = snd_pcm_poll_descriptors_revents(pcm, fds, count, &revents)
            return (rc, revents)
        },
        poll: { fds, count, timeout in
            let rc = Glibc.poll(fds, nfds_t(count), timeout)
            return rc < 0 ? -errno : rc
        },
        configLoad: { text in
            var config: OpaquePointer?
            var rc = snd_config_top(&config)
            guard rc >= 0, let top = config else { return (rc, nil) }
            var input: OpaquePointer?
            rc = text.withCString { snd_input_buffer_open(&input, $0, Int(strlen($0))) }
            guard rc >= 0, let input else {
                snd_config_delete(top)
                return (rc, nil)
            }
            rc = snd_config_load(top, input)
            snd_input_close(input)
            if rc < 0 {
                snd_config_delete(top)
                return (rc, nil)
            }
            return (0, top)
        },
        configDelete: { _ = snd_config_delete($0) },
        strerror: { String(cString: snd_strerror($0)) }
    )
}

/// A failed libasound call: which call, and the (positive) errno it reported.
/// A plain value with no strings, so the capture loop can create and inspect
/// one without allocating.
struct ALSAStatus: Error, Equatable, Sendable {
    var call: ALSACall
    var errno: Int32

    /// The one place a libasound status becomes a Swift value (swift-system's
    /// `valueOrErrno`): negative results are errors, `-EINTR` is retried.
    @inline(__always)
    static func check(_ call: ALSACall, retryOnInterrupt: Bool = true, _ body: () -> Int) -> Result<Int, ALSAStatus> {
        while true {
            let rc = body()
            if rc >= 0 { return .success(rc) }
            if retryOnInterrupt && rc == -Int(EINTR) { continue }
            return .failure(ALSAStatus(call: call, errno: Int32(truncatingIfNeeded: -rc)))
        }
    }
}

/// Names of the wrapped calls, for error messages and call-trace tests.
enum ALSACall: String, Sendable {
    case open = "snd_pcm_open"
    case close = "snd_pcm_close"
    case hwParamsMalloc = "snd_pcm_hw_params_malloc"
    case hwParamsAny = "snd_pcm_hw_params_any"
    case setAccess = "snd_pcm_hw_params_set_access"
    case setFormat = "snd_pcm_hw_params_set_format"
    case setChannels = "snd_pcm_hw_params_set_channels"
    case setRate = "snd_pcm_hw_params_set_rate_near"
    case setPeriodSize = "snd_pcm_hw_params_set_period_size_near"
    case setBufferSize = "snd_pcm_hw_params_set_buffer_size_near"
    case hwParams = "snd_pcm_hw_params"
    case prepare = "snd_pcm_prepare"
    case start = "snd_pcm_start"
    case drop = "snd_pcm_drop"
    case recover = "snd_pcm_recover"
    case readi = "snd_pcm_readi"
    case writei = "snd_pcm_writei"
    case delay = "snd_pcm_delay"
    case pollDescriptors = "snd_pcm_poll_descriptors"
    case poll = "poll"
    case configLoad = "snd_config_load"
    case mixerOpen = "snd_mixer_open"
    case mixerAttach = "snd_mixer_attach"
    case mixerRegister = "snd_mixer_selem_register"
    case mixerLoad = "snd_mixer_load"
    case mixerVolumeRange = "snd_mixer_selem_get_playback_volume_range"
    case mixerSetVolume = "snd_mixer_selem_set_playback_volume_all"
    case mixerGetVolume = "snd_mixer_selem_get_playback_volume"
    case mixerSetSwitch = "snd_mixer_selem_set_playback_switch_all"
    case mixerGetSwitch = "snd_mixer_selem_get_playback_switch"
}

import CSpeexDSP

/// Every speexdsp entry point the capture front end and the echo canceller call, as one table of
/// function values (the shape of `ALSAFunctions`): production code uses
/// `SpeexFunctions.system`; the tests substitute entries that record a call
/// trace and inject failures without touching the library.
///
/// `SpeexPreprocessState *` and `SpeexEchoState *` are `OpaquePointer`s,
/// owned by `FrontEnd` and `EchoCanceller`.
/// `speex_preprocess_ctl` takes a `void *` whose type depends on the
/// request, so it is split into one entry per argument type.
struct SpeexFunctions: Sendable {
    /// `speex_preprocess_state_init(frame_size, sampling_rate)`; nil on failure.
    var preprocessInit: @Sendable (_ frameSize: Int32, _ sampleRate: Int32) -> OpaquePointer?
    /// `speex_preprocess_ctl` with an `int` argument; 0 on success, -1 for an unknown request.
    var preprocessControlInt: @Sendable (OpaquePointer, _ request: Int32, _ value: Int32) -> Int32
    /// `speex_preprocess_ctl` with a `float` argument (the AGC level).
    var preprocessControlFloat: @Sendable (OpaquePointer, _ request: Int32, _ value: Float) -> Int32
    /// `speex_preprocess_run`: one frame in place; returns the VAD flag (unused: the endpointer decides).
    var preprocessRun: @Sendable (OpaquePointer, UnsafeMutablePointer<Int16>) -> Int32
    /// `speex_preprocess_state_destroy`.
    var preprocessDestroy: @Sendable (OpaquePointer) -> Void
    /// `speex_preprocess_ctl(SPEEX_PREPROCESS_SET_ECHO_STATE, echo)`: the
    /// preprocessor suppresses what the echo canceller left (residual echo).
    var preprocessSetEchoState: @Sendable (_ preprocess: OpaquePointer, _ echo: OpaquePointer) -> Int32

    /// `speex_echo_state_init(frame_size, filter_length)`; nil on failure.
    var echoInit: @Sendable (_ frameSize: Int32, _ filterLength: Int32) -> OpaquePointer?
    /// `speex_echo_ctl` with an `int` argument (the sampling rate); 0 on success.
    var echoControlInt: @Sendable (OpaquePointer, _ request: Int32, _ value: Int32) -> Int32
    /// `speex_echo_cancellation(state, rec, play, out)`: one frame of the
    /// microphone with the frame of the reference heard at the same time.
    var echoCancel: @Sendable (OpaquePointer, _ microphone: UnsafePointer<Int16>, _ reference: UnsafePointer<Int16>,
                               _ out: UnsafeMutablePointer<Int16>) -> Void
    /// `speex_echo_state_destroy`.
    var echoDestroy: @Sendable (OpaquePointer) -> Void

    /// The real libspeexdsp.
    static let system = SpeexFunctions(
        preprocessInit: { speex_preprocess_state_init($0, $1) },
        preprocessControlInt: { state, request, value in
            var argument = value
            return speex_preprocess_ctl(state, request, &argument)
        },
        preprocessControlFloat: { state, request, value in
            var argument = value
            return speex_preprocess_ctl(state, request, &argument)
        },
        preprocessRun: { speex_preprocess_run($0, $1) },
        preprocessDestroy: { speex_preprocess_state_destroy($0) },
        preprocessSetEchoState: { preprocess, echo in
            speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo))
        },
        echoInit: { speex_echo_state_init($0, $1) },
        echoControlInt: { state, request, value in
            var argument = value
            return speex_echo_ctl(state, request, &argument)
        },
        echoCancel: { speex_echo_cancellation($0, $1, $2, $3) },
        echoDestroy: { speex_echo_state_destroy($0) })
}

/// The `speex_preprocess_ctl` requests the front end sets (the header's
/// `#define`s, which Swift imports as untyped constants).
enum SpeexRequest {
    static let denoise = Int32(SPEEX_PREPROCESS_SET_DENOISE)
    static let noiseSuppress = Int32(SPEEX_PREPROCESS_SET_NOISE_SUPPRESS)
    static let agc = Int32(SPEEX_PREPROCESS_SET_AGC)
    static let agcLevel = Int32(SPEEX_PREPROCESS_SET_AGC_LEVEL)
    static let agcMaxGain = Int32(SPEEX_PREPROCESS_SET_AGC_MAX_GAIN)
    static let dereverb = Int32(SPEEX_PREPROCESS_SET_DEREVERB)
    static let echoSuppress = Int32(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS)
    static let echoSuppressActive = Int32(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE)
    static let echoSamplingRate = Int32(SPEEX_ECHO_SET_SAMPLING_RATE)
}

import CSpeexDSP

/// Every speexdsp entry point the capture front end calls, as one table of
/// function values (the shape of `ALSAFunctions`): production code uses
/// `SpeexFunctions.system`; the tests substitute entries that record a call
/// trace and inject failures without touching the library.
///
/// `SpeexPreprocessState *` is an `OpaquePointer`, owned by `FrontEnd`.
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
        preprocessDestroy: { speex_preprocess_state_destroy($0) })
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
}

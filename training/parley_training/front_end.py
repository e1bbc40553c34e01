"""The daemon's capture front end (ParleyAudio's FrontEnd: speexdsp's
preprocessor, denoise on, AGC and dereverberation off, 10 ms frames, the
first frame run once before it is processed for real), called through
ctypes on libspeexdsp, so that the evaluation hears what the daemon's
stage would give it.

    denoised(x, suppress_db=-15) -> x after noise suppression (int16-scaled floats)
"""
import ctypes
import ctypes.util

import numpy

FRAME = 160  # FrontEnd.frameSamples
RATE = 16000
SET_DENOISE, SET_AGC, SET_DEREVERB, SET_NOISE_SUPPRESS = 0, 2, 8, 18

_lib = None


def _speex():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(ctypes.util.find_library("speexdsp") or "libspeexdsp.so.1")
        _lib.speex_preprocess_state_init.restype = ctypes.c_void_p
        _lib.speex_preprocess_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
        _lib.speex_preprocess_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        _lib.speex_preprocess_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        _lib.speex_preprocess_state_destroy.argtypes = [ctypes.c_void_p]
    return _lib


def denoised(x, suppress_db=-15):
    """x (int16-scaled floats, 16 kHz) through a fresh preprocessor, whole
    frames; a last partial frame is passed through as it is."""
    lib = _speex()
    state = lib.speex_preprocess_state_init(FRAME, RATE)
    if not state:
        raise RuntimeError("speexdsp could not create a preprocessor for 160-sample frames at 16000 Hz")
    try:
        for request, value in ((SET_DENOISE, 1), (SET_NOISE_SUPPRESS, suppress_db), (SET_AGC, 0), (SET_DEREVERB, 0)):
            v = ctypes.c_int(value)
            if lib.speex_preprocess_ctl(state, request, ctypes.byref(v)) != 0:
                raise RuntimeError(f"speexdsp refused request {request} = {value}")
        pcm = numpy.clip(numpy.round(x), -32768, 32767).astype(numpy.int16)
        n = len(pcm) // FRAME
        if n:
            primer = numpy.ascontiguousarray(pcm[:FRAME])
            lib.speex_preprocess_run(state, primer.ctypes.data)
            base = pcm.ctypes.data
            run = lib.speex_preprocess_run
            for i in range(n):
                run(state, base + 2 * FRAME * i)
        return pcm.astype(numpy.float64)
    finally:
        lib.speex_preprocess_state_destroy(state)

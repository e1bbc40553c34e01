"""Reading recordings and mixing noise the way the published benchmarks do."""
import hashlib
import subprocess
import wave

import numpy as np

RATE = 16000


def read(path):
    """16 kHz mono 16-bit WAV or FLAC as float32 in int16 units."""
    if str(path).endswith(".flac"):
        import soundfile
        x, rate = soundfile.read(str(path), dtype="int16")
        if rate != RATE or x.ndim != 1:
            raise ValueError(f"{path}: expected 16 kHz mono, got {rate} Hz, shape {x.shape}")
        return x.astype(np.float32)
    with wave.open(str(path)) as w:
        if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, RATE):
            raise ValueError(f"{path}: expected 16 kHz 16-bit mono WAV")
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32)


def write(path, x):
    pcm = np.clip(np.round(x), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def seed_of(*parts):
    """A stable seed from names (Python's hash() changes per process)."""
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "little")


def _loudest_frame(x, n=2048):
    frames = len(x) // n
    if frames == 0:
        return float(np.sum(x.astype(np.float64) ** 2))
    return float(np.max(np.sum(x[:frames * n].astype(np.float64).reshape(frames, n) ** 2, axis=1)))


def mix(speech, noise, snr_db, seed):
    """Speech plus a random slice of `noise` scaled so that the loudest
    2048-sample frame of speech over the loudest of noise is `snr_db` (the
    Picovoice benchmarks' rule)."""
    rng = np.random.default_rng(seed)
    if len(noise) <= len(speech):
        noise = np.tile(noise, len(speech) // len(noise) + 2)
    start = int(rng.integers(0, len(noise) - len(speech)))
    part = noise[start:start + len(speech)].astype(np.float64)
    gain = np.sqrt(_loudest_frame(speech) / max(_loudest_frame(part), 1e-9) / 10 ** (snr_db / 10))
    return (speech + gain * part).astype(np.float32)


def espeak(text, voice, speed=160, pitch=50):
    """espeak-ng's rendering of `text` at 16 kHz (it speaks at 22,050 Hz)."""
    raw = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", text],
                         check=True, capture_output=True).stdout
    return resample_wav_bytes(raw)


def flite(text, voice):
    raw = subprocess.run(["flite", "-voice", voice, "-t", text, "-o", "/dev/stdout"],
                         check=True, capture_output=True).stdout
    return resample_wav_bytes(raw)


def festival(text, voice, stretch=1.0):
    """Festival's rendering of `text` in one of its voices (text2wave), at
    16 kHz; `stretch` > 1 speaks more slowly (Duration_Stretch)."""
    import tempfile
    # text2wave into a file of its own: two runs writing /dev/stdout at once
    # were seen to give an empty recording.
    with tempfile.TemporaryDirectory() as d:
        out = f"{d}/out.wav"
        subprocess.run(["text2wave", "-eval", f"(voice_{voice})", "-eval", f"(Parameter.set 'Duration_Stretch {stretch})",
                        "-o", out], input=text.encode(), check=True, capture_output=True)
        raw = open(out, "rb").read()
    x = resample_wav_bytes(raw)
    if len(x) < RATE // 10:
        raise RuntimeError(f"festival: voice {voice} rendered {len(x)} samples of {text!r}")
    return x


def resample_wav_bytes(raw):
    import io
    from scipy.signal import resample_poly
    with wave.open(io.BytesIO(raw)) as w:
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32)
    if rate == RATE:
        return x
    from math import gcd
    g = gcd(rate, RATE)
    return resample_poly(x, RATE // g, rate // g).astype(np.float32)

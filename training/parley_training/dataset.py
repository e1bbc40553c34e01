"""The wake word's training and evaluation sets as speech_embedding features,
made deterministically (fixed seeds, names in sorted order) and cached.

Every recording is padded with 1 s of faint noise on both sides so that the
word fits whole in the head's 1.28 s context, and the recordings' own room
sound is not cut off by digital silence the microphone never gives.
"""
import glob
import json
import os

import numpy as np

from . import audio, speech_embedding as se

PAD = audio.RATE
CONFUSABLE = [
    "commuter", "compute", "computing", "come pewter", "come to her", "cucumber", "competitor",
    "complete", "composer", "consumer", "conductor", "counter", "compote", "commute", "computation",
    "pewter", "tutor", "come here", "calm puter", "can you", "company", "comfort", "compass",
    "a computer's", "the commuter train", "computed", "cool pewter", "come pick her up", "copper",
]
SENTENCES = [
    "turn on the kitchen light", "what time is it", "set a timer for ten minutes", "order soup with soup chef",
    "play some music", "how is the weather today", "I would like a large latte", "hey coffee time",
    "can you hear me", "the train leaves at seven", "please call my mother", "add milk to the list",
]
ESPEAK_VOICES = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-029",
                 "en-us+f2", "en-us+f4", "en-gb+f3", "en-us+m3", "en-us+m7", "en-gb+m2", "en-us+klatt", "en-us+f5"]
FLITE_VOICES = ["kal", "awb", "rms", "slt"]
# Debian's festival voices (festvox-kallpc16k, festvox-kdlpc16k, festvox-us-slt-hts).
FESTIVAL_VOICES = ["kal_diphone", "ked_diphone", "cmu_us_slt_arctic_hts"]


def padded(x, name, lead=PAD):
    """`x` with faint noise before (`lead` samples) and after (a second)."""
    rng = np.random.default_rng(audio.seed_of("pad", name))
    floor = rng.normal(0, 3.0, lead).astype(np.float32)
    tail = rng.normal(0, 3.0, PAD).astype(np.float32)
    return np.concatenate([floor, x, tail])


def real_files(data):
    pos = sorted(glob.glob(os.path.join(data, "wake-computer/clean/*.wav")))
    neg = sorted(glob.glob(os.path.join(data, "wake-other/*/*.flac"))) + sorted(glob.glob(os.path.join(data, "coffee-maker/clean/*.wav")))
    return pos, neg


def synthetic(kind, festival=False):
    """(name, audio) of synthetic voices: positives say "computer". With
    `festival`, Debian's festival voices too (measured 2026-12-06 for the
    shipped head and not kept: BENCHMARKS.md; `parley wake train` uses them)."""
    texts = ["computer"] if kind == "positive" else CONFUSABLE + SENTENCES
    out = []
    for t in texts:
        for i, v in enumerate(ESPEAK_VOICES):
            rng = np.random.default_rng(audio.seed_of(kind, t, v))
            for rate, pitch in ([(int(rng.integers(120, 200)), int(rng.integers(20, 80))) for _ in range(4 if kind == "positive" else 1)]):
                out.append((f"espeak/{v}/{t}/{rate}-{pitch}", audio.espeak(t, v, rate, pitch)))
        for v in FLITE_VOICES:
            out.append((f"flite/{v}/{t}", audio.flite(t, v)))
        for v in (FESTIVAL_VOICES if festival else []):
            stretches = [0.85, 1.0, 1.2] if kind == "positive" else [1.0]
            for st in stretches:
                x = audio.festival(t, v, st)
                # Played faster or slower too: pitch and formants move as another speaker's would.
                for sp in ([0.9, 1.0, 1.1] if kind == "positive" else [1.0]):
                    out.append((f"festival/{v}/{t}/{st}-{sp}", speed(x, sp) if sp != 1.0 else x))
    return out


# Speeds of the real recordings of the word besides 0.88 and 1.12 (wake_cv's
# POSITIVE_SETS): each another set of speakers for the voices the folds
# never heard (measured 2026-12-06: BENCHMARKS.md, issue 50).
MORE_SPEEDS = (0.72, 0.8, 0.85, 0.94, 1.06, 1.15, 1.2, 1.3)


def speed(x, factor):
    """`x` played `factor` times as fast (pitch and formants move with it, as
    another speaker's would): resampled by the ratio of two small integers."""
    from fractions import Fraction
    from scipy.signal import resample_poly
    r = Fraction(factor).limit_denominator(20)
    return resample_poly(x, r.denominator, r.numerator).astype(np.float32)


def reverberant(x, name):
    """`x` in a small room: convolved with an exponentially decaying noise
    tail (RT60 0.2-0.7 s, drawn from the name) after the direct sound."""
    from scipy.signal import fftconvolve
    rng = np.random.default_rng(audio.seed_of("room", name))
    rt60 = rng.uniform(0.2, 0.7)
    n = int(rt60 * audio.RATE)
    t = np.arange(n) / audio.RATE
    tail = rng.normal(0, 1, n) * np.exp(-6.9 * t / rt60)
    tail[0] = 0
    ir = np.concatenate([[1.0], 0.25 * tail / np.sqrt(np.sum(tail ** 2))])
    y = fftconvolve(x, ir)[:len(x) + n // 2]
    return (y * np.sqrt(np.sum(x.astype(np.float64) ** 2) / max(np.sum(y ** 2), 1e-9))).astype(np.float32)


def features(items, noises=None, snr=None, seed="clean", lead=PAD):
    """{name: embeddings (k, 96)} of (name, audio) items, each mixed with a
    noise chosen by its name when `noises` is given ({name: audio})."""
    w = weights()
    out = {}
    for name, x in items:
        x = padded(x, name, lead)
        if noises:
            keys = sorted(noises)
            s = audio.seed_of(seed, name)
            noise = noises[keys[s % len(keys)]]
            level = snr if snr is not None else float(np.random.default_rng(s).uniform(3, 20))
            x = audio.mix(x, noise, level, s)
        out[name] = se.embeddings(x, w)
    return out


_WEIGHTS = None


def models_dir():
    d = os.environ.get("PARLEY_SPEECH_EMBEDDING_DIR")
    if d:
        return d
    import pyopen_wakeword
    return os.path.join(os.path.dirname(pyopen_wakeword.__file__), "models")


def weights():
    global _WEIGHTS
    if _WEIGHTS is None:
        d = models_dir()
        _WEIGHTS = se.Weights(os.path.join(d, "melspectrogram.tflite"), os.path.join(d, "embedding_model.tflite"))
    return _WEIGHTS


def save(path, feats):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    names = sorted(feats)
    np.savez_compressed(path, names=np.array(names), lengths=np.array([len(feats[n]) for n in names]),
                        data=np.concatenate([feats[n] for n in names]) if names else np.zeros((0, se.DIMS)))


def load(path):
    z = np.load(path)
    # Each z[key] reads and decompresses the whole array again: once only.
    data = z["data"]
    out, at = {}, 0
    for n, k in zip(z["names"], z["lengths"]):
        out[str(n)] = data[at:at + k]
        at += k
    return out

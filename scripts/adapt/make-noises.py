#!/usr/bin/env python3
"""Training noises for multi-condition adaptation, none of them the evaluation
noise (../shared/data/noise/kitchen.wav is never read here).

    make-noises.py OUT_DIR [SECONDS]

Writes 16 kHz mono 16-bit WAVs, each SECONDS long (default 60), from fixed
seeds so the same call gives the same bytes:
  white.wav   flat-spectrum Gaussian noise
  pink.wav    1/f noise (fan, ventilation, distant traffic)
  brown.wav   1/f^2 noise (rumble) plus 50 Hz mains hum and harmonics (appliances)
  babble.wav  six overlapping espeak-ng talkers, varied voices, pitches and rates
  clatter.wav dish- and cutlery-like hits: damped high resonances at random times
              over a low motor whine (extractor fan, dishwasher)
"""
import os
import struct
import subprocess
import sys
import wave

import numpy

RATE = 16000


def write_wav(path, x):
    x = x / (numpy.max(numpy.abs(x)) + 1e-9) * 0.7
    pcm = numpy.clip(numpy.round(x * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def coloured(rng, n, exponent):
    """Gaussian noise shaped to a 1/f^exponent power spectrum."""
    spec = numpy.fft.rfft(rng.standard_normal(n))
    f = numpy.fft.rfftfreq(n, 1.0 / RATE)
    f[0] = f[1]
    spec *= f ** (-exponent / 2.0)
    return numpy.fft.irfft(spec, n)


def hum(n, base=50.0):
    t = numpy.arange(n) / RATE
    return sum(numpy.sin(2 * numpy.pi * base * k * t) / k for k in range(1, 8))


def espeak(text, voice, rate, pitch):
    """One utterance from espeak-ng, resampled from 22050 Hz to 16 kHz."""
    out = subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-p", str(pitch), "--stdout", text],
                         check=True, capture_output=True).stdout
    with wave.open(__import__("io").BytesIO(out)) as w:
        src_rate = w.getframerate()
        x = numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(numpy.float64)
    n_out = int(len(x) * RATE / src_rate)
    return numpy.interp(numpy.arange(n_out) * src_rate / RATE, numpy.arange(len(x)), x)


SENTENCES = [
    "did you see the game last night it went to extra time",
    "we need to pick up the kids at half past three",
    "the weather is supposed to turn cold again by the weekend",
    "I left my keys on the table next to the window",
    "could you pass me the salt and the pepper please",
    "my sister is coming over for dinner on saturday",
    "the bus was late again so I walked the whole way",
    "remember to water the plants before we leave",
    "there is a meeting at nine tomorrow about the budget",
    "the oven needs to be cleaned before the holidays",
    "he said the new shop opens next month on the corner",
    "turn the music down a little I am on the phone",
]
VOICES = ["en-us", "en", "en-us+f2", "en+m3", "en-us+f4", "en+m7", "en-gb-x-rp+f3", "en-us+m1"]


def babble(rng, n, talkers=6):
    out = numpy.zeros(n)
    for t in range(talkers):
        track = []
        length = 0
        while length < n:
            s = SENTENCES[rng.integers(len(SENTENCES))]
            v = VOICES[rng.integers(len(VOICES))]
            x = espeak(s, v, int(rng.integers(130, 200)), int(rng.integers(20, 80)))
            x /= numpy.sqrt(numpy.mean(x ** 2)) + 1e-9
            gap = numpy.zeros(int(rng.integers(0, RATE // 2)))
            track += [x * rng.uniform(0.5, 1.0), gap]
            length += len(x) + len(gap)
        out += numpy.concatenate(track)[:n]
    return out


def clatter(rng, n):
    out = 0.02 * coloured(rng, n, 1.0)
    t = numpy.arange(n) / RATE
    out += 0.05 * numpy.sin(2 * numpy.pi * 120 * t) * (1 + 0.3 * numpy.sin(2 * numpy.pi * 0.7 * t))
    hits = int(n / RATE * 3)
    for _ in range(hits):
        start = int(rng.integers(0, n - RATE // 2))
        length = int(rng.integers(RATE // 20, RATE // 3))
        tt = numpy.arange(length) / RATE
        hit = numpy.zeros(length)
        for _ in range(int(rng.integers(2, 5))):
            f = rng.uniform(1500, 7000)
            hit += numpy.sin(2 * numpy.pi * f * tt + rng.uniform(0, 6.3)) * numpy.exp(-tt * rng.uniform(15, 60))
        hit += rng.standard_normal(length) * numpy.exp(-tt * 200) * 0.5
        out[start:start + length] += hit * rng.uniform(0.3, 1.0)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: make-noises.py OUT_DIR [SECONDS]")
    folder = sys.argv[1]
    n = int(float(sys.argv[2]) * RATE) if len(sys.argv) == 3 else 60 * RATE
    os.makedirs(folder, exist_ok=True)
    makers = {
        "white": lambda r: r.standard_normal(n),
        "pink": lambda r: coloured(r, n, 1.0),
        "brown": lambda r: (lambda b: b / numpy.std(b) + 0.3 * hum(n))(coloured(r, n, 2.0)),
        "babble": lambda r: babble(r, n),
        "clatter": lambda r: clatter(r, n),
    }
    for seed, (name, make) in enumerate(makers.items()):
        write_wav(os.path.join(folder, name + ".wav"), make(numpy.random.default_rng(1000 + seed)))
        print(os.path.join(folder, name + ".wav"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Negative audio for the wake word "computer": long streams of speech and
noise without it, generated from fixed seeds (same call, same bytes) and
split into folds, for training/bin/eval-wake-cv.sh.

    python3 -m parley_training.negatives OUT_DIR DATA_DIR [FOLDS]

DATA_DIR is ../shared/data: its recordings are read, never copied; only the
generated streams in OUT_DIR (a scratch folder, not committed) hold audio.
Writes OUT_DIR/<kind>-fold<k>.wav (16 kHz mono 16-bit) and
OUT_DIR/manifest.tsv (file, fold, kind, seconds), and next to each stream a
.txt listing where each part starts and what it is. Kinds:
  coffee-clean      the coffee orders of that fold, silence trimmed, joined
                    without gaps (one continuous talker after another)
  coffee-kitchen20  the same in kitchen noise at 20 dB
  coffee-kitchen10  the same in kitchen noise at 10 dB
  espeak-clean      espeak-ng sentences, a new voice, rate and pitch for each
                    (en-us, en-gb, scottish, RP, Lancaster, West Midlands,
                    Caribbean, NYC with female/male variants, 110-230 wpm),
                    100-400 ms apart
  espeak-kitchen10  other espeak-ng sentences in kitchen noise at 10 dB
  kitchen           the kitchen noise alone (a fifth of it per fold)
  tv                television-like audio: espeak-ng voices reading long
                    prose (paragraphs of the Python library's documentation,
                    one voice, rate and pitch per paragraph, as talkers take
                    turns) over synthetic music (chords of harmonic notes,
                    a beat of noise bursts) at 5-15 dB, with music-only
                    interludes; none of it kitchen noise (issue 27)
Folds: a coffee recording goes to fold int(sha256(name)[:8], 16) % FOLDS (as
training/bin/eval-adapt.sh splits them); espeak sentence i to fold i % FOLDS.
Sentences come from Debian's /usr/share/common-licenses texts and from
household templates that include near-misses of the wake word ("commuter",
"cucumber", "complete", "computing", "hey ..."); no sentence holds the word
"computer" itself.
"""
import ast
import glob
import hashlib
import io
import os
import re
import subprocess
import sys
import wave

import numpy

RATE = 16000
FRAME = 2048  # the published SNR definition: loudest 2048-sample frames


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1 and w.getsampwidth() == 2, path
        return numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(numpy.float64)


def write_wav(path, x):
    pcm = numpy.clip(numpy.round(x), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def write_stream(path, fold, kind, parts, labels):
    """One negative stream: its parts joined into `path`, and beside it a
    .txt of where each part starts and what it is (so a false alarm can be
    traced to its sentence); returns its manifest.tsv line."""
    x = numpy.concatenate(parts)
    write_wav(path, x)
    with open(path[:-4] + ".txt", "w") as t:
        at = 0
        for piece, label in zip(parts, labels):
            t.write(f"{at / RATE:.2f}\t{label}\n")
            at += len(piece)
    return f"{path}\t{fold}\t{kind}\t{len(x) / RATE:.2f}\n"


def frame_levels(x):
    """Each whole 10 ms frame's energy, dB."""
    n = len(x) // 160
    return 10 * numpy.log10(numpy.mean(x[: n * 160].reshape(n, 160) ** 2, axis=1) + 1e-9)


def loud_span(x, floor_db):
    """(first, end) sample of the 10 ms frames within floor_db of the
    loudest, or None for less than a frame."""
    if len(x) < 160:
        return None
    level = frame_levels(x)
    loud = numpy.nonzero(level >= level.max() - floor_db)[0]
    return loud[0] * 160, (loud[-1] + 1) * 160


def trim(x, floor_db=35.0, keep=0.1):
    """Cut leading and trailing silence: keep from the first to the last 10 ms
    frame within floor_db of the loudest, plus `keep` seconds either side."""
    span = loud_span(x, floor_db)
    if span is None:
        return x
    return x[max(0, span[0] - int(keep * RATE)):min(len(x), span[1] + int(keep * RATE))]


def peak_frame_rms(x):
    n = max(1, len(x) // FRAME)
    frames = x[: n * FRAME].reshape(n, FRAME) if len(x) >= FRAME else x.reshape(1, -1)
    return numpy.sqrt(numpy.max(numpy.mean(frames ** 2, axis=1))) + 1e-9


def mix(speech, noise, snr, rng):
    """Speech plus a random slice of noise scaled so the loudest frames'
    ratio is `snr` dB, the mix scaled to half full scale (as published)."""
    start = rng.integers(0, len(noise) - len(speech)) if len(noise) > len(speech) else 0
    piece = numpy.resize(noise[start:], len(speech))
    gain = peak_frame_rms(speech) / (peak_frame_rms(piece) * 10 ** (snr / 20))
    out = speech + gain * piece
    return out * (0.5 * 32767 / (numpy.max(numpy.abs(out)) + 1e-9))


def espeak_voice(rng):
    """An espeak-ng voice and variant with a rate and pitch drawn from `rng`:
    (voice, rate, pitch), as `espeak` takes them."""
    voice = VOICES[rng.integers(len(VOICES))] + VARIANTS[rng.integers(len(VARIANTS))]
    return voice, int(rng.integers(110, 231)), int(rng.integers(20, 81))


def espeak(text, voice, rate, pitch):
    """One utterance from espeak-ng, resampled from its 22050 Hz to 16 kHz."""
    out = subprocess.run(["espeak-ng", "-v", voice, "-s", str(rate), "-p", str(pitch), "--stdout", text],
                         check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        src = w.getframerate()
        x = numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(numpy.float64)
    n_out = int(len(x) * RATE / src)
    return numpy.interp(numpy.arange(n_out) * src / RATE, numpy.arange(len(x)), x)


def license_sentences():
    folder = "/usr/share/common-licenses"
    out = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        text = re.sub(r"\s+", " ", re.sub(r"[^A-Za-z0-9,;:.'?! -]", " ", text))
        for s in re.split(r"(?<=[.;:?!])\s+", text):
            words = s.split()
            # Sentences of speakable length; long ones in pieces of 8-25 words.
            while len(words) >= 4:
                piece, words = words[:25], words[25:]
                out.append(" ".join(piece))
    return out


SUBJECTS = ["my brother", "the neighbour", "our commuter train", "the kids", "Peter", "the company", "my boss",
            "the plumber", "your mother", "the composer", "the new scooter", "Carla"]
VERBS = ["wants to compete in", "will complete", "is late for", "forgot about", "keeps talking about", "booked",
         "cancelled", "is computing the cost of", "could not find", "is counting on"]
OBJECTS = ["the cucumber salad", "the compost bin", "the football match", "a copy of the report",
           "the pewter jug", "the dentist appointment", "the concert on Friday", "the community garden",
           "the commuter parking", "a cup of tea", "the computation homework", "the coupon for the market"]
OPENERS = ["hey", "hey you know what", "okay so", "listen", "well", "come here", "hey Peter", "hey come on", ""]


def household_sentences(rng, count):
    out = []
    for _ in range(count):
        words = [OPENERS[rng.integers(len(OPENERS))], SUBJECTS[rng.integers(len(SUBJECTS))],
                 VERBS[rng.integers(len(VERBS))], OBJECTS[rng.integers(len(OBJECTS))]]
        out.append(" ".join(w for w in words if w))
    return out


VOICES = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-029", "en-us-nyc"]
VARIANTS = ["", "+f1", "+f2", "+f3", "+f4", "+f5", "+m1", "+m2", "+m3", "+m4", "+m5", "+m6", "+m7"]


def prose_paragraphs():
    """Paragraphs of running English from the docstrings of the Python
    library (Debian's python3): no code, no word "computer", 12-120 words."""
    out = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py"))):
        try:
            tree = ast.parse(open(path, encoding="utf-8", errors="replace").read())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                continue
            doc = ast.get_docstring(node) or ""
            for para in re.split(r"\n\s*\n", doc):
                if ">>>" in para or re.search(r"[(){}\[\]=_`*#<>|\\/]", para):
                    continue
                text = re.sub(r"\s+", " ", para).strip()
                words = text.split()
                if 12 <= len(words) <= 120 and text[0].isalpha() and "computer" not in text.lower() and text[-1:] in ".?!":
                    out.append(text)
    return out


def music(rng, n):
    """A synthetic music bed: three-note chords of harmonic tones (notes of a
    major scale, 0.2-0.8 s each, with attack and decay) over a beat of
    filtered noise bursts, n samples long."""
    out = numpy.zeros(n)
    scale = [0, 2, 4, 5, 7, 9, 11]
    at = 0
    while at < n:
        length = int(rng.uniform(0.2, 0.8) * RATE)
        t = numpy.arange(min(length, n - at)) / RATE
        envelope = numpy.minimum(1, t / 0.02) * numpy.exp(-t / rng.uniform(0.2, 0.6))
        root = 48 + scale[rng.integers(len(scale))]
        for step in (0, 4, 7):
            f = 440 * 2 ** ((root + step + 12 * rng.integers(0, 2) - 69) / 12)
            tone = sum(numpy.sin(2 * numpy.pi * f * h * t) / h ** 1.5 for h in range(1, 6) if f * h < RATE / 2)
            out[at:at + len(t)] += envelope * tone
        at += length
    beat = int(RATE * 60 / rng.uniform(80, 130))
    burst = numpy.convolve(rng.standard_normal(1600) * numpy.exp(-numpy.arange(1600) / 300), numpy.ones(4) / 4, "same")
    for b in range(0, n - 1600, beat):
        out[b:b + 1600] += 0.8 * burst
    return out


def television(rng, paragraphs, seconds):
    """One stream of television-like audio about `seconds` long, and what
    each part is."""
    parts, labels, total = [], [], 0
    while total < seconds * RATE:
        if rng.random() < 0.15:
            x = music(rng, int(rng.uniform(5, 20) * RATE))
            parts.append(x / (numpy.max(numpy.abs(x)) + 1e-9) * 0.3 * 32767)
            labels.append("music alone")
        else:
            text = paragraphs[rng.integers(len(paragraphs))]
            voice = VOICES[rng.integers(len(VOICES))] + VARIANTS[rng.integers(len(VARIANTS))]
            rate, pitch = int(rng.integers(130, 211)), int(rng.integers(20, 81))
            x = trim(espeak(text, voice, rate, pitch), keep=0.02)
            x = numpy.concatenate([x, numpy.zeros(int(rng.uniform(0.3, 1.5) * RATE))])
            snr = rng.uniform(5, 15)
            bed = music(rng, len(x))
            gain = peak_frame_rms(x) / (peak_frame_rms(bed) * 10 ** (snr / 20))
            y = x + gain * bed
            parts.append(y * (0.5 * 32767 / (numpy.max(numpy.abs(y)) + 1e-9)))
            labels.append(f"{voice} -s {rate} -p {pitch}, music at {snr:.1f} dB: {text}")
        total += len(parts[-1])
    return parts, labels


TV_SECONDS_PER_FOLD = 480


def main():
    out_dir, data = sys.argv[1], sys.argv[2]
    folds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    os.makedirs(out_dir, exist_ok=True)
    noise = read_wav(os.path.join(data, "noise", "kitchen.wav"))
    rng = numpy.random.default_rng(20261124)
    streams = {}  # (kind, fold) -> list of arrays
    labels = {}  # (kind, fold) -> list of what each array is (for <stream>.txt)

    coffee_dir = os.path.join(data, "coffee-maker", "clean")
    for i, name in enumerate(sorted(f for f in os.listdir(coffee_dir) if f.endswith(".wav"))):
        k = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % folds
        x = trim(read_wav(os.path.join(coffee_dir, name)))
        streams.setdefault(("coffee-clean", k), []).append(x)
        labels.setdefault(("coffee-clean", k), []).append(name)
        for snr in (20, 10):
            streams.setdefault((f"coffee-kitchen{snr}", k), []).append(mix(x, noise, snr, rng))
            labels.setdefault((f"coffee-kitchen{snr}", k), []).append(name)

    sentences = license_sentences()
    order = rng.permutation(len(sentences))
    sentences = [sentences[j] for j in order]
    sentences = [s for s in sentences if "computer" not in s.lower()]
    household = household_sentences(rng, 420)
    # Interleave: every third sentence is a household one (with the near-misses).
    pool, h = [], 0
    for j, s in enumerate(sentences[:1000]):
        pool.append(s)
        if j % 2 == 1 and h < len(household):
            pool.append(household[h]); h += 1
    for i, text in enumerate(pool):
        voice, rate, pitch = espeak_voice(rng)
        x = trim(espeak(text, voice, rate, pitch), keep=0.02)
        x = numpy.concatenate([x, numpy.zeros(int(rng.integers(100, 401)) * 16)])
        kind = "espeak-clean" if i % 3 else "espeak-kitchen10"
        if kind == "espeak-kitchen10":
            x = mix(x, noise, 10, rng)
        else:
            x = x * (0.5 * 32767 / (numpy.max(numpy.abs(x)) + 1e-9))
        streams.setdefault((kind, i % folds), []).append(x)
        labels.setdefault((kind, i % folds), []).append(f"{voice} -s {rate} -p {pitch}: {text}")

    part = len(noise) // folds
    for k in range(folds):
        streams[("kitchen", k)] = [noise[k * part:(k + 1) * part]]
        labels[("kitchen", k)] = [f"kitchen.wav {k * part / RATE:.2f}-{(k + 1) * part / RATE:.2f} s"]

    # Television (issue 27), from a generator of its own: the streams above
    # keep their bytes (and their cached scores).
    tv = numpy.random.default_rng(20261127)
    paragraphs = prose_paragraphs()
    paragraphs = [paragraphs[j] for j in tv.permutation(len(paragraphs))]
    for k in range(folds):
        streams[("tv", k)], labels[("tv", k)] = television(tv, paragraphs[k::folds], TV_SECONDS_PER_FOLD)

    with open(os.path.join(out_dir, "manifest.tsv"), "w") as m:
        for (kind, k), parts in sorted(streams.items()):
            m.write(write_stream(os.path.join(out_dir, f"{kind}-fold{k}.wav"), k, kind, parts, labels[(kind, k)]))


if __name__ == "__main__":
    main()

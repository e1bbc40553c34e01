#!/usr/bin/env python3
"""Long negative audio for the wake word "computer" (issue 27 item 1: false
wakes over the longest negative audio that can be assembled here): running
speech from two synthesizers, split into the same five folds as
negatives.py's streams, for training, calibrating and counting false
wakes of training/parley_training/kws.py (`--more-negatives`).

    python3 -m parley_training.long_negatives OUT_DIR [FOLDS [HOURS_PER_FOLD]] [--only-fold K --voice-seed S]

Writes OUT_DIR/prose-fold<k>-<n>.wav, 10-minute streams (16 kHz mono
16-bit: a stream's features fit in memory), a .txt beside each
(where each part starts, which voice, what was said) and
OUT_DIR/manifest.tsv (file, fold, kind, seconds) as negatives.py does.
The speech: paragraphs of the Python library's docstrings
(make-negatives.prose_paragraphs, none with the word "computer"), one
voice, rate and pitch per paragraph, and every fourth part a household
sentence with a near-miss of the word ("commuter", "computing",
"cucumber"...), read by
- espeak-ng (negatives.py's accents and variants, 110-230 words a
  minute, pitch 20-80), or
- flite's voices kal16, awb, rms and slt (Debian's flite: a diphone voice
  and three statistical parametric ones, closer to recorded speech than
  espeak-ng's formants), 0.8-1.3 times their duration and their pitch moved
  within about a fifth,
with 0.2-1.2 s between parts. Paragraph i goes to fold i % FOLDS. From a
fixed seed: the same call gives the same bytes. Nothing here is kitchen
noise (kws.py mixes its training noises in itself).

With --only-fold K --voice-seed S: more of fold K's text (the same
paragraphs and household sentences as the default call gives fold K) in
voices, rates and pitches drawn from seed S, in streams named
prose-foldK-more-<n>.wav: held-out hours for a fold nothing trained on
(training/bin/eval-wake-long.sh).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy

if __package__ in (None, ""):  # run as a file (python3 training/parley_training/X.py): import the package beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from parley_training import negatives  # noqa: E402

RATE = negatives.RATE
FLITE_VOICES = ["kal16", "awb", "rms", "slt"]
FLITE_F0 = {"kal16": 105, "awb": 115, "rms": 110, "slt": 170}  # each voice's own mean pitch, Hz (about)


def flite(text, voice, stretch, f0):
    """One utterance from flite at 16 kHz."""
    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        subprocess.run(["flite", "-voice", voice, "--setf", f"duration_stretch={stretch:.2f}",
                        "--setf", f"int_f0_target_mean={f0:.0f}", "-t", text, "-o", out.name],
                       check=True, capture_output=True)
        x = negatives.read_wav(out.name)
    return x


def flite_voice(rng):
    """A flite voice with its duration stretch and pitch drawn from `rng`:
    (voice, stretch, f0), as `flite` takes them."""
    voice = FLITE_VOICES[rng.integers(len(FLITE_VOICES))]
    stretch = rng.uniform(0.8, 1.3)
    f0 = FLITE_F0[voice] * 2 ** (rng.uniform(-0.3, 0.3))
    return voice, stretch, f0


def spoken(text, rng):
    """(audio, label): `text` in a voice drawn from espeak-ng's and flite's."""
    if rng.random() < 0.5:
        voice, rate, pitch = negatives.espeak_voice(rng)
        return negatives.espeak(text, voice, rate, pitch), f"espeak-ng {voice} -s {rate} -p {pitch}"
    voice, stretch, f0 = flite_voice(rng)
    return flite(text, voice, stretch, f0), f"flite {voice} stretch {stretch:.2f} f0 {f0:.0f}"


STREAM_SECONDS = 600


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("out_dir")
    ap.add_argument("folds", nargs="?", type=int, default=5)
    ap.add_argument("hours", nargs="?", type=float, default=2.0)
    ap.add_argument("--only-fold", type=int)
    ap.add_argument("--voice-seed", type=int)
    a = ap.parse_args()
    if (a.only_fold is None) != (a.voice_seed is None):
        sys.exit("long_negatives: --only-fold and --voice-seed go together")
    out_dir, folds, hours = a.out_dir, a.folds, a.hours
    os.makedirs(out_dir, exist_ok=True)
    rng = numpy.random.default_rng(20261201)
    paragraphs = negatives.prose_paragraphs()
    paragraphs = [paragraphs[j] for j in rng.permutation(len(paragraphs))]
    household = negatives.household_sentences(rng, 4000)
    # The text above is the default call's whatever the voices; the voices
    # below continue its generator, or start from --voice-seed.
    stem = "prose-fold{k}-{n:02d}.wav"
    if a.voice_seed is not None:
        rng = numpy.random.default_rng(a.voice_seed)
        stem = "prose-fold{k}-more-{n:02d}.wav"
    rows = []
    for k in range(folds):
        if a.only_fold is not None and k != a.only_fold:
            continue
        parts, labels, total, h, done, n = [], [], 0, k, 0, 0
        mine = paragraphs[k::folds]
        i = 0
        while done + total < hours * 3600 * RATE:
            if i % 4 == 3:
                text = household[h % len(household)]; h += folds
            else:
                text = mine[(i - i // 4) % len(mine)]
            i += 1
            x, voice = spoken(text, rng)
            x = negatives.trim(x, keep=0.02)
            x = x * (0.5 * 32767 / (numpy.max(numpy.abs(x)) + 1e-9)) * 10 ** (rng.uniform(-12, 0) / 20)
            x = numpy.concatenate([x, numpy.zeros(int(rng.uniform(0.2, 1.2) * RATE))])
            parts.append(x)
            labels.append(f"{voice}: {text}")
            total += len(x)
            if total >= STREAM_SECONDS * RATE or done + total >= hours * 3600 * RATE:
                rows.append(negatives.write_stream(os.path.join(out_dir, stem.format(k=k, n=n)), k, "prose", parts, labels))
                done += total
                parts, labels, total, n = [], [], 0, n + 1
        print(f"make-long-negatives: fold {k}: {done / RATE / 3600:.2f} h in {n} streams", flush=True)
    with open(os.path.join(out_dir, "manifest.tsv"), "w") as m:
        m.writelines(rows)


if __name__ == "__main__":
    main()

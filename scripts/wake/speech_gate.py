#!/usr/bin/env python3
"""Is it speech? A small network on the keyword network's features, as a
first stage for direct mode (issue 27 item 4: "a first stage that costs
almost nothing ... so the full decoders run only on speech-like audio").
An experiment, measured by folds; nothing in the daemon runs it.

    speech_gate.py --work .build/wake-cv --coffee DIR --computer DIR --noises DIR --kitchen FILE

Direct mode decodes every utterance the endpointer finds: in kitchen noise
that is clatter, in a quiet room nothing. A network that tells speech from
noise could hold the command decoders until an utterance holds speech (as
`WakeGate` holds them in named mode until the wake phrase is proposed).

Per fold left out (the coffee-maker recordings' and the "computer"
recordings' folds by name, cv.fold_of), trained on the other folds:
- speech windows: a recording of a training fold, clean over a quiet floor
  or in a training noise (pink, white, brown, clatter) at 0-20 dB, windows
  whose last 0.48 s is at least half speech (10 ms frames within 30 dB of
  the recording's loudest, found on the clean recording); espeak-ng
  sentences of make-negatives.py (its espeak-clean files of the training
  folds) the same way;
- noise windows: windows of the same mixes holding no speech frame, and the
  training noises alone at random gains;
- babble (six espeak-ng talkers) is neither: a room of talk is speech.
The threshold: the lowest of the calibration fold's recordings' best score
in their first 1.5 s of speech, mixed at `--calib-snr` dB (6) with each
training noise, less `--margin`. Kitchen noise is never trained or tuned on; reported:
- held-out recordings mixed with kitchen noise at 6 and 10 dB (and clean):
  how many reach the threshold within 1.5 s of their speech start (one that
  does not would never be decoded);
- kitchen noise alone: the share of windows at or above the threshold and
  the stretches of them (detections 1 s apart) per minute.
"""
import argparse
import glob
import os
import sys

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cv  # noqa: E402
import kws  # noqa: E402

negatives = kws.negatives
RATE = kws.RATE
NOISES = ["pink", "white", "brown", "clatter"]
HOP_S = kws.POOL * kws.HOP / RATE  # one window every pooled frame (30 ms)
FIRST_LOOK = 1.5  # seconds of speech within which a command must be found speech


def speech_frames(x):
    """Per 10 ms frame: within 30 dB of the recording's loudest frame."""
    level = negatives.frame_levels(x)
    return level >= level.max() - 30


def labelled_windows(y, speech, offset):
    """Windows of `y` (speech frames `speech` start at sample `offset` of
    y): 1 where the last 0.48 s is at least half speech, 0 where the window
    holds no speech frame; others dropped."""
    w, ends = kws.windows(kws.pooled(y))
    frames = numpy.zeros(len(y) // 160 + 1, bool)
    start = offset // 160
    frames[start:start + len(speech)] = speech[: max(0, len(frames) - start)]
    c = numpy.concatenate([[0], numpy.cumsum(frames)])
    last = numpy.minimum((ends + 1) * kws.POOL, len(frames))  # 10 ms frame index one past the window's end
    half = numpy.maximum(last - 48, 0)
    whole = numpy.maximum(last - kws.WINDOW * kws.POOL, 0)
    recent = (c[last] - c[half]) / 48.0
    anything = c[last] - c[whole]
    pos = recent >= 0.5
    neg = anything == 0
    keep = pos | neg
    return w[keep], pos[keep].astype(numpy.float32)


def augmented(x, noises, rng):
    pad = numpy.zeros(int(rng.uniform(0.3, 1.0) * RATE))
    y = numpy.concatenate([pad, x, numpy.zeros(int(0.5 * RATE))])
    if rng.random() < 1 / 5:
        y = y + rng.normal(0, 1.0, len(y))
        y = y * 10 ** (rng.uniform(-12, 6) / 20)
    else:
        y = negatives.mix(y, noises[rng.integers(len(noises))], rng.uniform(0, 20), rng)
        y = y * 10 ** (rng.uniform(-12, 0) / 20)
    return y, len(pad)


def speech_start(x):
    return int(numpy.argmax(speech_frames(x))) * 160


def first_look_best(net, x, start):
    """Best score of windows ending within FIRST_LOOK s of `start` (samples)."""
    s, ends = kws.stream_scores(net, x)
    t = (ends + 1) * kws.POOL * kws.HOP
    inside = t <= start + FIRST_LOOK * RATE
    return float(s[inside].max()) if inside.any() else -1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--coffee", required=True)
    ap.add_argument("--computer", required=True)
    ap.add_argument("--noises", required=True)
    ap.add_argument("--kitchen", required=True)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--hidden", default="32,16")
    ap.add_argument("--margin", type=float, default=1.0)
    ap.add_argument("--calib-snr", type=float, default=6.0, help="dB of the calibration mixes (the product's noisiest target)")
    ap.add_argument("--folds", default="0,1,2,3,4")
    a = ap.parse_args()

    recordings = {}
    for folder in (a.coffee, a.computer):
        for path in sorted(glob.glob(os.path.join(folder, "*.wav"))):
            recordings[os.path.basename(path)] = negatives.read_wav(path)
    fold = {n: cv.fold_of(n) for n in recordings}
    noises = [negatives.read_wav(os.path.join(a.noises, k + ".wav")) for k in NOISES]
    kitchen = negatives.read_wav(a.kitchen)
    sentences = [(int(f), p) for p, f, kind, _ in (line.rstrip("\n").split("\t") for line in
                 open(os.path.join(a.work, "negatives", "manifest.tsv"))) if kind == "espeak-clean"]
    sizes = [kws.WINDOW * kws.BANDS] + [int(h) for h in a.hidden.split(",")] + [1]
    totals = {"clean": [0, 0], "kitchen10": [0, 0], "kitchen6": [0, 0]}
    kitchen_share, kitchen_events = [], []
    for k in [int(f) for f in a.folds.split(",")]:
        calib = (k + 1) % cv.FOLDS
        rng = numpy.random.default_rng(300 + k)
        xs, ys = [], []
        for name, x in recordings.items():
            if fold[name] in (k, calib):
                continue
            speech = speech_frames(x)
            for _ in range(a.copies):
                y, offset = augmented(x, noises, rng)
                w, lab = labelled_windows(y, speech, offset)
                xs.append(w); ys.append(lab)
        for f, path in sentences:
            if f in (k, calib):
                continue
            x = negatives.read_wav(path)[: 600 * RATE]
            y, offset = augmented(x, noises, rng)
            w, lab = labelled_windows(y, speech_frames(x), offset)
            xs.append(w[::3]); ys.append(lab[::3])
        for noise in noises:
            for _ in range(3):
                w, _ = kws.windows(kws.pooled(noise * 10 ** (rng.uniform(-20, 0) / 20)), step=2)
                xs.append(w); ys.append(numpy.zeros(len(w), numpy.float32))
        x = numpy.concatenate(xs); y = numpy.concatenate(ys)
        weight = numpy.where(y > 0, 0.5 / y.sum(), 0.5 / (1 - y).sum()).astype(numpy.float32) * len(y)
        net = kws.Net(sizes, rng)
        net.train(x, y, weight, rng, epochs=a.epochs)
        # The threshold, on the calibration fold's recordings at 0 dB in each training noise.
        lowest = []
        for name, rec in recordings.items():
            if fold[name] != calib:
                continue
            for noise in noises:
                rr = numpy.random.default_rng(kws.seed_of(name, "calib", len(lowest)))
                mixed = negatives.mix(numpy.concatenate([numpy.zeros(RATE // 2), rec, numpy.zeros(RATE // 2)]), noise, a.calib_snr, rr)
                lowest.append(first_look_best(net, mixed, RATE // 2 + speech_start(rec)))
        threshold = min(lowest) - a.margin
        # Held out.
        line = []
        for cond, snr in (("clean", None), ("kitchen10", 10), ("kitchen6", 6)):
            found = held = 0
            for name, rec in recordings.items():
                if fold[name] != k:
                    continue
                heard = numpy.concatenate([numpy.zeros(RATE // 2), rec, numpy.zeros(RATE // 2)])
                if snr is not None:
                    heard = negatives.mix(heard, kitchen, snr, numpy.random.default_rng(kws.seed_of(name, cond)))
                held += 1
                found += first_look_best(net, heard, RATE // 2 + speech_start(rec)) >= threshold
            totals[cond][0] += found; totals[cond][1] += held
            line.append(f"{cond} {found}/{held}")
        s, _ = kws.stream_scores(net, kitchen)
        share = float((s >= threshold).mean())
        events = len(kws.detections(s, threshold)) / (len(kitchen) / RATE / 60)
        kitchen_share.append(share); kitchen_events.append(events)
        print(f"fold {k}: {len(x)} windows ({int(y.sum())} speech), threshold {threshold:.2f}; found "
              + ", ".join(line) + f"; kitchen alone: {100 * share:.1f}% of windows, {events:.1f} stretches/min", flush=True)
    print("\n| held out | found as speech within 1.5 s |\n| --- | --- |")
    for cond, (found, held) in totals.items():
        print(f"| {cond} | {found}/{held} ({100 * found / max(1, held):.1f}%) |")
    print(f"| kitchen noise alone: windows at the threshold | {100 * numpy.mean(kitchen_share):.1f}% "
          f"({numpy.mean(kitchen_events):.1f} stretches a minute) |")


if __name__ == "__main__":
    main()

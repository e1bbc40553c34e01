#!/usr/bin/env python3
"""A small keyword network for "computer" (issue 27 item 3, "a wake-word
model trained for noise"), trained and measured by folds.

    kws.py eval  --work .build/wake-cv --positives DIR --noises DIR --kitchen FILE
    kws.py train --work .build/wake-cv --positives DIR --noises DIR --out FILE.json
    kws.py score --model FILE.json WAV...
    kws.py false-wakes --model FILE.json --negatives DIR [--noises DIR] [--explain]

The model: 32 mel bands (60-7600 Hz) of 25 ms Hann windows every 10 ms,
each band divided by its own slow average (PCEN, about 0.4 s, then a square
root: a steady noise's level and colour drop out; `--features log` for
plain log energies), pooled three frames at a time; a window is 32 pooled
frames (0.96 s) with their mean per band taken away, into a network of two
hidden layers (ReLU) and a logit: does the window end on the word. It runs
every pooled frame (30 ms); the hidden layers are 192 and 96 wide (96 and
48 until 2026-12-01, `--hidden 96,48`). The daemon runs it through ParleySpeech's
KeywordSpotter, which computes the same features (its test compares the two).

Training data, per fold left out (`eval`), or all folds (`train`):
- positives: the training folds' recordings of "computer", each many times:
  clean, and with a training noise (babble, pink, clatter, white, brown of
  scripts/adapt/make-noises.py) at 0-20 dB, a random gain and a time shift
  (with `--recorded-noises`, half the mixes take a recorded room of
  training/parley_training/recorded_noises.py instead, `drawn_noise`, and those join
  the noises alone too); windows whose end falls from 0.1 s before to 0.2 s after the word's end
  are positive, windows ending in the word's first half negative (a part of the word is not the
  word);
- 500 espeak-ng renderings of "computer" (negatives.py's voices,
  rates and pitches), 3 augmented copies each: more voices than 64
  recordings hold;
- negatives: windows of the training folds' negative audio
  (training/parley_training/negatives.py: coffee orders, espeak-ng sentences with
  words like "computing" and "compete", television-like audio), the ones
  holding kitchen noise left out, clean and with a training noise at 0-20 dB,
  and the training noises alone;
- with `--more-negatives DIR` (the scripts pass training/parley_training/long_negatives.py's
  folder: 2 h a fold of espeak-ng and flite voices reading prose and
  household sentences), those streams join their folds' negatives for
  training (every other window of the others' grid), calibration and the
  false-wake count. Without them the threshold rule is set on espeak-ng
  alone, and flite's voices, closer to recorded speech, woke the shipped
  network of 2026-11-28 2.8 times an hour (BENCHMARKS.md, "False wakes on
  ten hours of two synthesizers' speech").

The rule: for each fold left out, the network trains on four folds'
positives and on three folds' negatives; the fourth training fold's
negatives (never trained on), clean and with each of babble, pink and
clatter at 10 dB (1.7 h; 9.7 h with the long negatives), set the threshold
from their separated peaks (detections 1 s apart): where an exponential
tail fitted to the 20 best expects 0.1 false wakes an hour (threshold_from;
since 2026-12-02, BENCHMARKS.md "A threshold rule from the calibration's
tail"). `--threshold-rule best` is the rule before it: just above their
best window (at 0.1 false wakes/h, 9.7 h allow none). Every fold's report
row keeps both rules' thresholds and the raw scores, so
training/parley_training/det_points.py reads either rule's misses from one run. Two
options were measured and not kept (2026-12-03, BENCHMARKS.md; their code
is at 2f148e6, scripts/wake/kws.py): `--snr-bands DB`, a second threshold
for windows whose own SNR estimate is below DB, and `--vtlp W`, the
training copies' spectra warped as other speakers' would be. The
settings (features, synthetic voices, network size) were chosen on fold 0
before the five-fold runs (BENCHMARKS.md says which). A
score is the mean logit of the last 3 windows (90 ms).
The fold left out is then counted: a positive (padded with 0.5 s of
silence either side, mixed at the condition's SNR with a slice of its
noise, as training/bin/eval-wake-noise.sh) is found when any window reaches the
threshold; a false wake is a detection in the left-out fold's negatives,
every kind (kitchen included), clean and noisy. Kitchen noise is never
trained or tuned on.
"""
import argparse
import hashlib
import json
import os
import sys
import time

import numpy

if __package__ in (None, ""):  # run as a file (python3 training/parley_training/X.py): import the package beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from parley_training import front_end  # noqa: E402  (the daemon's noise suppression, --front-end)
from parley_training import long_negatives  # noqa: E402
from parley_training import negatives  # noqa: E402
from parley_training import phrase_cv  # noqa: E402  (the positives' take folds)

RATE = 16000
FOLDS = 5
# Features (a Swift port must compute them the same way).
FRAME_LEN = 400      # 25 ms
HOP = 160            # 10 ms
FFT = 512
BANDS = 32
LOW_HZ, HIGH_HZ = 60.0, 7600.0
POOL = 3             # frames averaged into one pooled frame (30 ms)
WINDOW = 32          # pooled frames in a window (0.96 s)
FLOOR = 1e-2         # added to the mel energies before the log (int16 scale)
TRAIN_NOISES = ["babble", "pink", "clatter", "white", "brown"]
REFRACTORY = 1.0     # seconds between two detections (the daemon listens for a command after one)


def mel_matrix():
    """The mel filterbank."""
    def mel(f):
        return 2595.0 * numpy.log10(1.0 + f / 700.0)

    def hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)
    edges = hz(numpy.linspace(mel(LOW_HZ), mel(HIGH_HZ), BANDS + 2))
    bins = numpy.arange(FFT // 2 + 1) * RATE / FFT
    m = numpy.zeros((BANDS, FFT // 2 + 1))
    for b in range(BANDS):
        lo, mid, hi = edges[b], edges[b + 1], edges[b + 2]
        up = (bins - lo) / (mid - lo)
        down = (hi - bins) / (hi - mid)
        m[b] = numpy.maximum(0.0, numpy.minimum(up, down))
    return m


MEL = mel_matrix()
HANN = 0.5 - 0.5 * numpy.cos(2 * numpy.pi * numpy.arange(FRAME_LEN) / FRAME_LEN)


FEATURES = "pcen"  # or "log" (--features)
PCEN_S, PCEN_ALPHA, PCEN_DELTA, PCEN_R = 0.025, 0.98, 2.0, 0.5


def mel_energies(x):
    n = 1 + (len(x) - FRAME_LEN) // HOP if len(x) >= FRAME_LEN else 0
    if n == 0:
        return numpy.zeros((0, BANDS))
    idx = numpy.arange(FRAME_LEN)[None, :] + HOP * numpy.arange(n)[:, None]
    frames = x[idx] * HANN
    power = numpy.abs(numpy.fft.rfft(frames, FFT)) ** 2 / FFT
    return power @ MEL.T


def pcen(e):
    """Per-channel energy normalisation: each band divided by its own slow
    average (about 0.4 s), then compressed; a steady noise's level and
    colour drop out as the average follows them."""
    if len(e) == 0:
        return e
    from scipy.signal import lfilter
    # m[t] = (1 - s) m[t-1] + s e[t], from the first 10 frames' mean
    start = e[:10].mean(axis=0)
    m = lfilter([PCEN_S], [1, -(1 - PCEN_S)], e, axis=0, zi=((1 - PCEN_S) * start)[None, :])[0]
    return (e / (1e-6 + m) ** PCEN_ALPHA + PCEN_DELTA) ** PCEN_R - PCEN_DELTA ** PCEN_R


def features_of(e):
    """Feature frames (n, BANDS) of mel energies (mel_energies), a frame
    every HOP: their PCEN, or log mel energies."""
    if FEATURES == "pcen":
        return pcen(e).astype(numpy.float32)
    return numpy.log(e + FLOOR).astype(numpy.float32)


FRONT_END = None  # --front-end denoise[:DB]: the daemon's speexdsp noise suppression before the features


def pooled(x):
    """Pooled feature frames (n, BANDS)."""
    if FRONT_END is not None:
        x = front_end.denoised(x, FRONT_END)
    e = mel_energies(x)
    f = features_of(e)
    n = len(f) // POOL
    return f[: n * POOL].reshape(n, POOL, BANDS).mean(axis=1)


def windows(p, step=1):
    """Every window of WINDOW pooled frames (ending at pooled frame i, i =
    WINDOW-1, ...), mean per band removed, flattened: (count, WINDOW*BANDS)."""
    if len(p) < WINDOW:
        p = numpy.concatenate([numpy.repeat(p[:1], WINDOW - len(p), axis=0), p]) if len(p) else numpy.zeros((WINDOW, BANDS), numpy.float32)
    ends = numpy.arange(WINDOW - 1, len(p), step)
    idx = ends[:, None] - numpy.arange(WINDOW - 1, -1, -1)[None, :]
    w = p[idx]
    w = w - w.mean(axis=1, keepdims=True)
    return w.reshape(len(ends), -1).astype(numpy.float32), ends


# --- the network --------------------------------------------------------------

MASK = (0, 0)  # --mask BANDS,FRAMES: SpecAugment's masks while training (none by default)


def masked(x, rng):
    """Training windows with, each, a run of up to MASK[0] mel bands and a run
    of up to MASK[1] pooled frames set to the window's mean (0 once the mean
    is removed): a word partly hidden by noise is still the word
    (SpecAugment). x itself is not changed."""
    bands, frames = MASK
    if not bands and not frames:
        return x
    w = x.reshape(len(x), WINDOW, BANDS).copy()
    for size, axis_len, axis in ((bands, BANDS, 2), (frames, WINDOW, 1)):
        if not size:
            continue
        width = rng.integers(0, size + 1, len(x))
        start = rng.integers(0, axis_len - width + 1)
        pos = numpy.arange(axis_len)[None, :]
        hide = (pos >= start[:, None]) & (pos < (start + width)[:, None])
        if axis == 2:
            w[hide[:, None, :].repeat(WINDOW, axis=1)] = 0
        else:
            w[hide[:, :, None].repeat(BANDS, axis=2)] = 0
    return w.reshape(len(x), -1)


class Net:
    def __init__(self, sizes, rng):
        self.W = [rng.normal(0, numpy.sqrt(2.0 / a), (a, b)).astype(numpy.float32) for a, b in zip(sizes, sizes[1:])]
        self.b = [numpy.zeros(b, numpy.float32) for b in sizes[1:]]
        self.mean = numpy.zeros(sizes[0], numpy.float32)
        self.scale = numpy.ones(sizes[0], numpy.float32)

    def logits(self, x):
        h = (x - self.mean) * self.scale
        for i, (W, b) in enumerate(zip(self.W, self.b)):
            h = h @ W + b
            if i < len(self.W) - 1:
                h = numpy.maximum(h, 0)
        return h[:, 0]

    def score(self, x, batch=8192):
        return numpy.concatenate([self.logits(x[i:i + batch]) for i in range(0, len(x), batch)]) if len(x) else numpy.zeros(0)

    def train(self, x, y, weight, rng, epochs=12, batch=256, lr=1e-3, l2=1e-4, dropout=0.2, normalise=True):
        if normalise:
            self.mean = x.mean(axis=0)
            self.scale = 1.0 / (x.std(axis=0) + 1e-3)
        params = self.W + self.b
        m = [numpy.zeros_like(p) for p in params]
        v = [numpy.zeros_like(p) for p in params]
        t = 0
        for epoch in range(epochs):
            order = rng.permutation(len(x))
            rate = lr * (0.5 * (1 + numpy.cos(numpy.pi * epoch / epochs)))
            for s in range(0, len(order), batch):
                j = order[s:s + batch]
                h = [(masked(x[j], rng) - self.mean) * self.scale]
                masks = []
                for i, (W, b) in enumerate(zip(self.W, self.b)):
                    z = h[-1] @ W + b
                    if i < len(self.W) - 1:
                        z = numpy.maximum(z, 0)
                        mask = (rng.random(z.shape) >= dropout).astype(numpy.float32) / (1 - dropout)
                        z = z * mask
                        masks.append(mask)
                    h.append(z)
                p = 1 / (1 + numpy.exp(-numpy.clip(h[-1][:, 0], -30, 30)))
                g = ((p - y[j]) * weight[j])[:, None] / weight[j].sum()
                grads_W, grads_b = [], []
                for i in range(len(self.W) - 1, -1, -1):
                    grads_W.append(h[i].T @ g + l2 * self.W[i])
                    grads_b.append(g.sum(axis=0))
                    if i > 0:
                        g = (g @ self.W[i].T) * masks[i - 1] * (h[i] > 0)
                grads = grads_W[::-1] + grads_b[::-1]
                t += 1
                for k, (pp, gg) in enumerate(zip(params, grads)):
                    m[k] = 0.9 * m[k] + 0.1 * gg
                    v[k] = 0.999 * v[k] + 0.001 * gg * gg
                    pp -= rate * (m[k] / (1 - 0.9 ** t)) / (numpy.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)

    @classmethod
    def from_json(cls, d):
        net = cls.__new__(cls)
        net.mean = numpy.array(d["input_mean"], numpy.float32)
        net.scale = numpy.array(d["input_scale"], numpy.float32)
        net.W = [numpy.array(layer["weights"], numpy.float32).T for layer in d["layers"]]
        net.b = [numpy.array(layer["bias"], numpy.float32) for layer in d["layers"]]
        return net

    def to_json(self):
        return {"features": {"rate": RATE, "frame": FRAME_LEN, "hop": HOP, "fft": FFT, "bands": BANDS,
                             "low_hz": LOW_HZ, "high_hz": HIGH_HZ, "floor": FLOOR, "pool": POOL, "window": WINDOW,
                             "kind": FEATURES, "pcen": {"s": PCEN_S, "alpha": PCEN_ALPHA, "delta": PCEN_DELTA, "r": PCEN_R},
                             "window_mean_removed": True, "smooth": SMOOTH},
                "input_mean": short(self.mean), "input_scale": short(self.scale),
                "layers": [{"weights": [short(row) for row in W.T], "bias": short(b)} for W, b in zip(self.W, self.b)]}


def short(values):
    """float32 values as JSON numbers of 7 significant digits (what a float32 holds)."""
    return [float(f"{v:.7g}") for v in numpy.asarray(values, numpy.float32).ravel()]


# --- data ---------------------------------------------------------------------

def word_span(x):
    """(start, end) in seconds of the loudest stretch: 10 ms frames within
    30 dB of the loudest (the recordings are clean, one word each)."""
    first, end = negatives.loud_span(x, 30.0)
    return first / RATE, end / RATE


def seed_of(*parts):
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def positive_windows(x, span):
    """Windows of one (augmented) positive: ends just after the word's end
    are 1, ends in the word's first half 0; others dropped."""
    p = pooled(x)
    w, ends = windows(p)
    t_end = (ends + 1) * POOL * HOP / RATE + (FRAME_LEN - HOP) / RATE  # the window's last sample, s
    start, end = span
    pos = (t_end >= end - 0.1) & (t_end <= end + 0.2)
    neg = t_end <= start + 0.5 * (end - start)
    keep = pos | neg
    return w[keep], pos[keep].astype(numpy.float32)


AUGMENT = False  # --augment: spectral tilts and speech-like backgrounds for the positives


def tilt(x, rng):
    """A random first-order spectral tilt, x[n] - a x[n-1] with a in
    [-0.5, 0.9] (a microphone's or a room's colour), the level kept."""
    a = rng.uniform(-0.5, 0.9)
    y = numpy.concatenate([x[:1], x[1:] - a * x[:-1]])
    return y * (numpy.sqrt(numpy.mean(x ** 2)) / (numpy.sqrt(numpy.mean(y ** 2)) + 1e-9))


RECORDED = 0  # --recorded-noises: how many recorded noises end the list of training noises


def drawn_noise(noises, rng):
    """The training noise of one mix. With recorded noises (the last
    RECORDED of `noises`) half the mixes draw one of them and half one of
    the others: drawn evenly, thirteen recordings would take 72% of the
    mixes from the synthetic babble the held-out babble condition is.
    Without them one draw, as before the option."""
    if RECORDED and rng.random() < 0.5:
        return noises[len(noises) - RECORDED + rng.integers(RECORDED)]
    return noises[rng.integers(len(noises) - RECORDED)]


def positive_noises(noises, neg_rows, rng):
    """What positives are mixed with: the training noises, and with
    `--augment` also two tilted copies of each synthetic one and the training folds'
    television-like negatives (speech behind the word), the recorded noises
    last (`drawn_noise`)."""
    if not AUGMENT:
        return noises
    synthetic, recorded = list(noises[:len(noises) - RECORDED]), list(noises[len(noises) - RECORDED:])
    pool = synthetic + [tilt(n, rng) for n in synthetic for _ in range(2)]
    pool += [negatives.read_wav(path) for path, fold, kind, secs in neg_rows if kind == "tv"]
    return pool + recorded


SPEED = 0.0  # --speed: copies played faster or slower, by a factor drawn from [1 - SPEED, 1 + SPEED]


def speed_changed(x, rng):
    """x played faster or slower by a factor drawn from [1 - SPEED, 1 + SPEED]
    (tempo, pitch and formants together, as a tape runs: Kaldi's speed
    perturbation), resampled by a ratio of integers; (audio, factor)."""
    from scipy.signal import resample_poly
    down = int(round(100 * rng.uniform(1 - SPEED, 1 + SPEED)))
    return resample_poly(x, 100, down), down / 100


def augmented_positive(x, noises, rng):
    """One augmented copy: gain, 0.5 s padding, shifted, clean (1 in 6) or a
    training noise at 0-20 dB; with `--augment`, a spectral tilt first; with
    `--speed`, played faster or slower first. (audio, where the original's
    time 0 now is, s; the speed factor: original time t is at t / factor)."""
    pad = numpy.zeros(int(0.5 * RATE))
    shift = rng.integers(0, int(0.3 * RATE))
    factor = 1.0
    if SPEED:
        x, factor = speed_changed(x, rng)
    if AUGMENT:
        x = tilt(x, rng)
    y = numpy.concatenate([numpy.zeros(shift), pad, x, pad])
    if rng.random() < 1 / 6:
        y = y + rng.normal(0, 1.0, len(y))  # a quiet floor (digital silence is not a room)
        y = y * 10 ** (rng.uniform(-12, 6) / 20)
    else:
        y = negatives.mix(y, drawn_noise(noises, rng), rng.uniform(0, 20), rng)
        y = y * 10 ** (rng.uniform(-12, 0) / 20)
    return y, shift / RATE + 0.5, factor


def negative_windows(x, every):
    return windows(pooled(x), step=every)[0]


def read_manifest(folder):
    """The streams of a negatives folder (negatives.py's WORK/negatives
    or long_negatives.py's): [(path, fold, kind, seconds)]."""
    rows = []
    with open(os.path.join(folder, "manifest.tsv")) as f:
        for line in f:
            path, fold, kind, secs = line.rstrip("\n").split("\t")
            rows.append((path, int(fold), kind, float(secs)))
    return rows


# Long streams (long_negatives.py's "prose", hours a fold) are sampled
# for training windows half as densely as the others: enough windows, half the memory.
SPARSE_KINDS = {"prose": 2}


SMOOTH = 3  # windows averaged into a score (90 ms): the word gives ~10 in a row, a stray window one


def stream_scores(net, x):
    """Scores of every window of a stream (one per pooled frame): the mean
    of the last SMOOTH windows' logits."""
    w, ends = windows(pooled(x))
    raw = net.score(w)
    if SMOOTH > 1 and len(raw):
        c = numpy.cumsum(numpy.concatenate([numpy.zeros(SMOOTH), raw]))
        raw = (c[SMOOTH:] - c[:-SMOOTH]) / SMOOTH
    return raw, ends


GAP = int(REFRACTORY * RATE / (HOP * POOL))  # REFRACTORY in pooled frames


def detections(scores, threshold):
    """Indices of the detections at `threshold`: a window at or above it,
    GAP after the last detection."""
    out, last = [], -GAP - 1
    for i in numpy.nonzero(scores >= threshold)[0]:
        if i - last > GAP:
            out.append(i)
            last = i
    return out


def best_separated(scores):
    """The highest score of each 1 s stretch's peak, sorted descending: the
    threshold that allows k false wakes is just above the (k+1)-th."""
    peaks = []
    order = numpy.argsort(-scores)
    taken = numpy.zeros(len(scores), bool)
    for i in order[:2000]:
        if taken[max(0, i - GAP):i + GAP + 1].any():
            continue
        taken[i] = True
        peaks.append(scores[i])
    return peaks


# --- the runs -----------------------------------------------------------------

def build_training(pos_files, spans, neg_rows, noises, rng, copies, neg_every, synthetic=(), synthetic_copies=0,
                   confusables=()):
    xs, ys = [], []
    mixed_with = positive_noises(noises, neg_rows, rng)
    for x in confusables:
        # Augmented as a positive is (padding, shift, noise, gain), every window a non-word.
        y, _, _ = augmented_positive(x, noises, rng)
        xs.append(negative_windows(y, 1)); ys.append(numpy.zeros(len(xs[-1]), numpy.float32))
    for name, x in list(pos_files) + list(synthetic):
        for c in range(copies if not name.startswith("synthetic/") else synthetic_copies):
            y, offset, factor = augmented_positive(x, mixed_with, rng)
            s, e = spans[name]
            w, lab = positive_windows(y, (s / factor + offset, e / factor + offset))
            xs.append(w); ys.append(lab)
    for path, fold, kind, secs in neg_rows:
        x = negatives.read_wav(path)
        every = neg_every * SPARSE_KINDS.get(kind, 1)
        xs.append(negative_windows(x, every)); ys.append(numpy.zeros(len(xs[-1]), numpy.float32))
        # the same audio again with a training noise (and with --speed played
        # faster or slower, as the positives are: a resampled sound is not a sign of the word)
        if SPEED:
            x, _ = speed_changed(x, rng)
        mixed = negatives.mix(x, drawn_noise(noises, rng), rng.uniform(0, 20), rng)
        xs.append(negative_windows(mixed, every)); ys.append(numpy.zeros(len(xs[-1]), numpy.float32))
    for noise in noises:
        xs.append(negative_windows(noise * 10 ** (rng.uniform(-20, 0) / 20), 2)); ys.append(numpy.zeros(len(xs[-1]), numpy.float32))
    x = numpy.concatenate(xs); y = numpy.concatenate(ys)
    w = numpy.where(y > 0, 0.5 / max(1, y.sum()), 0.5 / max(1, (1 - y).sum())).astype(numpy.float32) * len(y)
    return x, y, w


def cached_renderings(folder, count, seed, draw, render):
    """`count` synthesized utterances, trimmed, cached in `folder` as
    NNNN.wav: [(path, audio)]. `draw(rng)` draws each one's settings from
    `seed` (drawn for a cached file too, so the rest stay the same) and
    `render(settings)` makes its audio. A file is written whole, then
    renamed, from a name of this process's own: two runs may fill the cache
    at once (one shared ".tmp" name let one run rename the other's file
    away, 2026-12-02)."""
    os.makedirs(folder, exist_ok=True)
    rng = numpy.random.default_rng(seed)
    out = []
    for i in range(count):
        settings = draw(rng)
        path = os.path.join(folder, f"{i:04d}.wav")
        if not os.path.exists(path):
            partial = f"{path}.{os.getpid()}.tmp"
            negatives.write_wav(partial, negatives.trim(render(settings), keep=0.05))
            os.replace(partial, path)
        out.append((path, negatives.read_wav(path)))
    return out


def espeak_renderings(folder, count, seed, text):
    """`count` espeak-ng renderings, `text(rng)` each, in negatives.py's
    voices, rates and pitches drawn from `seed` (`cached_renderings`)."""
    return cached_renderings(folder, count, seed, lambda rng: (text(rng),) + negatives.espeak_voice(rng),
                             lambda settings: negatives.espeak(*settings))


def synthetic_positives(work, count):
    """espeak-ng saying "computer" in `count` voices, rates and pitches (the
    voices of negatives.py), cached in WORK/kws-synthetic: more voices
    than the 80 recordings hold, for training only."""
    renderings = espeak_renderings(os.path.join(work, "kws-synthetic"), count, 7, lambda rng: "computer")
    return [(f"synthetic/{i:04d}", x) for i, (_, x) in enumerate(renderings)]


def flite_positives(work, count):
    """flite saying "computer" `count` times in its four voices (kal16, a
    diphone voice; awb, rms, slt, voices built from recordings of three
    people), duration and pitch drawn as long_negatives.py draws them,
    cached in WORK/kws-synthetic-flite: voices of another synthesizer than
    espeak-ng's, for training only (`--flite-synthetic`)."""
    renderings = cached_renderings(os.path.join(work, "kws-synthetic-flite"), count, 13, long_negatives.flite_voice,
                                   lambda settings: long_negatives.flite("computer", *settings))
    return [(f"synthetic/flite-{i:04d}", x) for i, (_, x) in enumerate(renderings)]


# Not "compute her" or "come pewter": said quickly they are the word
# itself (a first run with them missed 8 of fold 0's 25 clean positives).
CONFUSABLES = ["commuter", "computing", "pewter", "cucumber", "compete", "commuter train", "the commuter",
               "computation", "comparative", "commuters", "completed"]


def confusable_negatives(work, count):
    """espeak-ng saying words that sound like "computer" ("commuter",
    "pewter", "computing"...), `count` renderings in negatives.py's
    voices, rates and pitches, cached in WORK/kws-confusables: negatives for
    training only (`--confusables`), every window of them a non-word."""
    renderings = espeak_renderings(os.path.join(work, "kws-confusables"), count, 11,
                                   lambda rng: CONFUSABLES[rng.integers(len(CONFUSABLES))])
    return [x for _, x in renderings]


class Ensemble:
    """Networks whose logits are averaged: a stray peak of one is rarely a
    peak of the others, the word is a peak of all."""
    def __init__(self, nets):
        self.nets = nets

    def score(self, x):
        return numpy.mean([n.score(x) for n in self.nets], axis=0)


def fit(x, y, w, sizes, rng, epochs, mine, members=1):
    """A network trained on (x, y, w); with `mine` rounds of hard negatives:
    the training negatives it scores highest (logit above -2, at most 1% of
    them) weighted 4 times more, then 3 more epochs at a third of the rate.
    With `members` > 1, that many such networks averaged (Ensemble)."""
    if members > 1:
        return Ensemble([fit(x, y, w, sizes, rng, epochs, mine) for _ in range(members)])
    net = Net(sizes, rng)
    net.train(x, y, w, rng, epochs=epochs)
    for _ in range(mine):
        neg = numpy.nonzero(y == 0)[0]
        s = net.score(x[neg])
        hard = neg[(s > -2) & (s >= numpy.quantile(s, 0.99))]
        w2 = w.copy()
        w2[hard] *= 4
        print(f"  mining: {len(hard)} hard negatives of {len(neg)}", flush=True)
        net.train(x, y, w2, rng, epochs=3, lr=3e-4, normalise=False)
    return net


CALIBRATION_FOLD = 4  # the shipped model's (train): its negatives set the threshold


THRESHOLD_RULES = ("best", "tail")  # threshold_from's rules; each fold's report row keeps every one
THRESHOLD_RULE = "tail"  # --threshold-rule ("best" until 2026-12-02)
TAIL_PEAKS = 20  # the "tail" rule's fit: the calibration's 20 best separated peaks


def threshold_from(peaks, hours, rule):
    """The threshold for 0.1 false wakes an hour from the calibration's
    separated peaks (any order) over `hours`.
    - best: just above the (0.1 * hours + 1)-th best peak (with 9.7 h of
      calibration, just above the best one): one peak decides it.
    - tail: the peaks above the TAIL_PEAKS-th best, u, are taken as an
      exponential tail (the excesses of a maximum-domain score over a high
      line, a peaks-over-threshold fit: the scale b is their mean excess),
      and the threshold is where that tail expects 0.1 an hour:
      u + b ln(TAIL_PEAKS / (0.1 hours)). Twenty peaks decide it, so it
      moves less from fold to fold than one does."""
    peaks = sorted(peaks, reverse=True)
    if rule == "tail" and len(peaks) >= TAIL_PEAKS:
        u = peaks[TAIL_PEAKS - 1]
        b = float(numpy.mean(numpy.array(peaks[:TAIL_PEAKS - 1]) - u))
        return float(u + b * numpy.log(TAIL_PEAKS / (0.1 * hours)))
    allowed = int(0.1 * hours)
    return float(peaks[allowed]) + 1e-3 if len(peaks) > allowed else -1e9


def calibration_peaks(net, neg_rows, calib, noise_list):
    """The separated peaks of the calibration fold's negatives (kitchen left
    out), clean and at 10 dB with each of babble, pink and clatter;
    (peaks, hours listened)."""
    peaks, hours = [], 0.0
    for path, fold, kind, secs in neg_rows:
        if fold != calib or "kitchen" in kind:
            continue
        xx = negatives.read_wav(path)
        rr = numpy.random.default_rng(seed_of(path, "calib"))
        streams = [xx] + [negatives.mix(xx, noise, 10, rr) for noise in noise_list[:3]]
        for stream in streams:
            s, _ = stream_scores(net, stream)
            peaks += best_separated(s)
        hours += 4 * secs / 3600
    return peaks, hours


def calibrate(net, neg_rows, calib, noise_list):
    """The threshold by THRESHOLD_RULE on the calibration fold's negatives;
    (threshold, hours listened, {rule: threshold} for every rule)."""
    peaks, hours = calibration_peaks(net, neg_rows, calib, noise_list)
    every = {rule: threshold_from(peaks, hours, rule) for rule in THRESHOLD_RULES}
    return every[THRESHOLD_RULE], hours, every


def condition_audio(x, name, condition, noise_audio, snr):
    pad = numpy.zeros(int(0.5 * RATE))
    y = numpy.concatenate([pad, x, pad])
    if condition == "clean":
        return y
    rng = numpy.random.default_rng(seed_of(name, condition))
    return negatives.mix(y, noise_audio[condition], snr, rng)


def explain(path, kind, scores, ends, threshold):
    """Each detection in a negative stream: time, score and the line of
    negatives.py's label file (start time, then what was said) it falls in."""
    labels = []
    try:
        with open(path[:-4] + ".txt") as f:
            for line in f:
                t, _, text = line.rstrip("\n").partition("\t")
                labels.append((float(t), text))
    except (OSError, ValueError):
        pass
    for i in detections(scores, threshold):
        t = (ends[i] + 1) * POOL * HOP / RATE
        said = [text for start, text in labels if start <= t][-1:] or ["?"]
        print(f"  false wake: {os.path.basename(path)} ({kind}) at {t:.1f} s, score {scores[i]:.2f} "
              f"(threshold {threshold:.2f}): {said[0][:120]}", flush=True)


def plot(path, curves, neg_curve, hours):
    """One DET curve per condition over the offset from each fold's
    threshold (0: the fold's own threshold): misses against false wakes per
    hour of the held-out negatives."""
    fig, ax, floor = phrase_cv.det_axes("parley-wake-det-kws", (7.5, 5))
    colours = {"clean": "#1f77b4", "babble": "#ff7f0e", "pink": "#2ca02c", "clatter": "#9467bd", "kitchen": "#d62728"}
    neg = numpy.sort(numpy.array(neg_curve))[::-1]
    for c, pos in curves.items():
        pos = numpy.array(pos)
        offsets = numpy.concatenate([neg[:3000], [neg[0] + 1 if len(neg) else 1]])
        pts = sorted((float((neg >= d).sum() / hours), float((pos < d).mean())) for d in offsets)
        ax.step([max(floor, fa) for fa, _ in pts], [max(0.1, 100 * m) for _, m in pts], where="post",
                color=colours.get(c, "black"), label=c)
    phrase_cv.save_det(fig, ax, path, "the keyword network, held out", (0.1, 3, "target: 3% at 0.1/h in noise (2% clean)"),
                "false wakes per hour (none drawn at 0.01)", columns=2, legend_at="lower left")


def score_files(model_path, files):
    """`kws.py score --model FILE.json WAV...`: each recording's window
    scores from a fresh stream, a JSON line per file (the Swift port's
    test holds KeywordSpotter to these)."""
    _, net = load_model(model_path)
    for path in files:
        s, _ = stream_scores(net, negatives.read_wav(path))
        print(json.dumps({"file": os.path.basename(path), "scores": [round(float(v), 4) for v in s]}))


def load_model(model_path):
    with open(model_path) as f:
        model = json.load(f)
    nets = [Net.from_json(m) for m in model["members"]]
    return model, nets[0] if len(nets) == 1 else Ensemble(nets)


def count_false_wakes(model_path, folder, noises_dir, explain_them):
    """`kws.py false-wakes --model FILE.json --negatives DIR [--noises DIR]`:
    a model's detections at its own threshold in every stream of a
    negatives folder (a manifest.tsv of negatives.py or
    long_negatives.py), clean and, with --noises, again with babble,
    pink or clatter at 10 dB (drawn per stream); per kind and in all."""
    model, net = load_model(model_path)
    threshold = model["threshold"]
    noise_list = [negatives.read_wav(os.path.join(noises_dir, k + ".wav")) for k in TRAIN_NOISES[:3]] if noises_dir else []
    per_kind = {}
    for path, fold, kind, secs in read_manifest(folder):
        x = negatives.read_wav(path)
        rr = numpy.random.default_rng(seed_of(path, "false-wakes"))
        streams = [("", x)] + ([(" +noise", negatives.mix(x, noise_list[rr.integers(len(noise_list))], 10, rr))] if noise_list else [])
        for label, stream in streams:
            s, ends = stream_scores(net, stream)
            found = len(detections(s, threshold))
            if explain_them:
                explain(path, kind + label, s, ends, threshold)
            count, hours = per_kind.get(kind + label, (0, 0.0))
            per_kind[kind + label] = (count + found, hours + secs / 3600)
    total = sum(c for c, _ in per_kind.values()), sum(h for _, h in per_kind.values())
    print(f"| negatives ({os.path.basename(model_path)}, threshold {threshold:.3f}) | false wakes | hours | per hour |\n| --- | --- | --- | --- |")
    for kind, (count, hours) in sorted(per_kind.items()):
        print(f"| {kind} | {count} | {hours:.2f} | {count / hours:.2f} |")
    print(f"| all | {total[0]} | {total[1]:.2f} | {total[0] / total[1]:.2f} |")


def main():
    global FEATURES, SMOOTH, AUGMENT, SPEED, MASK, FRONT_END, RECORDED, THRESHOLD_RULE
    if len(sys.argv) > 1 and sys.argv[1] == "false-wakes":
        fp = argparse.ArgumentParser()
        fp.add_argument("mode")
        fp.add_argument("--model", required=True)
        fp.add_argument("--negatives", required=True)
        fp.add_argument("--noises")
        fp.add_argument("--explain", action="store_true")
        b = fp.parse_args()
        return count_false_wakes(b.model, b.negatives, b.noises, b.explain)
    if len(sys.argv) > 1 and sys.argv[1] == "score":
        sp = argparse.ArgumentParser()
        sp.add_argument("mode")
        sp.add_argument("--model", required=True)
        sp.add_argument("files", nargs="+")
        b = sp.parse_args()
        return score_files(b.model, b.files)
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["eval", "train"])
    ap.add_argument("--work", required=True)
    ap.add_argument("--positives", required=True)
    ap.add_argument("--noises", required=True, help="folder of the training noises (make-noises.py)")
    ap.add_argument("--recorded-noises", help="a folder of recorded_noises.py: every WAV in it joins the training noises "
                    "(mixing and noise alone), never the calibration's or the held-out counts' babble, pink and clatter")
    ap.add_argument("--kitchen", help="kitchen.wav, reported only")
    ap.add_argument("--snr", type=float, default=10)
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--hidden", default="192,96", help="hidden layer widths (96,48 until 2026-12-01)")
    ap.add_argument("--neg-every", type=int, default=3, help="pooled frames between negative training windows")
    ap.add_argument("--folds", default="0,1,2,3,4")
    ap.add_argument("--synthetic", type=int, default=500, help="espeak-ng positives added to the training")
    ap.add_argument("--synthetic-copies", type=int, default=3)
    ap.add_argument("--flite-synthetic", type=int, default=0, help="flite positives added to the training (flite_positives)")
    ap.add_argument("--confusables", type=int, default=0, help="espeak-ng renderings of words like \"commuter\" added as training negatives")
    ap.add_argument("--out")
    ap.add_argument("--json-report")
    ap.add_argument("--features", choices=["log", "pcen"], default="pcen")
    ap.add_argument("--folds-file", help="FOLD FILE per line (training/parley_training/voice_folds.py) instead of the take folds")
    ap.add_argument("--members", type=int, default=1, help="networks averaged (each from its own initialisation)")
    ap.add_argument("--mine", type=int, default=0, help="rounds of hard-negative mining")
    ap.add_argument("--augment", action="store_true", help="spectral tilts and television-like backgrounds for the positives")
    ap.add_argument("--more-negatives", help="a folder of long_negatives.py: its streams join the negatives of their folds (training, calibration, false wakes)")
    ap.add_argument("--more-held-out-only", action="store_true", help="--more-negatives' streams counted for held-out false wakes only, never trained or calibrated on")
    ap.add_argument("--front-end", default="none", help="none, or denoise[:DB]: every stream through the daemon's speexdsp noise suppression (default -15 dB) before the features")
    ap.add_argument("--mask", default="0,0", help="BANDS,FRAMES: SpecAugment masks of up to so many mel bands and pooled frames while training")
    ap.add_argument("--speed", type=float, default=0.0, help="copies of positives (and the noisy copies of negatives) played faster or slower by up to this fraction")
    ap.add_argument("--smooth", type=int, help="windows averaged into a score (default 3; written into the model)")
    ap.add_argument("--explain", action="store_true", help="print each held-out false wake with what was said there")
    ap.add_argument("--plot", help="DET curves (SVG), held out, folds pooled")
    ap.add_argument("--threshold-rule", choices=THRESHOLD_RULES, default=THRESHOLD_RULE,
                    help="how the calibration negatives set the threshold (threshold_from; best until 2026-12-02)")
    a = ap.parse_args()

    if a.front_end != "none":
        mode, _, db = a.front_end.partition(":")
        if mode != "denoise":
            ap.error(f"--front-end {a.front_end}: expected none or denoise[:DB]")
        FRONT_END = int(db or -15)
    MASK = tuple(int(v) for v in a.mask.split(","))
    THRESHOLD_RULE = a.threshold_rule
    FEATURES = a.features
    AUGMENT = a.augment
    SPEED = a.speed
    SMOOTH = a.smooth or SMOOTH
    folds = phrase_cv.positive_folds(a.positives, a.folds_file)
    names = sorted(folds)
    audio = {n: negatives.read_wav(os.path.join(a.positives, n)) for n in names}
    spans = {n: word_span(audio[n]) for n in names}
    noises = {k: negatives.read_wav(os.path.join(a.noises, k + ".wav")) for k in TRAIN_NOISES}
    noise_list = [noises[k] for k in TRAIN_NOISES]
    # Appended: calibration and the held-out false-wake copies take the first three (babble, pink, clatter).
    if a.recorded_noises:
        recorded = sorted(f for f in os.listdir(a.recorded_noises) if f.endswith(".wav"))
        if not recorded:
            ap.error(f"--recorded-noises {a.recorded_noises}: no WAV files there (training/parley_training/recorded_noises.py makes them)")
        noise_list += [negatives.read_wav(os.path.join(a.recorded_noises, f)) for f in recorded]
        RECORDED = len(recorded)
    long_rows = read_manifest(a.more_negatives) if a.more_negatives else []
    # --more-held-out-only: the long streams are counted for false wakes
    # only, never trained or calibrated on (how a detector trained without
    # them fares on them); `heard_only` holds them apart.
    heard_only = long_rows if a.more_held_out_only else []
    neg_rows = read_manifest(os.path.join(a.work, "negatives")) + ([] if a.more_held_out_only else long_rows)
    synthetic = synthetic_positives(a.work, a.synthetic) if a.synthetic else []
    synthetic += flite_positives(a.work, a.flite_synthetic) if a.flite_synthetic else []
    confusables = confusable_negatives(a.work, a.confusables) if a.confusables else []
    for n, x in synthetic:
        spans[n] = word_span(x)
    hidden = [int(h) for h in a.hidden.split(",")]
    sizes = [WINDOW * BANDS] + hidden + [1]

    if a.mode == "train":
        # The shipped model, by the rule of every fold run: all positives,
        # the negatives of every fold but CALIBRATION_FOLD, whose negatives
        # (never trained on) set the threshold.
        rng = numpy.random.default_rng(1)
        train_neg = [r for r in neg_rows if "kitchen" not in r[2] and r[1] != CALIBRATION_FOLD]
        x, y, w = build_training([(n, audio[n]) for n in names], spans, train_neg, noise_list, rng, a.copies, a.neg_every, synthetic, a.synthetic_copies, confusables)
        net = fit(x, y, w, sizes, rng, a.epochs, a.mine, a.members)
        threshold, hours, _ = calibrate(net, neg_rows, CALIBRATION_FOLD, noise_list)
        nets = net.nets if isinstance(net, Ensemble) else [net]
        model = {"word": "computer", "threshold": round(threshold, 4), "calibration_hours": round(hours, 3),
                 "members": [n.to_json() for n in nets]}
        with open(a.out, "w") as f:
            json.dump(model, f, separators=(",", ":"))
        print(f"kws: trained on {len(names)} positives, {len(x)} windows ({int(y.sum())} positive); "
              f"threshold {threshold:.3f} on {hours:.2f} h of fold {CALIBRATION_FOLD}'s negatives: {a.out}")
        return

    conditions = ["clean", "babble", "pink", "clatter"] + (["kitchen"] if a.kitchen else [])
    cond_noise = {k: noises[k] for k in ("babble", "pink", "clatter")}
    if a.kitchen:
        cond_noise["kitchen"] = negatives.read_wav(a.kitchen)
    report = {"conditions": conditions, "folds": []}
    totals = {c: 0 for c in conditions}
    fa_total, hours_total = 0, 0.0
    curves = {c: [] for c in conditions}
    neg_curve = []
    for k in [int(f) for f in a.folds.split(",")]:
        t0 = time.time()
        calib = (k + 1) % FOLDS
        train_folds = [f for f in range(FOLDS) if f not in (k, calib)]
        rng = numpy.random.default_rng(100 + k)
        pos_train = [(n, audio[n]) for n in names if folds[n] != k]
        neg_train = [r for r in neg_rows if r[1] in train_folds and "kitchen" not in r[2]]
        x, y, w = build_training(pos_train, spans, neg_train, noise_list, rng, a.copies, a.neg_every, synthetic, a.synthetic_copies, confusables)
        net = fit(x, y, w, sizes, rng, a.epochs, a.mine, a.members)
        threshold, calib_hours, rules = calibrate(net, neg_rows, calib, noise_list)
        # held out: positives (each one's best score and the negatives' peaks
        # kept raw as well: the other threshold rule can be read off the report)
        fold_row = {"fold": k, "threshold": threshold, "thresholds": rules, "calibration_hours": calib_hours,
                    "misses": {}, "best": {}, "negative_peaks": []}
        held = [n for n in names if folds[n] == k]
        for c in conditions:
            miss = 0
            for n in held:
                s, _ = stream_scores(net, condition_audio(audio[n], n, c, cond_noise, a.snr))
                best = float(s.max())
                fold_row["best"].setdefault(c, []).append(best)
                curves[c].append(best - threshold)
                miss += best < threshold
            fold_row["misses"][c] = [int(miss), len(held)]
            totals[c] += miss
        # held out: negatives, every kind, clean and at 10 dB with a training noise
        fa, hours = 0, 0.0
        for path, fold, kind, secs in neg_rows + heard_only:
            if fold != k:
                continue
            xx = negatives.read_wav(path)
            rr = numpy.random.default_rng(seed_of(path, "held"))
            for copy, stream in enumerate((xx, negatives.mix(xx, noise_list[rr.integers(3)], 10, rr))):
                s, ends = stream_scores(net, stream)
                fa += len(detections(s, threshold))
                if a.explain:
                    explain(path, kind + (" +noise" if copy else ""), s, ends, threshold)
                stream_peaks = best_separated(s)
                fold_row["negative_peaks"] += [float(p) for p in stream_peaks[:50]]
                neg_curve += [p - threshold for p in stream_peaks]
                hours += secs / 3600
        fold_row["false_wakes"] = [fa, hours]
        fa_total += fa
        hours_total += hours
        report["folds"].append(fold_row)
        print(f"fold {k}: {len(x)} windows ({int(y.sum())} positive), threshold {threshold:.2f} "
              f"on {calib_hours:.2f} h; misses " + ", ".join(f"{c} {fold_row['misses'][c][0]}/{len(held)}" for c in conditions)
              + f"; false wakes {fa} in {hours:.2f} h; {time.time() - t0:.0f} s", flush=True)
    n = sum(len([m for m in names if folds[m] == int(f)]) for f in a.folds.split(","))
    print("\n| condition | held-out misses at the fold's threshold |\n| --- | --- |")
    for c in conditions:
        label = c if c == "clean" else f"{c} {a.snr:g} dB"
        print(f"| {label} | {100 * totals[c] / n:.1f}% ({totals[c]}/{n}) |")
    print(f"| false wakes held out | {fa_total} in {hours_total:.2f} h ({fa_total / max(hours_total, 1e-9):.2f}/h) |")
    report["totals"] = {"misses": totals, "positives": n, "false_wakes": fa_total, "hours": hours_total}
    report["curves"] = {"positives": {c: [float(v) for v in vs] for c, vs in curves.items()}, "negatives": [float(v) for v in neg_curve]}
    if a.plot:
        plot(a.plot, curves, neg_curve, hours_total)
    if a.json_report:
        with open(a.json_report, "w") as f:
            json.dump(report, f)


if __name__ == "__main__":
    main()

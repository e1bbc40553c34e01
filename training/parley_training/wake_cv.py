"""Cross-validated figures of the speech_embedding wake head, held out by
voice, and the shipped head trained on everything.

    python -m parley_training.wake_cv WORK DATA FOLDS_FILE [--ship OUT.json]

WORK holds build_features' caches; FOLDS_FILE is training/parley_training/voice_folds.py's
"FOLD FILE" lines for the recordings of "computer" (no voice on both sides).
The real-speech negatives (wake-other/, coffee-maker/) go to five folds by
a hash of their name; every recording is scored by a head that never
trained on it (nor on its voice, for "computer"). Synthetic voices are in
every fold's training. Kitchen noise is only ever in the test sets.

Prints, per threshold, misses clean and at 10 dB kitchen, and false wakes on
the held-out real speech (count and per hour of its unpadded length).

With --long-train-folds (build_features --long: the long negatives,
parley_training.long_negatives' synthetic prose, clean and with a training
noise at 10 dB), the streams of those folds join the negatives: fold k's
heads train on every listed fold but k (every --long-stride'th window),
and score fold k's streams, whose false wakes (the head alone, over whole
streams) make a second table. Folds not listed are never trained on, by
any head or the shipped one: the shipped detector's long-negative figure
(training/bin/eval-wake-long.sh) is measured on them.
"""
import argparse
import json
import os
import re
import sys

import numpy as np

from . import audio, dataset, head as H
from .build_features import speed_set

SR = audio.RATE
REFRACTORY = 25  # hops (2 s): one wake per word, as EmbeddingSpotter holds off after a wake


def speech_bounds(x):
    """(start, end) in samples of the speech in a short recording: 20 ms
    frames within 35 dB of the loudest."""
    n = 320
    f = len(x) // n
    e = 10 * np.log10(np.sum(x[:f * n].astype(np.float64).reshape(f, n) ** 2, axis=1) + 1.0)
    on = np.nonzero(e > e.max() - 35)[0]
    return int(on[0] * n), int((on[-1] + 1) * n)


def label_windows(count, bounds, lead=dataset.PAD):
    """Per window of a padded positive (`lead` samples before it): 1 (heard
    the whole word), 0 (heard at most its first third: must not fire yet),
    -1 (neither: not used)."""
    s, e = bounds[0] + lead, bounds[1] + lead
    ends = np.array([H.window_end_sample(i) for i in range(count)])
    lab = np.full(count, -1, np.int8)
    lab[(ends >= e - 0.1 * SR) & (ends <= e + 0.45 * SR)] = 1
    lab[ends < s + 0.3 * (e - s)] = 0
    return lab


def events(scores, threshold):
    """Wakes in a stream of window scores: a crossing, then REFRACTORY hops deaf."""
    n, i = 0, 0
    while i < len(scores):
        if scores[i] >= threshold:
            n += 1
            i += REFRACTORY
        else:
            i += 1
    return n


def fold_of_name(name, folds=5):
    return audio.seed_of("negative-fold", name) % folds


# Training copies of the real recordings of the word, and how far each
# stretches the recording's time axis (its speech bounds scale with it).
POSITIVE_SETS = {"pos-clean": 1.0, "pos-noisy-a": 1.0, "pos-noisy-b": 1.0, "pos-slow-noisy": 1 / 0.88,
                 "pos-fast-noisy": 1 / 1.12, "pos-room-noisy": 1.0, "pos-room": 1.0,
                 **{speed_set(f): 1 / f for f in dataset.MORE_SPEEDS}}


LONG_SETS = ("long-clean", "long-noisy")


def long_fold(name):
    """The fold of a long negatives' stream from its name (prose-fold<k>-<n>.wav)."""
    m = re.match(r"prose-fold(\d+)-", name)
    if not m:
        raise ValueError(f"wake_cv: {name}: not a long negatives' stream (expected prose-fold<k>-<n>.wav)")
    return int(m.group(1))


def load_sets(work, long=False):
    names = list(POSITIVE_SETS) + ["pos-kitchen-10dB", "neg-clean", "neg-noisy",
                                   "syn-pos-clean", "syn-pos-noisy", "syn-neg-clean", "syn-neg-noisy"]
    if long:
        missing = [k for k in LONG_SETS if not os.path.exists(os.path.join(work, k + ".npz"))]
        if missing:
            sys.exit(f"wake_cv: {', '.join(missing)} missing in {work} (build_features --long CLEAN NOISY)")
        names += list(LONG_SETS)
    return {k: dataset.load(os.path.join(work, k + ".npz")) for k in names if os.path.exists(os.path.join(work, k + ".npz"))}


def positive_bounds(data, names):
    return {n: speech_bounds(audio.read(os.path.join(data, n))) for n in names}


def synthetic_bounds(festival=False):
    return {n: speech_bounds(x) for n, x in dataset.synthetic("positive", festival)}


def training_arrays(sets, bounds, syn_bounds, keep_pos, keep_neg, real_positives=True, real_weight=1.0,
                    keep_long=lambda n: False, long_stride=4, long_weight=1.0, positive_weight=1.0):
    xs, ys, ws = [], [], []

    def add_pos(feats, bnds, keep, stretch=1.0):
        for n, emb in feats.items():
            if not keep(n):
                continue
            x = H.windows(emb)
            lab = label_windows(len(x), tuple(int(b * stretch) for b in bnds[n]))
            xs.append(x[lab >= 0]); ys.append(lab[lab >= 0].astype(np.float32))
            ws.append(np.where(lab[lab >= 0] == 1, 1.0, 0.5).astype(np.float32))

    def add_neg(feats, keep, w, stride=1):
        for n, emb in feats.items():
            if keep(n):
                # A stream's consecutive windows share 15 of 16 embeddings: every
                # stride'th, from an offset drawn from its name, is nearly as good.
                x = H.windows(emb)[audio.seed_of("long-window", n) % stride::stride]
                xs.append(x); ys.append(np.zeros(len(x), np.float32)); ws.append(np.full(len(x), w, np.float32))

    for k, stretch in POSITIVE_SETS.items():
        if real_positives and k in sets:
            add_pos(sets[k], bounds, keep_pos, stretch)
    for k in ("syn-pos-clean", "syn-pos-noisy"):
        add_pos(sets[k], syn_bounds, lambda n: True)
    for k in ("neg-clean", "neg-noisy"):
        add_neg(sets[k], keep_neg, real_weight)
    for k in ("syn-neg-clean", "syn-neg-noisy"):
        add_neg(sets[k], lambda n: True, 1.0)
    for k in LONG_SETS:
        if k in sets:
            add_neg(sets[k], keep_long, long_weight, long_stride)
    x, y, w = np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)
    # Positives and negatives weigh the same in all (times positive_weight), whatever their counts.
    pos = y == 1
    w[pos] *= positive_weight * w[~pos].sum() / w[pos].sum()
    return x, y, w


def scores_of(head, feats, keep):
    return {n: head.logits(H.windows(emb)) for n, emb in feats.items() if keep(n)}


def seconds(data, names):
    import soundfile
    total = 0.0
    for n in names:
        info = soundfile.info(os.path.join(data, n))
        total += info.frames / info.samplerate
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work"); ap.add_argument("data"); ap.add_argument("folds_file")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--members", type=int, default=1,
                    help="heads per fold and shipped, seeds 10 apart, their logits averaged (head.Ensemble)")
    ap.add_argument("--real-negative-weight", type=float, default=1.0,
                    help="weight of a window of real speech against a synthetic one (2 measured on 2026-12-06, not kept)")
    ap.add_argument("--synthetic-only", action="store_true",
                    help="train on synthetic voices of the word alone (as `parley wake train` does): every real recording of it is held out")
    ap.add_argument("--festival", action="store_true", help="festival's voices among the synthetic ones (build_features --festival)")
    ap.add_argument("--long-train-folds", help="long negatives' folds heads may train on, e.g. 0,1,2,3 (build_features --long); "
                                               "'none' scores the held-out streams without training on any")
    ap.add_argument("--long-stride", type=int, default=4, help="every n'th window of a long stream trained on")
    ap.add_argument("--long-weight", type=float, default=1.0, help="weight of a long stream's window against a synthetic one")
    ap.add_argument("--positive-weight", type=float, default=1.0, help="the positives' total weight against the negatives'")
    ap.add_argument("--scores", default="cv-scores.json", help="file in WORK for every held-out score")
    ap.add_argument("--no-cv", action="store_true", help="only the shipped head (--ship): no folds")
    ap.add_argument("--ship", help="also train on everything and write the head's JSON here")
    ap.add_argument("--threshold", type=float, default=None, help="the shipped head's threshold (logit)")
    a = ap.parse_args()
    log = lambda m: print(m, file=sys.stderr, flush=True)
    long_on = a.long_train_folds is not None
    long_train = {int(f) for f in a.long_train_folds.split(",")} if long_on and a.long_train_folds != "none" else set()
    sets = load_sets(a.work, long=long_on)
    vf = {}
    for line in open(a.folds_file):
        f, path = line.split(maxsplit=1)
        vf[os.path.relpath(path.strip(), a.data)] = int(f)
    bounds = positive_bounds(a.data, sets["pos-clean"])
    syn = synthetic_bounds(a.festival)
    folds = [] if a.no_cv else sorted(set(vf.values()))
    out = {"pos": {}, "kitchen": {}, "neg": {}, "long": {}}
    long_args = dict(long_stride=a.long_stride, long_weight=a.long_weight, positive_weight=a.positive_weight)
    for k in folds:
        x, y, w = training_arrays(sets, bounds, syn, lambda n: vf[n] != k, lambda n: fold_of_name(n) != k,
                                  real_positives=not a.synthetic_only, real_weight=a.real_negative_weight,
                                  keep_long=lambda n: long_fold(n) in long_train and long_fold(n) != k, **long_args)
        log(f"fold {k}: {int(y.sum())} positive and {int((y == 0).sum())} negative windows")
        h = ensemble(x, y, w, k, a, log)
        out["pos"].update(scores_of(h, sets["pos-clean"], lambda n: vf[n] == k))
        out["kitchen"].update(scores_of(h, sets["pos-kitchen-10dB"], lambda n: vf[n] == k))
        out["neg"].update(scores_of(h, sets["neg-clean"], lambda n: fold_of_name(n) == k))
        for cond in LONG_SETS if long_on else ():
            out["long"].update({f"{cond}/{n}": s for n, s in scores_of(h, sets[cond], lambda n: long_fold(n) == k).items()})
    if not a.no_cv:
        report(a, out)
    if a.ship:
        x, y, w = training_arrays(sets, bounds, syn, lambda n: True, lambda n: True, real_positives=not a.synthetic_only,
                                  real_weight=a.real_negative_weight, keep_long=lambda n: long_fold(n) in long_train, **long_args)
        h = ensemble(x, y, w, 99, a, log)
        with open(a.ship, "w") as f:
            f.write(h.to_json("computer", a.threshold if a.threshold is not None else 0.0, {
                "trained_on": "all development recordings of 'computer' (../shared/data/wake-computer) and their copies, "
                              "synthetic voices, real and synthetic negatives (training/parley_training/wake_cv.py)"
                              + (f"; long negatives' folds {a.long_train_folds}, every {a.long_stride}th window" if long_train else ""),
                "dropout": a.dropout, "epochs": a.epochs, "seeds": [99 + 10 * j for j in range(a.members)],
                "positive_weight": a.positive_weight}))


def ensemble(x, y, w, seed, a, log):
    """`a.members` heads with seeds `seed`, `seed` + 10, ...: one head, or their Ensemble."""
    heads = [H.Head(seed=seed + 10 * j).fit(x, y, w, seed=seed + 10 * j, epochs=a.epochs, dropout=a.dropout, log=log)
             for j in range(a.members)]
    return heads[0] if len(heads) == 1 else H.Ensemble(heads)


def report(a, out):
    hours = seconds(a.data, out["neg"]) / 3600
    with open(os.path.join(a.work, a.scores), "w") as f:
        json.dump({g: {n: s.tolist() for n, s in d.items()} for g, d in out.items()}, f)
    print(f"held out: {len(out['pos'])} recordings of 'computer' (by voice), {len(out['neg'])} of real speech ({hours:.2f} h)")
    print("threshold  miss-clean  miss-kitchen10  false-wakes  per-hour")
    for t in np.arange(-2, 8.01, 0.5):
        mc = sum(1 for s in out["pos"].values() if s.max(initial=-99) < t)
        mk = sum(1 for s in out["kitchen"].values() if s.max(initial=-99) < t)
        fw = sum(events(s, t) for s in out["neg"].values())
        print(f"{t:9.1f}  {mc:4d} {100 * mc / len(out['pos']):5.1f}%  {mk:4d} {100 * mk / len(out['kitchen']):5.1f}%  {fw:6d}  {fw / hours:7.2f}")
    if out["long"]:
        report_long(out["long"])


def report_long(scores):
    """False wakes of each fold's heads alone on its held-out long streams (no
    keyword network before them, whole streams: more than the daemon would)."""
    by = {cond: {n: s for n, s in scores.items() if n.startswith(cond + "/")} for cond in LONG_SETS}
    # Hours from the windows: one embedding every 80 ms, 15 before the first window.
    hours = {c: sum(len(s) + H.CONTEXT - 1 for s in d.values()) * 0.08 / 3600 for c, d in by.items()}
    print(f"held out long negatives (heads alone, whole streams): {hours['long-clean']:.2f} h clean, "
          f"{hours['long-noisy']:.2f} h with training noise at 10 dB")
    print("threshold  long-clean  long-noisy  per-hour")
    for t in np.arange(2, 10.01, 0.5):
        fc = sum(events(s, t) for s in by["long-clean"].values())
        fn = sum(events(s, t) for s in by["long-noisy"].values())
        print(f"{t:9.1f}  {fc:10d}  {fn:10d}  {(fc + fn) / sum(hours.values()):8.2f}")


if __name__ == "__main__":
    main()

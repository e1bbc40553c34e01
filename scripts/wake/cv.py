#!/usr/bin/env python3
"""Cross-validated wake-word figures from cached stage-2 scores (written by
`parley-bench speech-wake-scores`, see scripts/eval-wake-cv.sh). No decoding
happens here: every threshold is a count over cached candidates.

Folds of the positives: the 80 recordings hold 63 distinct takes (one take
appears 8 times, time-shifted and rescaled, another 6 times, ...). Two files
are the same take when the peak of their normalised cross-correlation is
above 0.9 (same takes: >= 0.989; different takes: <= 0.60). A take's files
all go to fold int(sha256(first file name of the take)[:8], 16) % 5, so no
take is in a training and a test fold at once. The data has no speaker
labels, so this is take-disjoint, not provably speaker-disjoint.
Negatives are split into the same 5 folds when generated (make-negatives.py).

Tuning on the training folds (for each fold left out): the stage-2 threshold
is put just above the training negatives' best-scoring candidate that the
target rate no longer allows (target 0.5 false alarms per hour of training
negatives), and, when several stage-1 thresholds were scored, the one with
the fewest training misses is taken. The held-out fold then gives misses
and false alarms at that threshold; folds are pooled.
"""
import argparse
import glob
import hashlib
import json
import math
import os
import wave

import numpy

FOLDS = 5
FRAME_RATE = 16000


def fold_of(name):
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % FOLDS


def takes(folder):
    """Files grouped into takes by cross-correlation (see the module doc)."""
    files = sorted(glob.glob(os.path.join(folder, "*.wav")))
    signals = []
    for f in files:
        with wave.open(f) as w:
            x = numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(numpy.float64)
        signals.append(x / (numpy.linalg.norm(x) + 1e-9))
    size = 1 << int(math.ceil(math.log2(2 * max(len(x) for x in signals))))
    spectra = [numpy.fft.rfft(x, size) for x in signals]
    parent = list(range(len(files)))

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a
    for i in range(len(files)):
        for j in range(i + 1, len(files)):
            if numpy.max(numpy.abs(numpy.fft.irfft(spectra[i] * numpy.conj(spectra[j]), size))) > 0.9:
                parent[root(i)] = root(j)
    groups = {}
    for i, f in enumerate(files):
        groups.setdefault(root(i), []).append(os.path.basename(f))
    return [sorted(g) for g in groups.values()]


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def score_of(row):
    return -math.inf if row[1] is None else row[1]


def load(work, ct, positive_folds):
    """Positives: (fold, best score, name); negatives: per fold the hours and
    the candidate scores, and per kind the same."""
    folder = os.path.join(work, "scores", ct)
    pos = []
    for path in sorted(glob.glob(os.path.join(folder, "positives-*.jsonl"))):
        for line in load_jsonl(path):
            name = os.path.basename(line["file"])
            best = max((score_of(c) for c in line["candidates"]), default=-math.inf)
            pos.append((positive_folds[name], best, name))
    neg = []  # (fold, kind, hours, [scores])
    with open(os.path.join(work, "negatives", "manifest.tsv")) as m:
        for row in m:
            path, fold, kind, _ = row.rstrip("\n").split("\t")
            stem = os.path.basename(path)[:-4]
            line = load_jsonl(os.path.join(folder, stem + ".jsonl"))[0]
            neg.append((int(fold), kind, line["seconds"] / 3600, [score_of(c) for c in line["candidates"]]))
    return pos, neg


def rates(pos, neg, threshold):
    misses = sum(1 for _, s, _ in pos if s < threshold)
    alarms = sum(1 for _, _, _, scores in neg for s in scores if s >= threshold)
    hours = sum(h for _, _, h, _ in neg)
    return misses, len(pos), alarms, hours


def tuned_threshold(neg, target):
    """Just above the best training negative the target rate does not allow."""
    hours = sum(h for _, _, h, _ in neg)
    scores = sorted((s for _, _, _, ss in neg for s in ss), reverse=True)
    allowed = int(math.floor(target * hours))
    bar = scores[allowed] if allowed < len(scores) else -math.inf
    return bar + 0.01


def cross_validate(data, target):
    """data: {ct: (pos, neg)}. Returns pooled held-out counts and per-fold rows."""
    rows = []
    total = [0, 0, 0, 0.0]
    for k in range(FOLDS):
        best = None
        for ct, (pos, neg) in data.items():
            train_pos = [p for p in pos if p[0] != k]
            train_neg = [n for n in neg if n[0] != k]
            t = tuned_threshold(train_neg, target)
            m, _, _, _ = rates(train_pos, train_neg, t)
            key = (m, -float(ct))
            if best is None or key < best[0]:
                best = (key, ct, t, m / len(train_pos))
        _, ct, t, train_miss = best
        pos, neg = data[ct]
        m, n, a, h = rates([p for p in pos if p[0] == k], [x for x in neg if x[0] == k], t)
        rows.append((k, ct, t, train_miss, m, n, a, h))
        total = [total[0] + m, total[1] + n, total[2] + a, total[3] + h]
    return total, rows


def det_points(pos, neg):
    """(threshold, miss rate, false alarms per hour) at every distinct score."""
    thresholds = sorted({s for _, s, _ in pos if math.isfinite(s)} | {s for *_, ss in neg for s in ss if math.isfinite(s)})
    out = []
    for t in thresholds:
        m, n, a, h = rates(pos, neg, t)
        out.append((t, m / n, a / h))
    return out


def plot(path, curve, tuned, default, title):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "parley-wake-det"
    import matplotlib.pyplot as plt
    floor = 0.01  # false alarms per hour drawn at the axis' floor when none
    fig, ax = plt.subplots(figsize=(7, 4.6))
    xs = [max(floor, fa) for _, _, fa in curve]
    ys = [max(0.1, 100 * miss) for _, miss, _ in curve]
    ax.step(xs, ys, where="post", color="#1f77b4", label="all thresholds (every fold, pooled)")
    if tuned:
        ax.plot([max(floor, fa) for _, fa, _ in tuned], [max(0.1, 100 * m) for m, _, _ in tuned], "o--", color="#2ca02c",
                label="tuned on 4 folds, measured on the 5th (targets 0.1-5 FA/h)")
    dm, dfa, dlabel = default
    ax.plot([max(floor, dfa)], [max(0.1, 100 * dm)], "r*", markersize=14, label=dlabel)
    ax.axvline(0.5, color="grey", linestyle=":", linewidth=1)
    ax.axhline(3, color="grey", linestyle=":", linewidth=1)
    ax.text(0.52, 3.3, "target: 3% at 0.5/h", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor * 0.8, 200)
    ax.set_ylim(0.1, 100)
    ax.set_xlabel("false alarms per hour (0 drawn at 0.01)")
    ax.set_ylabel("miss rate (%)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None, "Creator": None})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--positives", required=True)
    ap.add_argument("--thresholds", default="1e-60", help="stage-1 thresholds scored (space-separated)")
    ap.add_argument("--default-ct", default="1e-60", help="the code's stage-1 threshold")
    ap.add_argument("--range", default="-40,40", help="the code's stage-2 threshold at sensitivity 1 and 0")
    ap.add_argument("--plot")
    a = ap.parse_args()
    lo, hi = (float(v) for v in a.range.split(","))

    def threshold_at(s):
        return hi - s * (hi - lo)

    groups = takes(a.positives)
    positive_folds = {}
    for g in groups:
        for name in g:
            positive_folds[name] = fold_of(g[0])
    print(f"positives: {len(positive_folds)} files, {len(groups)} takes; files per fold:",
          [sum(1 for v in positive_folds.values() if v == k) for k in range(FOLDS)])
    data = {ct: load(a.work, ct, positive_folds) for ct in a.thresholds.split()}
    pos, neg = data[a.default_ct] if a.default_ct in data else next(iter(data.values()))
    hours = sum(h for _, _, h, _ in neg)
    by_kind = {}
    for _, kind, h, ss in neg:
        by_kind.setdefault(kind, [0.0, 0])
        by_kind[kind][0] += h
        by_kind[kind][1] += len(ss)
    print(f"negatives: {hours:.2f} h; stage-1 candidates per hour by kind:",
          ", ".join(f"{k} {v[0]:.2f} h {v[1] / v[0]:.0f}/h" for k, v in sorted(by_kind.items())))
    for ct, (p, n) in data.items():
        print(f"stage 1 {ct}: {sum(1 for x in p if x[1] == -math.inf)} positives without a scored candidate; "
              f"{sum(len(x[3]) for x in n) / hours:.0f} candidates/h")

    print("\nFixed sensitivity (nothing tuned: the code's mapping; stage 1 at %s)" % a.default_ct)
    print("| sensitivity | stage-2 threshold | miss rate | false alarms / hour | " +
          " | ".join(sorted(by_kind)) + " |")
    for s in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]:
        t = threshold_at(s)
        m, n, al, h = rates(pos, neg, t)
        kinds = []
        for kind in sorted(by_kind):
            sub = [x for x in neg if x[1] == kind]
            _, _, ka, kh = rates(pos, sub, t)
            kinds.append(f"{ka / kh:.2f}")
        print(f"| {s:.1f} | {t:g} | {100 * m / n:.1f}% ({m}/{n}) | {al / h:.2f} ({al}) | " + " | ".join(kinds) + " |")

    print("\nHighest-scoring negatives:", ", ".join(
        f"{s:.1f} ({kind} fold {k})" for s, kind, k in sorted(((s, kind, k) for k, kind, _, ss in neg for s in ss), reverse=True)[:8]))
    print("Lowest positives:", ", ".join(f"{s:.1f} ({name[:8]}, fold {k})" for k, s, name in sorted(pos, key=lambda x: x[1])[:8]))

    tuned = []
    for target in [0.1, 0.25, 0.5, 1, 2, 5]:
        (m, n, al, h), rows = cross_validate(data, target)
        tuned.append((m / n, al / h, target))
        if target == 0.5:
            print("\nCross-validated (tuned on 4 folds for <= 0.5 false alarms/h, measured on the 5th)")
            print("| fold left out | stage 1 | stage-2 threshold | training miss | held-out miss | held-out false alarms |")
            for k, ct, t, tm, fm, fn, fa, fh in rows:
                print(f"| {k} | {ct} | {t:.2f} | {100 * tm:.1f}% | {fm}/{fn} | {fa} in {fh:.2f} h |")
            print(f"| pooled | | mean {numpy.mean([r[2] for r in rows]):.2f} | | "
                  f"**{100 * m / n:.1f}% ({m}/{n})** | **{al / h:.2f}/h ({al} in {h:.2f} h)** |")
    print("\nHeld-out DET points of the tuning (target FA/h on training folds -> held-out miss, FA/h):")
    for miss, fa, target in tuned:
        print(f"  target {target}: miss {100 * miss:.1f}%, {fa:.2f} FA/h")

    curve = det_points(pos, neg)
    print("\nDET curve, all thresholds (threshold: miss %, FA/h), thinned:")
    last = None
    for t, miss, fa in curve:
        key = (round(100 * miss), round(fa, 1))
        if key != last:
            print(f"  {t:8.2f}: {100 * miss:5.1f}% {fa:6.2f}/h")
            last = key
    dm, _, da, dh = rates(pos, neg, threshold_at(0.5))
    if a.plot:
        plot(a.plot, curve, tuned, (dm / len(pos), da / dh,
                                    f"default sensitivity 0.5 (threshold {threshold_at(0.5):g}): "
                                    f"{100 * dm / len(pos):.1f}% at {da / dh:.2f}/h"),
             f"Wake word \"computer\": {len(pos)} positives (5 take-disjoint folds), {hours:.2f} h of negatives")
        print(f"\nplot: {a.plot}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Cross-validated wake-word figures from cached stage-2 scores (written by
`parley-bench speech-wake-scores`, see training/bin/eval-wake-cv.sh). No decoding
happens here: every threshold is a count over cached candidates.

Folds of the positives: the 80 recordings hold 63 distinct takes (one take
appears 8 times, time-shifted and rescaled, another 6 times, ...). Two files
are the same take when the peak of their normalised cross-correlation is
above 0.9 (same takes: >= 0.989; different takes: <= 0.60). A take's files
all go to fold int(sha256(first file name of the take)[:8], 16) % 5, so no
take is in a training and a test fold at once. The data has no speaker
labels, so this is take-disjoint, not provably speaker-disjoint.
Negatives are split into the same 5 folds when generated (negatives.py).

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


def positive_folds(folder, folds_file=None):
    """{file name: fold} of the positives in `folder`: their takes' folds, or
    those of `folds_file` ("FOLD FILE" per line, as
    training/parley_training/voice_folds.py prints them)."""
    if folds_file:
        with open(folds_file) as f:
            return {os.path.basename(p): int(k) for k, p in (line.split(maxsplit=1) for line in f.read().splitlines() if line)}
    return {name: fold_of(g[0]) for g in takes(folder) for name in g}


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def nats(x):
    return -math.inf if x is None else x


def load(work, scores, ct, positive_folds, negative_scores=None):
    """Cached candidates of one stage-1 threshold: positives as (fold, name,
    candidates), negatives as (fold, kind, hours, candidates); a candidate is
    (code's score, phrase frames, likelihood ratio). The negatives' scores
    may be in a folder of their own (a noise condition of the positives
    shares the negatives of its front end)."""
    folder = os.path.join(scores, ct)
    negative_folder = os.path.join(negative_scores or scores, ct)

    def rows(line):
        # [time, score, frames, hey, likelihood ratio]
        return [(nats(c[1]), c[2], nats(c[4] if len(c) > 4 else c[1])) for c in line["candidates"]]
    pos = []
    for path in sorted(glob.glob(os.path.join(folder, "positives-*.jsonl"))):
        for line in load_jsonl(path):
            name = os.path.basename(line["file"])
            pos.append((positive_folds[name], name, rows(line)))
    neg = []
    with open(os.path.join(work, "negatives", "manifest.tsv")) as m:
        for row in m:
            path, fold, kind, _ = row.rstrip("\n").split("\t")
            line = load_jsonl(os.path.join(negative_folder, os.path.basename(path)[:-4] + ".jsonl"))[0]
            neg.append((int(fold), kind, line["seconds"] / 3600, rows(line)))
    return pos, neg


def scored(raw, score):
    """Scores by `score(candidate)`: positives as (fold, best score, name),
    negatives as (fold, kind, hours, [scores])."""
    pos, neg = raw
    return ([(k, max((score(c) for c in cs), default=-math.inf), name) for k, name, cs in pos],
            [(k, kind, h, [score(c) for c in cs]) for k, kind, h, cs in neg])


def prior(frames_per_phone, penalty, phones):
    """The verifier's duration prior (WakeVerifier.durationPenalty) on the
    cached likelihood ratio."""
    minimum = frames_per_phone * phones
    return lambda c: c[2] - penalty * max(0.0, minimum - c[1])


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


def configurations(raw, phones):
    """The ways of scoring the cross-validation chooses among: each stage-1
    threshold scored ({ct: (pos, neg)} from `load`), with the duration prior
    off or on with its two values from a small grid. Cost breaks ties: no
    prior, then weaker. Returns (all of them, those without the prior)."""
    grid = [(0.0, 0.0)] + [(f, p) for f in (6.0, 6.5, 7.0, 7.5) for p in (0.5, 1.0, 2.0, 4.0)]
    configs, plain = {}, {}
    for ct, r in raw.items():
        for f, pen in grid:
            name = f"{ct}, no prior" if pen == 0 else f"{ct}, prior {f:g}/phone x {pen:g}"
            configs[name] = scored(r, prior(f, pen, phones)) + (pen + f / 100,)
            if pen == 0:
                plain[name] = configs[name]
    return configs, plain


def cross_validate(configs, target, tuning=None):
    """configs: {name: (pos, neg, cost)}, each a way of scoring (stage-1
    threshold, duration prior). For each fold left out, the configuration
    with the fewest training misses at its tuned threshold (ties: lowest
    cost) is measured on that fold. `tuning` (same names): the data the
    choice is made on, when it is not the data measured (the kitchen noise
    is measured with what the training noises chose). Returns pooled
    held-out counts and rows."""
    rows = []
    total = [0, 0, 0, 0.0]
    for k in range(FOLDS):
        best = None
        for name, (pos, neg, cost) in (tuning or configs).items():
            train_pos = [p for p in pos if p[0] != k]
            train_neg = [n for n in neg if n[0] != k]
            t = tuned_threshold(train_neg, target)
            m, _, _, _ = rates(train_pos, train_neg, t)
            key = (m, cost)
            if best is None or key < best[0]:
                best = (key, name, t, m / len(train_pos))
        _, name, t, train_miss = best
        pos, neg, _ = configs[name]
        m, n, a, h = rates([p for p in pos if p[0] == k], [x for x in neg if x[0] == k], t)
        rows.append((k, name, t, train_miss, m, n, a, h))
        total = [total[0] + m, total[1] + n, total[2] + a, total[3] + h]
    return total, rows


def choose_on_all(configs, target):
    """The same choice made on all folds: what the procedure ships."""
    best = None
    for name, (pos, neg, cost) in configs.items():
        t = tuned_threshold(neg, target)
        m, n, a, h = rates(pos, neg, t)
        key = (m, cost)
        if best is None or key < best[0]:
            best = (key, name, t, m, n, a, h)
    return best[1:]


def det_points(pos, neg):
    """(threshold, miss rate, false alarms per hour) at every distinct score."""
    thresholds = sorted({s for _, s, _ in pos if math.isfinite(s)} | {s for *_, ss in neg for s in ss if math.isfinite(s)})
    out = []
    for t in thresholds:
        m, n, a, h = rates(pos, neg, t)
        out.append((t, m / n, a / h))
    return out


def det_axes(salt, size):
    """A DET figure (matplotlib, no display): (figure, axes, the false-alarm
    rate drawn for none)."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = salt
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size)
    return fig, ax, 0.01


def save_det(fig, ax, path, title, target, xlabel, columns=1, legend_at="upper right"):
    """Log axes, the target's lines (`target`: (false alarms/h, miss %, its
    label)), labels and legend; written without a date so the same figures
    give the same file."""
    fa, miss, label = target
    ax.axvline(fa, color="grey", linestyle=":", linewidth=1)
    ax.axhline(miss, color="grey", linestyle=":", linewidth=1)
    ax.text(fa * 1.04, miss * 1.1, label, color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.01 * 0.8, 200)
    ax.set_ylim(0.1, 100)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("miss rate (%)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc=legend_at, ncol=columns)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None, "Creator": None})


def plot(path, curves, tuned, default, title):
    fig, ax, floor = det_axes("parley-wake-det", (7, 4.6))  # floor: false alarms per hour drawn when none
    for (label, curve), colour in zip(curves, ["#1f77b4", "#aaaaaa"]):
        ax.step([max(floor, fa) for _, _, fa in curve], [max(0.1, 100 * miss) for _, miss, _ in curve], where="post",
                color=colour, label=label)
    ax.plot([max(floor, fa) for _, fa, _ in tuned], [max(0.1, 100 * m) for m, _, _ in tuned], "o--", color="#2ca02c",
            label="tuned on 4 folds, measured on the 5th (targets 0.1-5 FA/h)")
    dm, dfa, dlabel = default
    ax.plot([max(floor, dfa)], [max(0.1, 100 * dm)], "r*", markersize=14, label=dlabel)
    save_det(fig, ax, path, title, (0.5, 3, "target: 3% at 0.5/h"), "false alarms per hour (none drawn at 0.01)")


def sensitivity_table(pos, neg, kinds, threshold_at):
    print("| sensitivity | stage-2 threshold | miss rate | false alarms / hour | " + " | ".join(kinds) + " |")
    print("| --- " * (4 + len(kinds)) + "|")
    for s in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]:
        t = threshold_at(s)
        m, n, al, h = rates(pos, neg, t)
        per_kind = []
        for kind in kinds:
            _, _, ka, kh = rates(pos, [x for x in neg if x[1] == kind], t)
            per_kind.append(f"{ka / kh:.2f}")
        print(f"| {s:.1f} | {t:g} | {100 * m / n:.1f}% ({m}/{n}) | {al / h:.2f} ({al}) | " + " | ".join(per_kind) + " |")


def print_cv(title, configs, target):
    (m, n, al, h), rows = cross_validate(configs, target)
    print(f"\n{title} (tuned on 4 folds for <= {target} false alarms/h, measured on the 5th)")
    print("| fold left out | chosen on the 4 others | stage-2 threshold | training miss | held-out miss | held-out false alarms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for k, name, t, tm, fm, fn, fa, fh in rows:
        print(f"| {k} | {name} | {t:.2f} | {100 * tm:.1f}% | {fm}/{fn} | {fa} in {fh:.2f} h |")
    print(f"| pooled | | | | **{100 * m / n:.1f}% ({m}/{n})** | **{al / h:.2f}/h ({al} in {h:.2f} h)** |")
    return m / n, al / h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--scores", required=True, help="folder of cached scores, one subfolder per stage-1 threshold")
    ap.add_argument("--negative-scores", help="folder of the negatives' cached scores (default: --scores)")
    ap.add_argument("--positives", required=True)
    ap.add_argument("--thresholds", default="1e-60", help="stage-1 thresholds scored (space-separated)")
    ap.add_argument("--default-ct", default="1e-60", help="the code's stage-1 threshold")
    ap.add_argument("--range", default="-21,59", help="the code's stage-2 threshold at sensitivity 1 and 0")
    ap.add_argument("--phones", type=int, default=8, help="phones of the wake phrase (computer: K AH M P Y UW T ER)")
    ap.add_argument("--plot")
    a = ap.parse_args()
    lo, hi = (float(v) for v in a.range.split(","))

    def threshold_at(s):
        return hi - s * (hi - lo)

    groups = takes(a.positives)
    positive_folds = {name: fold_of(g[0]) for g in groups for name in g}
    print(f"positives: {len(positive_folds)} files, {len(groups)} takes; files per fold:",
          [sum(1 for v in positive_folds.values() if v == k) for k in range(FOLDS)])
    raw = {ct: load(a.work, a.scores, ct, positive_folds, a.negative_scores) for ct in a.thresholds.split()}
    default_raw = raw.get(a.default_ct) or next(iter(raw.values()))
    pos, neg = scored(default_raw, lambda c: c[0])  # the code's own scores
    hours = sum(h for _, _, h, _ in neg)
    kinds = sorted({kind for _, kind, _, _ in neg})
    print(f"negatives: {hours:.2f} h; stage-1 candidates per hour by kind: " + ", ".join(
        f"{kind} {sum(h for _, k2, h, _ in neg if k2 == kind):.2f} h "
        f"{sum(len(x) for _, k2, _, x in neg if k2 == kind) / sum(h for _, k2, h, _ in neg if k2 == kind):.0f}/h"
        for kind in kinds))
    for ct, (p, n) in raw.items():
        print(f"stage 1 {ct}: {sum(1 for x in p if not x[2])} positives without a candidate; "
              f"{sum(len(x[3]) for x in n) / hours:.0f} candidates/h")

    print(f"\nThe code's scores at fixed sensitivities (nothing tuned here; stage 1 at {a.default_ct}, "
          f"threshold {hi:g} - {hi - lo:g} x sensitivity)")
    sensitivity_table(pos, neg, kinds, threshold_at)
    print("\nHighest-scoring negatives:", ", ".join(
        f"{s:.1f} ({kind} fold {k})" for s, kind, k in sorted(((s, kind, k) for k, kind, _, ss in neg for s in ss), reverse=True)[:8]))
    print("Lowest positives:", ", ".join(f"{s:.1f} ({name[:8]}, fold {k})" for k, s, name in sorted(pos, key=lambda x: x[1])[:8]))

    # Configurations the cross-validation chooses among: the stage-1
    # thresholds scored, each with the duration prior off or on with its
    # two values from a small grid. Cost breaks ties: no prior, then weaker.
    configs, plain = configurations(raw, a.phones)
    old_miss, old_fa = print_cv("Likelihood ratio alone (the previous detector), threshold cross-validated", plain, 0.5)
    print_cv("Duration prior and threshold both cross-validated", configs, 0.5)
    tuned = []
    for target in [0.1, 0.25, 0.5, 1, 2, 5]:
        (m, n, al, h), _ = cross_validate(configs, target)
        tuned.append((m / n, al / h, target))
    print("\nHeld-out points of the whole tuning (target on the training folds: held-out miss, false alarms/h):")
    for miss, fa, target in tuned:
        print(f"  target {target}/h: {100 * miss:.1f}% at {fa:.2f}/h")
    name, t, m, n, al, h = choose_on_all(configs, 0.5)
    print(f"\nThe same procedure on all 5 folds (what the defaults should be): {name}, threshold {t:.2f} "
          f"({m}/{n} missed, {al} false alarms in {h:.2f} h on the data it was chosen on)")

    curve = det_points(pos, neg)
    old_curve = det_points(*scored(default_raw, lambda c: c[2]))
    print("\nDET curve of the code's scores: the threshold where the miss rate steps up, below 20 false alarms/h")
    previous = None
    for t, miss, fa in curve:
        if fa < 20 and (previous is None or miss > previous[1]):
            print(f"  threshold {t:7.2f}: miss {100 * miss:5.1f}% at {fa:5.2f} FA/h")
        previous = (t, miss, fa)
    dm, dn, da, dh = rates(pos, neg, threshold_at(0.5))
    print(f"\nDefault sensitivity 0.5 (threshold {threshold_at(0.5):g}): {100 * dm / dn:.1f}% ({dm}/{dn}) at "
          f"{da / dh:.2f} false alarms/h ({da} in {dh:.2f} h)")
    if a.plot:
        plot(a.plot, [("code's score, all thresholds (every fold pooled)", curve),
                      ("likelihood ratio alone (previous score)", old_curve)], tuned,
             (dm / dn, da / dh, f"default sensitivity 0.5 (threshold {threshold_at(0.5):g}), all folds: "
                                f"{100 * dm / dn:.1f}% at {da / dh:.2f}/h"),
             f"Wake word \"computer\": {dn} positives (5 take-disjoint folds), {hours:.2f} h of negatives")
        print(f"plot: {a.plot}")


if __name__ == "__main__":
    main()

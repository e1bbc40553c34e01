#!/usr/bin/env python3
"""The wake word with an acoustic model adapted for it in noise (issue 27
item 3), held out: fold k's positives and negatives are scored by the model
adapted on the other folds' positives (scripts/eval-wake-adapted.sh).

    adapted.py --work WORK --stock WORK/scores/KEY --adapted WORK/scores/KEY-set-A0 ... (one per fold, in fold order) --positives DIR [--folds FILE]

--folds: the positives' folds as scripts/adapt/voice_folds.py prints them
("FOLD FILE" per line; folds that keep each voice apart); default the takes
of scripts/wake/cv.py. The negatives keep their generated folds.

For each model (stock, and the adapted one of the fold left out) the stage-2
threshold is the lowest that gives at most 0.1 false wakes per hour on the
training folds' negatives without kitchen.wav (as scripts/wake/second_stage.py
sets it), and misses and false wakes are counted on the fold left out.
Nothing else is tuned: the adaptation is the shipped model's recipe
(scripts/shipped-model.sh: MAP, tau 100, all parts).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cv  # noqa: E402
import second_stage as ss  # noqa: E402

CONDITIONS = ["clean", "babble-10dB", "pink-10dB", "clatter-10dB", "kitchen-10dB"]


def scores_of(scores, folds, work, ct):
    return ss.load_positives(scores, ct, folds, CONDITIONS), ss.load_negatives(work, scores, ct)


def held_out(models, fold):
    """Misses per condition and false wakes on `fold`, with its model."""
    pos, neg = models
    train = set(range(cv.FOLDS)) - {fold}
    t = ss.threshold_for([(h, s) for k, kind, h, _, s in neg if k in train and ss.trains_on(kind)])
    miss = {c: [sum(1 for k, _, _, s, _ in pos[c] if k == fold and max(s, default=-1e9) < t),
                sum(1 for k, *_ in pos[c] if k == fold)] for c in CONDITIONS if c in pos}
    alarms = sum(1 for k, _, _, _, s in neg if k == fold for x in s if x >= t)
    hours = sum(h for k, _, h, _, _ in neg if k == fold)
    return t, miss, alarms, hours


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--stock", required=True)
    ap.add_argument("--adapted", required=True, nargs=cv.FOLDS)
    ap.add_argument("--positives", required=True)
    ap.add_argument("--ct", default="1e-60")
    ap.add_argument("--folds", help="the positives' folds, \"FOLD FILE\" per line (scripts/adapt/voice_folds.py)")
    a = ap.parse_args()
    folds = cv.positive_folds(a.positives, a.folds)
    stock = scores_of(a.stock, folds, a.work, a.ct)
    total = {"stock": [{}, 0, 0.0], "adapted": [{}, 0, 0.0]}
    print("| fold | threshold, stock / adapted | misses at 10 dB (babble+pink+clatter), stock / adapted | false wakes, stock / adapted |")
    print("| --- | --- | --- | --- |")
    for fold in range(cv.FOLDS):
        row = []
        for which, models in (("stock", stock), ("adapted", scores_of(a.adapted[fold], folds, a.work, a.ct))):
            t, miss, alarms, hours = held_out(models, fold)
            acc = total[which]
            for c, (m, n) in miss.items():
                x = acc[0].setdefault(c, [0, 0])
                x[0] += m
                x[1] += n
            acc[1] += alarms
            acc[2] += hours
            noisy = [miss[c] for c in ("babble-10dB", "pink-10dB", "clatter-10dB") if c in miss]
            row.append((t, sum(m for m, _ in noisy), sum(n for _, n in noisy), alarms))
        print(f"| {fold} | {row[0][0]:.1f} / {row[1][0]:.1f} | {row[0][1]}/{row[0][2]} / {row[1][1]}/{row[1][2]} | {row[0][3]} / {row[1][3]} |")
    print(f"\nHeld out over {cv.FOLDS} folds at <= {ss.TARGET} false wakes/h (thresholds set on the training folds)\n")
    print("| condition | stock | adapted for the wake word in noise |")
    print("| --- | --- | --- |")
    for c in CONDITIONS:
        if c not in total["stock"][0]:
            continue
        s, d = total["stock"][0][c], total["adapted"][0].get(c, [0, 0])
        note = " (report only)" if "kitchen" in c else ""
        print(f"| {c}{note} | {100 * s[0] / s[1]:.1f}% ({s[0]}/{s[1]}) | {100 * d[0] / max(1, d[1]):.1f}% ({d[0]}/{d[1]}) |")
    for which in ("stock", "adapted"):
        _, n, h = total[which]
        print(f"false wakes, {which}: {n} in {h:.2f} h ({n / h:.2f}/h)")


if __name__ == "__main__":
    main()

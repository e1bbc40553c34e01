"""Thresholds chosen without the fold they are measured on.

    python -m parley_training.nested WORK/cv-scores.json FOLDS_FILE DATA [--per-hour R]

For each fold k: the lowest threshold (on a 0.1 grid) at which the other
folds' held-out real speech gives at most R false wakes an hour; then fold
k's misses and false wakes at that threshold. The totals are what a
threshold set by the rule, on recordings it never saw, does. Prints the
rule applied to all folds too (the shipped threshold).
"""
import argparse
import json
import os

import numpy as np

from .wake_cv import events, fold_of_name, seconds


def rule(neg, hours, per_hour):
    for t in np.arange(-2, 12.01, 0.1):
        if sum(events(s, t) for s in neg.values()) <= per_hour * hours:
            return round(float(t), 1)
    return 12.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scores"); ap.add_argument("folds_file"); ap.add_argument("data")
    ap.add_argument("--per-hour", type=float, default=0.5)
    a = ap.parse_args()
    d = json.load(open(a.scores))
    d = {g: {n: np.array(s) for n, s in v.items()} for g, v in d.items()}
    vf = {}
    for line in open(a.folds_file):
        f, path = line.split(maxsplit=1)
        vf[os.path.relpath(path.strip(), a.data)] = int(f)
    secs = {n: seconds(a.data, [n]) for n in d["neg"]}
    tot = {"clean": 0, "kitchen": 0, "fw": 0, "pos": 0}
    print("fold threshold miss-clean miss-kitchen10 false-wakes hours")
    for k in sorted(set(vf.values())):
        other = {n: s for n, s in d["neg"].items() if fold_of_name(n) != k}
        t = rule(other, sum(secs[n] for n in other) / 3600, a.per_hour)
        mine = {n: s for n, s in d["neg"].items() if fold_of_name(n) == k}
        mc = sum(1 for n, s in d["pos"].items() if vf[n] == k and s.max(initial=-99) < t)
        mk = sum(1 for n, s in d["kitchen"].items() if vf[n] == k and s.max(initial=-99) < t)
        fw = sum(events(s, t) for s in mine.values())
        npos = sum(1 for n in d["pos"] if vf[n] == k)
        print(f"{k} {t:.1f} {mc}/{npos} {mk}/{npos} {fw} {sum(secs[n] for n in mine) / 3600:.2f}")
        tot["clean"] += mc; tot["kitchen"] += mk; tot["fw"] += fw; tot["pos"] += npos
    hours = sum(secs.values()) / 3600
    print(f"all: clean {tot['clean']}/{tot['pos']} ({100 * tot['clean'] / tot['pos']:.1f}%), kitchen 10 dB {tot['kitchen']}/{tot['pos']} "
          f"({100 * tot['kitchen'] / tot['pos']:.1f}%), {tot['fw']} false wakes in {hours:.2f} h ({tot['fw'] / hours:.2f}/h)")
    print(f"the rule on every fold's held-out speech (the shipped threshold): {rule(d['neg'], hours, a.per_hour)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Points of the pooled DET curve of `kws.py eval --json-report` runs:
misses per condition at each fold's own threshold, and where every fold's
threshold is moved by the same offset (up or down) to just above the
held-out negatives' (K+1)-th best peak, so that they give K false wakes
(K = 0, 1, 3 by default).

    det_points.py REPORT.json [REPORT.json ...] [--allow 0,1,3]

A DET point looks at the held-out negatives to place the offset, so it is
a point of the curve, for comparing detectors, not a tuned result.
"""
import argparse
import json


def points(report, allows):
    curves = report["curves"]
    neg = sorted(curves["negatives"], reverse=True)
    hours = report["totals"]["hours"]
    rows = []
    for allow in allows:
        # Just above the (allow+1)-th best separated negative peak.
        offset = neg[allow] + 1e-3 if len(neg) > allow else 0.0
        fw = sum(1 for v in neg if v >= offset)
        misses = {c: sum(1 for v in vs if v < offset) for c, vs in curves["positives"].items()}
        rows.append((f"{fw} in {hours:.1f} h (offset {offset:+.2f})", misses))
    at_fold = report["totals"]["misses"]
    rows.insert(0, (f"each fold's threshold: {report['totals']['false_wakes']} in {hours:.1f} h", at_fold))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--allow", default="0,1,3")
    a = ap.parse_args()
    allows = [int(v) for v in a.allow.split(",")]
    for path in a.reports:
        report = json.load(open(path))
        n = report["totals"]["positives"]
        conditions = report["conditions"]
        print(f"\n{path} ({n} positives)\n| false wakes held out | " + " | ".join(conditions) + " |")
        print("| --- |" + " --- |" * len(conditions))
        for label, misses in points(report, allows):
            print(f"| {label} | " + " | ".join(f"{misses[c]}/{n}" for c in conditions) + " |")


if __name__ == "__main__":
    main()

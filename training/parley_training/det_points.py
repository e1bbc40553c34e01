#!/usr/bin/env python3
"""Points of the pooled DET curve of `kws.py eval --json-report` runs:
misses per condition at each fold's own threshold, and where every fold's
threshold is moved by the same offset (up or down) to just above the
held-out negatives' (K+1)-th best peak, so that they give K false wakes
(K = 0, 1, 3 by default).

    det_points.py REPORT.json [REPORT.json ...] [--allow 0,1,3] [--pool] [--plot SVG]

--pool takes the reports as parts of one run (folds run in separate
processes, FOLDS=0,1,2 and FOLDS=3,4) and prints them as one; --plot draws
the (pooled) report's DET curves as kws.py --plot does, for a run made in
parts (docs/wake-det-kws.svg).

A DET point looks at the held-out negatives to place the offset, so it is
a point of the curve, for comparing detectors, not a tuned result.

Reports that keep each fold's raw scores (kws.py since --threshold-rule:
"thresholds", "best", "negative_peaks") get one more row per threshold
rule: misses and false wakes at the threshold that rule gave each fold from
its calibration audio alone, so one run compares the rules. (Reports of
runs with --snr-bands, measured and not kept, were read by band_rows: at
2f148e6, scripts/wake/det_points.py.)

    python3 -m parley_training.det_points REPORT.json ...   (PYTHONPATH=training)
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
    return rows + rule_rows(report)


def rule_rows(report):
    """One row per threshold rule the folds kept raw scores for: each fold's
    positives and held-out negative peaks against that rule's threshold.
    (A negative peak at or above the threshold is one false wake: peaks are
    1 s apart, as detections are.)"""
    folds = report["folds"]
    if not folds or not all("thresholds" in f and "best" in f for f in folds):
        return []
    hours = report["totals"]["hours"]
    rows = []
    for rule in folds[0]["thresholds"]:
        misses = {c: 0 for c in report["conditions"]}
        fw = 0
        for f in folds:
            t = f["thresholds"][rule]
            for c, scores in f["best"].items():
                misses[c] += sum(1 for v in scores if v < t)
            fw += sum(1 for v in f["negative_peaks"] if v >= t)
        ts = ", ".join(f"{f['thresholds'][rule]:.2f}" for f in folds)
        rows.append((f"rule {rule} ({ts}): {fw} in {hours:.1f} h", misses))
    return rows


def pooled(reports):
    """Reports of disjoint folds of one run as one report: folds and curves
    joined, totals summed."""
    first = reports[0]
    out = {"conditions": first["conditions"], "folds": [], "curves": {"positives": {c: [] for c in first["conditions"]}, "negatives": []},
           "totals": {"misses": {c: 0 for c in first["conditions"]}, "positives": 0, "false_wakes": 0, "hours": 0.0}}
    for r in reports:
        if r["conditions"] != first["conditions"]:
            raise SystemExit(f"det_points: --pool: conditions differ ({r['conditions']} against {first['conditions']})")
        out["folds"] += r["folds"]
        out["curves"]["negatives"] += r["curves"]["negatives"]
        for c in first["conditions"]:
            out["curves"]["positives"][c] += r["curves"]["positives"][c]
            out["totals"]["misses"][c] += r["totals"]["misses"][c]
        for key in ("positives", "false_wakes", "hours"):
            out["totals"][key] += r["totals"][key]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--allow", default="0,1,3")
    ap.add_argument("--pool", action="store_true", help="the reports are folds of one run: print them as one")
    ap.add_argument("--plot", help="DET curves (SVG) of the report (with several, --pool)")
    a = ap.parse_args()
    allows = [int(v) for v in a.allow.split(",")]
    reports = [(path, json.load(open(path))) for path in a.reports]
    if a.pool:
        reports = [(" + ".join(a.reports), pooled([r for _, r in reports]))]
    if a.plot:
        if len(reports) != 1:
            raise SystemExit("det_points: --plot draws one report: pass one, or several with --pool")
        import kws  # numpy and matplotlib only when drawing
        report = reports[0][1]
        kws.plot(a.plot, report["curves"]["positives"], report["curves"]["negatives"], report["totals"]["hours"])
    for path, report in reports:
        n = report["totals"]["positives"]
        conditions = report["conditions"]
        print(f"\n{path} ({n} positives)\n| false wakes held out | " + " | ".join(conditions) + " |")
        print("| --- |" + " --- |" * len(conditions))
        for label, misses in points(report, allows):
            print(f"| {label} | " + " | ".join(f"{misses[c]}/{n}" for c in conditions) + " |")


if __name__ == "__main__":
    main()

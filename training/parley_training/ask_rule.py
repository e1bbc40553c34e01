#!/usr/bin/env python3
"""The ask rule of issue 26 item 3, chosen on folds and reported on what was
left out.

Each decoded recording (`parley understand` JSON lines: intent, slots,
confidence, threshold, weakest_word) is right, wrong or rejected against the
labels. An accepted command is *asked* ("Did you say ...?", one yes/no turn)
when its margin over the rejection threshold is below A or its weakest word's
ratio is more than B below the threshold; otherwise it is acted on. A person
answers the question truthfully, so an asked right command succeeds after
one extra turn and an asked wrong one is not acted on (they say no).

The rule, stated before any run that applies it: among the grid of (A, B),
take the one with the lowest cost on the tuning recordings, where

    cost = 10 x wrong actions + asks of right commands

(a wrong action weighs as much as asking ten right commands again; asking a
wrong command costs nothing more: without the question it would have been a
wrong action). Ties go to the fewer asks, then the smaller A.

Tuning uses the training noises only (never kitchen.wav), on 5 folds of the
recordings: the rule chosen on four folds is applied to the fifth, in every
condition, and the held-out counts are summed over the folds. The rule the
daemon ships is the one chosen on all recordings of the training noises.

usage: ask_rule.py LABELS.json --tune DECODES... --report DECODES...
       (each DECODES a `<noise>-<snr>-...jsonl` file; the condition is the
       first two dash-separated parts of its name)
"""
import argparse
import hashlib
import json
import os
import sys

MARGINS = [x / 10 for x in range(-30, 31)]        # A: -3.0 .. 3.0
WEAKEST = [None] + [x / 2 for x in range(-16, 5)]  # B: off, -8 .. +2
FOLDS = 5


def condition(path):
    parts = os.path.basename(path).split("-")
    return "clean" if parts[1] == "clean" else parts[0] + " " + parts[1]


def load(labels, paths, basis):
    rows = []
    for path in paths:
        cond = condition(path)
        for line in open(path):
            r = json.loads(line)
            name = os.path.basename(r["file"])
            want = labels[name]
            if r["intent"] is None:
                outcome = "rejected"
            elif r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items()):
                outcome = "right"
            else:
                outcome = "wrong"
            margin = weakest = snr = None
            if outcome != "rejected":
                threshold = r.get("threshold")
                if threshold is None:
                    sys.exit(f"{path}: no threshold field; decode with a parley that prints it")
                # "margin": over the noise-relaxed threshold; "raw": the ratios themselves.
                offset = threshold if basis == "margin" else 0
                margin = r["confidence"] - offset
                weakest = r["weakest_word"] - offset
                snr = r["snr"]
            fold = int(hashlib.sha256(name.encode()).hexdigest(), 16) % FOLDS
            rows.append(dict(cond=cond, name=name, outcome=outcome, margin=margin, weakest=weakest, snr=snr, fold=fold))
    return rows


def asks(row, a, b):
    return row["margin"] < a or (b is not None and row["weakest"] < b)


def band(row, splits):
    """Which SNR band (index into the rule) a row's estimated SNR falls in."""
    return sum(row["snr"] >= s for s in splits)


def score_rule(rows, rule, splits):
    """Counts under a banded rule: one (A, B) per SNR band."""
    return tally(rows, lambda r: asks(r, *rule[band(r, splits)]))


def choose_rule(rows, splits):
    """The cost is a sum over recordings, so each band's (A, B) is chosen on its own."""
    accepted = [r for r in rows if r["outcome"] != "rejected"]
    return [choose([r for r in accepted if band(r, splits) == i]) for i in range(len(splits) + 1)]


def describe(rule, splits):
    edges = ["-inf"] + ["%g" % s for s in splits] + ["inf"]
    return "; ".join("SNR %s..%s dB: A=%.1f B=%s" % (edges[i], edges[i + 1], a, "off" if b is None else "%.1f" % b)
                     for i, (a, b) in enumerate(rule))


def empty():
    return dict(right=0, right_asked=0, wrong=0, wrong_asked=0, rejected=0, total=0)


def tally(rows, asked):
    """Each row right or wrong, acted on or asked (`asked(row)`), or rejected."""
    c = empty()
    for r in rows:
        c["total"] += 1
        if r["outcome"] == "rejected":
            c["rejected"] += 1
        elif asked(r):
            c[r["outcome"] + "_asked"] += 1
        else:
            c[r["outcome"]] += 1
    return c


def score(rows, a, b):
    return tally(rows, lambda r: asks(r, a, b))


def cost(c):
    return 10 * c["wrong"] + c["right_asked"]


def choose(rows):
    best = None
    for a in MARGINS:
        for b in WEAKEST:
            c = score(rows, a, b)
            key = (cost(c), c["right_asked"] + c["wrong_asked"], a)
            if best is None or key < best[0]:
                best = (key, a, b)
    return best[1], best[2]


def table(title, counts, conds):
    print(title)
    print("%-14s %6s %8s %8s %7s %9s %8s %9s %8s" % (
        "condition", "right", "+asked", "success", "wrong", "averted", "reject", "wrong %", "asked %"))
    for cond in conds:
        c = counts[cond]
        n = c["total"]
        success = c["right"] + c["right_asked"]
        print("%-14s %6d %8d %7.1f%% %7d %9d %8d %8.1f%% %7.1f%%" % (
            cond, c["right"], c["right_asked"], 100 * success / n, c["wrong"], c["wrong_asked"], c["rejected"],
            100 * c["wrong"] / n, 100 * (c["right_asked"] + c["wrong_asked"]) / n))


def held_out(tune, report, splits, conds):
    """Each fold's rows under the rule chosen on the other folds' tuning rows."""
    held = {cond: empty() for cond in conds}
    chosen = []
    for k in range(FOLDS):
        rule = choose_rule([r for r in tune if r["fold"] != k], splits)
        chosen.append(rule)
        for cond in conds:
            c = score_rule([r for r in report if r["fold"] == k and r["cond"] == cond], rule, splits)
            for key in c:
                held[cond][key] += c[key]
    return held, chosen


VARIANTS = [("raw", ""), ("raw", "20"), ("raw", "25"), ("raw", "30"),
            ("margin", ""), ("margin", "20"), ("margin", "25"), ("margin", "30")]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("labels")
    p.add_argument("--tune", nargs="+", required=True)
    p.add_argument("--report", nargs="+", required=True)
    args = p.parse_args()
    labels = json.load(open(args.labels))

    # Which features and SNR bands: the variant with the lowest held-out
    # cost on the training noises alone (the report files play no part).
    print("Held-out cost (10 x wrong actions + asks of right commands) on the training noises, per variant:")
    best = None
    for basis, bands in VARIANTS:
        splits = [float(x) for x in bands.split()]
        tune = load(labels, args.tune, basis)
        conds = sorted({r["cond"] for r in tune})
        held, _ = held_out(tune, tune, splits, conds)
        total = sum(cost(c) for c in held.values())
        print("  %-6s bands %-4s cost %5d  (wrong %3d, right asked %4d)" % (
            basis, bands or "none", total, sum(c["wrong"] for c in held.values()),
            sum(c["right_asked"] for c in held.values())))
        if best is None or total < best[0]:
            best = (total, basis, splits)
    _, basis, splits = best
    print("Chosen: %s, SNR bands %s" % (basis, splits or "none"))
    print()

    tune = load(labels, args.tune, basis)
    report = load(labels, args.tune + args.report, basis)
    conds = []
    for r in report:
        if r["cond"] not in conds:
            conds.append(r["cond"])
    without = {}
    for cond in conds:
        without[cond] = score([r for r in report if r["cond"] == cond], -1e9, None)
    table("Without asking (every accepted command acted on):", without, conds)
    print()
    held, chosen = held_out(tune, report, splits, conds)
    print("Rules chosen on four folds of the training noises:")
    for rule in chosen:
        print("  " + describe(rule, splits))
    table("Asking, held out (each fold under the rule chosen without it):", held, conds)
    print()
    shipped = choose_rule(tune, splits)
    print("The rule chosen on all recordings of the training noises (shipped): " + describe(shipped, splits))
    # The shipped rule saw every recording (in the training noises), so its
    # figures are held out in the kind of noise only (kitchen), not in voices.
    table("Asking with the shipped rule:", {cond: score_rule([r for r in report if r["cond"] == cond], shipped, splits)
                                            for cond in conds}, conds)
    print()
    direct_mode(load(labels, args.tune + args.report, "raw"), conds)


# The daemon's AskRule() (ParleySpeech/AskRule.swift): (A, B) below 20 dB, at and above.
DAEMON_RULE, DAEMON_SPLITS = [(-0.3, -2.5), (0.0, -8.0)], [20.0]


def direct_mode(rows, conds):
    """Commands said without the wake word's name ("hey <command>", direct
    mode) under the daemon's rule: an unsure one in the noisy band is
    dropped, not asked (`ListeningOutcome.unaddressed`), so it is lost
    unless said again with the name. These decodes have no "hey" (the
    window's grammar): the orders stand for what follows it."""
    print("Said without the name (direct mode), the daemon's rule; unsure in its noisy band (< %g dB): dropped" % DAEMON_SPLITS[0])
    print("%-14s %6s %8s %8s %7s %9s %9s %8s" % (
        "condition", "right", "+asked", "success", "wrong", "dropped", "of them ok", "reject"))
    for cond in conds:
        c = dict(right=0, asked=0, wrong=0, dropped=0, dropped_right=0, rejected=0, total=0)
        for r in rows:
            if r["cond"] != cond:
                continue
            c["total"] += 1
            if r["outcome"] == "rejected":
                c["rejected"] += 1
                continue
            i = band(r, DAEMON_SPLITS)
            if not asks(r, *DAEMON_RULE[i]):
                c[r["outcome"]] += 1
            elif i == 0:
                c["dropped"] += 1
                c["dropped_right"] += r["outcome"] == "right"
            elif r["outcome"] == "right":
                c["asked"] += 1
        print("%-14s %6d %8d %7.1f%% %7d %9d %9d %8d" % (
            cond, c["right"], c["asked"], 100 * (c["right"] + c["asked"]) / c["total"], c["wrong"], c["dropped"],
            c["dropped_right"], c["rejected"]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Rejection while spoken (issue 27 item 4): choose EarlyRejection's first
look and margin, and report what they cost and save.

    early_reject.py LABELS.json DECODES_DIR

DECODES_DIR holds `parley understand --reject-early measure` output (one JSON
line per recording, with each decoded segment's looks: seconds fed, margin
of the words-so-far ratio over the threshold), from scripts/eval-early-reject.sh:
clean.jsonl, {babble,pink,clatter,kitchen}-{6,12,18}.jsonl, tv.jsonl.

The rule, fixed before the first run:
- An utterance is given up at the first look at or after FIRST seconds whose
  margin is below -MARGIN. A command whose accepted segment is given up is
  rejected instead: a right one is lost, a wrong one averted.
- Candidates: FIRST in 0.75, 1.0, 1.25, 1.5, 2.0 s; MARGIN from 0.5 to 6.0
  in steps of 0.25.
- Chosen on the training noises only (babble, pink, clatter at 6/12/18 dB
  and clean), over five folds of the recordings by voice
  (scripts/adapt/voice_folds.py's "FOLD FILE" lines in VOICE_FOLDS; without
  it, by recording): among the candidates that lose no right command of the
  training folds with 0.5 to spare (at MARGIN - 0.5), the one that leaves
  the most of the television's speech undecoded (the even 10 s pieces; the
  odd ones are reported). Kitchen noise is reported only.
"""
import json
import os
import sys

FIRSTS = [0.75, 1.0, 1.25, 1.5, 2.0]
MARGINS = [0.5 + 0.25 * i for i in range(23)]
TRAIN = ["clean"] + [f"{n}-{s}" for n in ("babble", "pink", "clatter") for s in (6, 12, 18)]
REPORT = [f"kitchen-{s}" for s in (18, 12, 6)]
SPARE = 0.5


def load(path):
    return [json.loads(line) for line in open(path)]


def verdict(row, labels):
    want = labels[os.path.basename(row["file"])]
    if row["intent"] is None:
        return "rejected"
    if row["intent"] == want["intent"] and all(row["slots"].get(k) == v.strip() for k, v in want["slots"].items()):
        return "right"
    return "wrong"


def gives_up(looks, first, margin):
    """Seconds fed when the utterance is given up, or None."""
    for t, m in looks:
        if t >= first and m < -margin:
            return t
    return None


def outcome(row, labels, first, margin):
    v = verdict(row, labels)
    if v != "rejected" and gives_up(row["looks"], first, margin) is not None:
        return {"right": "lost", "wrong": "averted"}[v]
    return v


def tv_saving(rows, first, margin):
    """Share of the decoded television speech left undecoded."""
    total = saved = 0.0
    for row in rows:
        for (start, end), looks in zip(row["segments"], row["segment_looks"]):
            length = end - start
            total += length
            t = gives_up(looks, first, margin)
            if t is not None:
                saved += max(0.0, length - t)
    return saved / total if total else 0.0


def folds(names):
    groups = os.environ.get("VOICE_FOLDS")
    if groups:
        fold_of = {}
        for line in open(groups):
            fold, path = line.split()
            fold_of[os.path.basename(path)] = int(fold)
        return {n: fold_of[n] for n in names}
    ordered = sorted(names)
    return {n: i % 5 for i, n in enumerate(ordered)}


def choose(train_rows, labels, tv_rows):
    best = None
    for first in FIRSTS:
        for margin in MARGINS:
            lost = sum(1 for row in train_rows if outcome(row, labels, first, margin - SPARE) == "lost")
            if lost:
                continue
            saving = tv_saving(tv_rows, first, margin)
            if best is None or saving > best[0] + 1e-12:
                best = (saving, first, margin)
    return best


def main():
    labels = json.load(open(sys.argv[1]))
    d = sys.argv[2]
    decodes = {name: load(os.path.join(d, name + ".jsonl")) for name in TRAIN + REPORT}
    tv = load(os.path.join(d, "tv.jsonl"))
    tv_even = [r for r in tv if int(os.path.basename(r["file"])[5:8]) % 2 == 0]
    tv_odd = [r for r in tv if int(os.path.basename(r["file"])[5:8]) % 2 == 1]
    names = [os.path.basename(r["file"]) for r in decodes["clean"]]
    fold_of = folds(names)

    def rows(conditions, keep):
        return [r for c in conditions for r in decodes[c] if keep(fold_of[os.path.basename(r["file"])])]

    print("held out over 5 folds (training noises; choice on the other four folds):")
    counts = {}
    for k in range(5):
        saving, first, margin = choose(rows(TRAIN, lambda f: f != k), labels, tv_even)
        print(f"  fold {k}: first {first:.2f} s, margin {margin:.2f}: television undecoded {100 * saving:.1f}% (even pieces)")
        for c in TRAIN:
            for r in decodes[c]:
                if fold_of[os.path.basename(r["file"])] == k:
                    o = outcome(r, labels, first, margin)
                    counts.setdefault(c, {}).setdefault(o, 0)
                    counts[c][o] += 1
    print(f"  {'condition':<12} {'right':>5} {'lost':>5} {'wrong':>5} {'averted':>7} {'rejected':>8}")
    for c in TRAIN:
        n = counts[c]
        print(f"  {c:<12} {n.get('right', 0):>5} {n.get('lost', 0):>5} {n.get('wrong', 0):>5} {n.get('averted', 0):>7} {n.get('rejected', 0):>8}")

    saving, first, margin = choose(rows(TRAIN, lambda f: True), labels, tv_even)
    print(f"chosen on every training recording: first {first:.2f} s, margin {margin:.2f}")
    print(f"  television undecoded: even pieces {100 * saving:.1f}% (chosen on), odd pieces {100 * tv_saving(tv_odd, first, margin):.1f}% (reported)")
    print(f"  {'condition':<12} {'right':>5} {'lost':>5} {'wrong':>5} {'averted':>7} {'rejected':>8}   (reported only)")
    for c in ["clean"] + REPORT:
        n = {}
        for r in decodes[c]:
            o = outcome(r, labels, first, margin)
            n[o] = n.get(o, 0) + 1
        print(f"  {c:<12} {n.get('right', 0):>5} {n.get('lost', 0):>5} {n.get('wrong', 0):>5} {n.get('averted', 0):>7} {n.get('rejected', 0):>8}")
    print("  the lowest look from each time on: right training commands (lowest, 1st percentile) against")
    print("  television utterances longer than that plus 1 s (lowest, median, highest):")
    for f in (1.0, 1.5, 2.0, 3.0):
        right = sorted(min([m for t, m in r["looks"] if t >= f] or [float("inf")])
                       for c in TRAIN for r in decodes[c] if verdict(r, labels) == "right")
        right = [m for m in right if m != float("inf")]
        tvs = sorted(min(m for t, m in looks if t >= f) for r in tv for (a, b), looks in zip(r["segments"], r["segment_looks"])
                     if b - a > f + 1 and any(t >= f for t, _ in looks))
        print(f"    from {f:.1f} s: right {right[0]:.2f}, {right[len(right) // 100]:.2f}; television "
              + (f"{tvs[0]:.2f}, {tvs[len(tvs) // 2]:.2f}, {tvs[-1]:.2f} ({len(tvs)} utterances)" if tvs else "none"))
    tight = min((m for c in TRAIN for r in decodes[c] if verdict(r, labels) == "right"
                 for t, m in r["looks"] if t >= first), default=None)
    print(f"  lowest look of a right training command from {first:.2f} s: {tight:.2f}")


if __name__ == "__main__":
    main()

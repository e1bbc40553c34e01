#!/usr/bin/env bash
# Cross-validated tuning of the endpointer's noise settings (issue 15,
# "Endpointing in noise"). The settings are chosen on training noises only
# (scripts/adapt/make-noises.py: babble, pink, brown, clatter, white; the
# evaluation noise ../shared/data/noise/kitchen.wav is never used to choose)
# and on four of five folds of the coffee-maker recordings (fold of a file:
# int(sha256(name)[:8], 16) % 5, as training/bin/eval-adapt.sh). Each fold's
# choice is then measured on its held-out recordings mixed with the kitchen
# noise; the pooled held-out table is printed.
#
#   training/bin/eval-endpoint-cv.sh
#   GRID_LEARNING="belowContinue deferredInRuns" GRID_START="10 13" GRID_VOICED="2" GRID_NOISY="0 25" \
#     SNRS=6,12,18,24 training/bin/eval-endpoint-cv.sh
#
# The grid (defaults below) is: which frames teach the noise model
# (--noise-learning), the start margin (--start-db), voiced onset frames
# (--onset-voiced) and the noisy-segment peak margin (--noisy-peak-db).
#
# Objective on the training side: the mean share of "one segment with all
# speech" over the noises and SNRs (6, 12, 18, 24 dB), among settings that keep the
# clean share; ties go to the setting listed first. Release build;
# python3 with numpy (make-noises.py).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley-bench
temp_work
training_noises "$work/noise"
snrs=${SNRS:-6,12,18,24}
for learning in ${GRID_LEARNING:-always belowContinue deferredInRuns}; do
for start in ${GRID_START:-10 12 13}; do
for voiced in ${GRID_VOICED:-2 3}; do
for noisy in ${GRID_NOISY:-0 25}; do
  name="learning=$learning start=$start voiced=$voiced noisy-peak=$noisy"
  for noise in "$work"/noise/*.wav "$PARLEY_SHARED_DATA"/noise/kitchen.wav; do
    .build/release/parley-bench audio endpoint --outcomes --snrs "$snrs" --noise "$noise" \
      --noise-learning "$learning" --start-db "$start" --onset-voiced "$voiced" --noisy-peak-db "$noisy" |
      sed "s|^{|{\"setting\":\"$name\",\"noise\":\"$(basename "$noise" .wav)\",|"
  done
done
done
done
done >"$work/outcomes.jsonl"
python3 - "$work/outcomes.jsonl" <<'PY'
import collections, hashlib, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
fold = lambda f: int(hashlib.sha256(f.encode()).hexdigest()[:8], 16) % 5
settings = list(dict.fromkeys(r["setting"] for r in rows))
def share(rs, key): return sum(r[key] for r in rs) / max(1, len(rs))
held = collections.defaultdict(list)   # condition -> held-out kitchen rows of the chosen settings
for k in range(5):
    train = [r for r in rows if fold(r["file"]) != k and r["noise"] != "kitchen"]
    by = collections.defaultdict(list)
    for r in train: by[r["setting"]].append(r)
    clean = {s: share([r for r in by[s] if r["condition"] == "clean"], "one") for s in settings}
    best_clean = max(clean.values())
    score = {s: share([r for r in by[s] if r["condition"] != "clean"], "one") for s in settings}
    choice = max((s for s in settings if clean[s] >= best_clean - 1e-9), key=lambda s: score[s])
    print("fold %d: chose %s (training one-segment in noise %.1f%%, clean %.1f%%)" % (k, choice, 100 * score[choice], 100 * clean[choice]))
    for r in rows:
        if r["setting"] == choice and r["noise"] == "kitchen" and fold(r["file"]) == k:
            held[r["condition"]].append(r)
print("held-out, kitchen noise, each fold's choice:")
print("| condition | recordings | one segment with all speech | some segment | first utterance (lead-in) | end delay median | p90 |")
print("|---|---|---|---|---|---|---|")
order = ["clean"] + sorted({r["condition"] for r in rows} - {"clean"}, key=lambda c: int(c.split()[0]))
for c in order:
    rs = held[c]; d = sorted(r["delay"] for r in rs if r["delay"] >= 0)
    pct = lambda p: d[min(len(d) - 1, int(round((len(d) - 1) * p)))] * 1000 if d else float("nan")
    print("| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.0f ms | %.0f ms |" % (c, len(rs), 100 * share(rs, "one"), 100 * share(rs, "some"), 100 * share(rs, "first"), pct(0.5), pct(0.9)))
print("training-noise mean one-segment share per setting (all recordings):")
for s in settings:
    rs = [r for r in rows if r["setting"] == s and r["noise"] != "kitchen" and r["condition"] != "clean"]
    print("  %s: %.1f%%" % (s, 100 * share(rs, "one")))
PY

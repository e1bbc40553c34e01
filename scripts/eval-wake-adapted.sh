#!/usr/bin/env bash
# The wake word with an acoustic model adapted for it in noise (issue 27 item
# 3), kept apart from the commands' model: for each of the 5 folds of
# scripts/wake/cv.py, Debian's en-us model is adapted (scripts/adapt-model.sh,
# the shipped model's recipe: MAP, tau 100, all parts) on the other folds'
# recordings of "computer", clean and mixed with babble, pink and clatter at
# 5, 10 and 20 dB; the fold left out is decoded with it, and
# scripts/wake/adapted.py compares it with the stock model at <= 0.1 false
# wakes per hour, thresholds set on the training folds.
#
#   scripts/eval-wake-adapted.sh
#
# Decodes with scripts/eval-wake-cv.sh (its WORK cache, default
# .build/wake-cv): every adapted model decodes the positives (clean, the three
# training noises and kitchen.wav at 10 dB), the negatives and the noisy
# negatives of scripts/eval-wake-second-stage.sh, which must have run first
# (it decodes the stock model's). Models go to WORK/adapted/model-K.
# Environment: WORK, JOBS (2), FOLD_BY (take, the default: the folds of
# scripts/wake/cv.py, which keep a take together but not a voice; voice:
# scripts/adapt/voice_folds.py's folds, which keep each voice in one fold,
# models in WORK/adapted/voice-model-K).
set -euo pipefail
main() {
cd "$(dirname "$0")/.."
. scripts/lib/evaluation-data.sh
build_release parley parley-bench
work=${WORK:-.build/wake-cv}
jobs=${JOBS:-2}
py=/usr/bin/python3
positives=$PARLEY_SHARED_DATA/wake-computer/clean
export PARLEY_SKIP_BUILD=1 WORK=$work JOBS=$jobs PLOT=""
. scripts/wake/scores-key.sh
stock_key=$key
[ -d "$work/scores/$stock_key/negatives-noise" ] || { echo "eval-wake-adapted: run scripts/eval-wake-second-stage.sh first (the stock model's noisy negatives)" >&2; exit 1; }
fold_by=${FOLD_BY:-take}
mkdir -p "$work/adapted"
folds_file=""
case $fold_by in
  take) prefix="" ;;
  voice) prefix="voice-"; folds_file=$work/adapted/voice-folds.txt
    [ -s "$folds_file" ] || nice -n 10 "$py" scripts/adapt/voice_folds.py 5 "$positives"/*.wav > "$folds_file" ;;
  *) echo "FOLD_BY=$fold_by: expected take or voice" >&2; exit 2 ;;
esac
# Transcripts and each fold's training recordings.
"$py" - "$positives" "$work/adapted" "$prefix" "$folds_file" <<'EOF'
import os, sys
sys.path.insert(0, "scripts/wake")
import cv
folder, out, prefix, folds_file = sys.argv[1:]
folds = cv.positive_folds(folder, folds_file or None)
with open(os.path.join(out, "transcripts.tsv"), "w") as t:
    for n in sorted(folds):
        t.write(f"{folder}/{n}\tcomputer\n")
for k in range(cv.FOLDS):
    with open(os.path.join(out, f"{prefix}train-{k}.list"), "w") as f:
        f.writelines(f"{folder}/{n}\n" for n in sorted(folds) if folds[n] != k)
EOF
adapted=()
for k in 0 1 2 3 4; do
  model=$work/adapted/${prefix}model-$k
  if [ ! -f "$model/ADAPTED.txt" ]; then
    mapfile -t files < "$work/adapted/${prefix}train-$k.list"
    METHOD=map TAU=100 MAP_PARTS=all TRANSCRIPTS=$work/adapted/transcripts.tsv \
      CONDITIONS="clean babble:5 babble:10 babble:20 pink:5 pink:10 pink:20 clatter:5 clatter:10 clatter:20" \
      scripts/adapt-model.sh "$model" "${files[@]}" >&2
  fi
  export SET="hmm=$model"
  for c in none babble pink clatter kitchen; do
    echo "== fold $k: $c" >&2
    NOISE=$c SNR=10 scripts/eval-wake-cv.sh >/dev/null
  done
  . scripts/wake/scores-key.sh
  adapted+=("$work/scores/$key")
  scripts/wake/noisy-negatives.sh "$work" "$work/scores/$key/negatives-noise/1e-60"
  unset SET
done
"$py" scripts/wake/adapted.py --work "$work" --stock "$work/scores/$stock_key" --adapted "${adapted[@]}" --positives "$positives" \
  ${folds_file:+--folds "$folds_file"}
}
main "$@"

#!/usr/bin/env bash
# The wake word's speech_embedding heads (wake.detector: embedding), end to end
# from a fresh clone: the training package's environment (training/setup.sh),
# the training noises, then one of
#
#   training/bin/train-wake.sh computer   # the shipped head, model/wake/computer.embedding.json
#                                    # (threshold 5.1, THRESHOLD=...), its DET curve:
#                                    # features of ../shared/data, folds by voice (the
#                                    # figures in BENCHMARKS.md), then trained on everything
#   training/bin/train-wake.sh NAME [OUT] # any other name from synthetic voices and the
#                                    # negative bank (what `parley wake train NAME` runs);
#                                    # OUT defaults to /var/lib/parley/wake/NAME.embedding.json
#
# Deterministic (fixed seeds, pinned requirements in training/requirements.txt).
# Environment: WORK (default /var/cache/parley/wake-train), PARLEY_SHARED_DATA
# (default ../shared/data). About 20 min for computer on 2 cores (five heads a fold), 3-5 min for a name.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$(echo "${1:?usage: training/bin/train-wake.sh NAME [OUT]}" | tr 'A-Z' 'a-z')
work=${WORK:-/var/cache/parley/wake-train}
data=${PARLEY_SHARED_DATA:-../shared/data}
py=$(bash training/setup.sh)
export PYTHONPATH=training PARLEY_SPEECH_EMBEDDING_DIR=${PARLEY_SPEECH_EMBEDDING_DIR:-/usr/local/share/parley/speech-embedding}
mkdir -p "$work"
if [ ! -f "$work/noises/white.wav" ]; then
  "$py" scripts/adapt/make-noises.py "$work/noises" >&2
  if [ -d "$data/coffee-maker/clean" ]; then "$py" -m parley_training.recorded_noises "$work/noises" "$data/coffee-maker/clean" >&2; fi
fi
if [ "$name" = computer ] && [ -z "${2:-}" ]; then
  [ -d "$data/wake-computer/clean" ] || { echo "train-wake.sh: $data/wake-computer/clean missing (PARLEY_SHARED_DATA)" >&2; exit 1; }
  "$py" -m parley_training.build_features "$work/features" "$data" "$work/noises"
  "$py" -m parley_training.voice_folds 5 "$data"/wake-computer/clean/*.wav > "$work/voice-folds.txt"
  # Five heads (seeds 10 apart) averaged, per fold and shipped (issue 50, BENCHMARKS.md).
  "$py" -m parley_training.wake_cv "$work/features" "$data" "$work/voice-folds.txt" --dropout 0.3 --members 5 \
    --threshold "${THRESHOLD:-5.1}" --ship model/wake/computer.embedding.json | tee "$work/cv-computer.txt"
  # The held-out table and its DET curve, as committed (a training test redraws
  # the plot from the table and fails when the two disagree).
  cp "$work/cv-computer.txt" training/tests/fixtures/wake-cv-table.txt
  "$py" -m parley_training.det_plot "$work/cv-computer.txt" docs/wake-det-embedding.svg
else
  out=${2:-/var/lib/parley/wake/$(echo "$name" | tr ' ' '-').embedding.json}
  mkdir -p "$(dirname "$out")"
  extra=()
  [ -d "$data/wake-other" ] && extra=(--data "$data")
  "$py" -m parley_training.train_name "$name" "$out" --work "$work" --noises "$work/noises" "${extra[@]}"
fi

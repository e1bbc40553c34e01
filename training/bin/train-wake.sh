#!/usr/bin/env bash
# The wake word's speech_embedding heads (wake.detector: embedding), end to end
# from a fresh clone: the training package's environment (training/setup.sh),
# the training noises, then one of
#
#   training/bin/train-wake.sh computer   # the shipped head, model/wake/computer.embedding.json
#                                    # (threshold 4.2, THRESHOLD=...), its DET curve:
#                                    # features of ../shared/data, folds by voice (the
#                                    # figures in BENCHMARKS.md), then trained on everything
#   training/bin/train-wake.sh NAME [OUT] # any other name from synthetic voices and the
#                                    # negative bank (what `parley wake train NAME` runs);
#                                    # OUT defaults to /var/lib/parley/wake/NAME.embedding.json
#
# Deterministic (fixed seeds, pinned requirements in training/requirements.txt).
# Environment: WORK (default /var/cache/parley/wake-train), PARLEY_SHARED_DATA
# (default ../shared/data). About 40 min for computer on 2 cores (features, five heads a fold, pinned to one thread), 3-5 min for a name.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$(echo "${1:?usage: training/bin/train-wake.sh NAME [OUT]}" | tr 'A-Z' 'a-z')
work=${WORK:-/var/cache/parley/wake-train}
data=${PARLEY_SHARED_DATA:-../shared/data}
py=$(bash training/setup.sh)
export PYTHONPATH=training PARLEY_SPEECH_EMBEDDING_DIR=${PARLEY_SPEECH_EMBEDDING_DIR:-/usr/local/share/parley/speech-embedding}
# The same float32 arithmetic on every x86-64 machine: numpy's OpenBLAS picks
# its matrix kernels by CPU, and they sum in other orders (measured 2026-12-06:
# two epochs of a head gave other weights under this machine's own kernel,
# Haswell's and SkylakeX's, and Haswell's differ between one thread and
# two). Pinned to one kernel and one thread, features and heads alike.
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} OPENBLAS_NUM_THREADS=1
mkdir -p "$work"
if [ ! -f "$work/noises/white.wav" ]; then
  "$py" scripts/adapt/make-noises.py "$work/noises" >&2
  if [ -d "$data/coffee-maker/clean" ]; then "$py" -m parley_training.recorded_noises "$work/noises" "$data/coffee-maker/clean" >&2; fi
fi
if [ "$name" = computer ] && [ -z "${2:-}" ]; then
  [ -d "$data/wake-computer/clean" ] || { echo "train-wake.sh: $data/wake-computer/clean missing (PARLEY_SHARED_DATA)" >&2; exit 1; }
  # The long negatives (synthetic prose, folds 0-3 trained on, as the keyword
  # network's; fold 4 held out for training/bin/eval-wake-long.sh) and their
  # 10 dB copies: lib.sh's rule, with Debian's python3 (its docstrings are the text).
  venv_py=$py
  . training/bin/lib.sh
  build_release parley-bench
  make_long_negatives "$work/negatives-long"
  long_negatives_10db "$work/negatives-long" "$work/negatives-long-10db"
  py=$venv_py
  "$py" -m parley_training.build_features "$work/features" "$data" "$work/noises" \
    --long "$work/negatives-long" "$work/negatives-long-10db"
  "$py" -m parley_training.voice_folds 5 "$data"/wake-computer/clean/*.wav > "$work/voice-folds.txt"
  # Five heads (seeds 10 apart) averaged, per fold and shipped (issue 50, BENCHMARKS.md).
  "$py" -m parley_training.wake_cv "$work/features" "$data" "$work/voice-folds.txt" --dropout 0.3 --members 5 \
    --long-train-folds 0,1,2,3 --positive-weight 2 --threshold "${THRESHOLD:-4.2}" --ship model/wake/computer.embedding.json | tee "$work/cv-computer.txt"
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

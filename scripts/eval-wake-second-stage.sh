#!/usr/bin/env bash
# A second stage for the wake word in noise (issue 27 item 3): a small
# classifier over stage 2's evidence per candidate (scripts/wake/second_stage.py
# states the rule), trained on folds of the development positives mixed with
# the training noises at 5-20 dB, measured on the folds left out.
#
#   scripts/eval-wake-second-stage.sh
#
# Decodes what is not cached yet, with scripts/eval-wake-cv.sh (its WORK
# cache): the positives clean, with babble, pink and clatter at 5, 10, 15 and
# 20 dB, and with kitchen.wav at 10 dB (reported only); the negatives; and the
# noisy negatives, the clean coffee orders and espeak-ng prose of each fold
# mixed at 10 dB with one training noise (fold k: babble, pink, clatter for
# k mod 3), from 1000 s noises (scripts/adapt/make-noises.py). Then prints the
# held-out tables, writes the DET plot (PLOT, default
# docs/wake-det-second-stage.svg) and the model fitted on all folds (MODEL,
# default none: a path writes its JSON there).
# Environment: WORK (default .build/wake-cv), JOBS (2).
set -euo pipefail
main() {
cd "$(dirname "$0")/.."
. scripts/lib/evaluation-data.sh
build_release parley-bench
work=${WORK:-.build/wake-cv}
jobs=${JOBS:-2}
py=/usr/bin/python3
export PARLEY_SKIP_BUILD=1 WORK=$work JOBS=$jobs
PLOT="" NOISE=none scripts/eval-wake-cv.sh >/dev/null
for snr in 5 10 15 20; do
  for noise in babble pink clatter; do
    echo "== $noise $snr dB" >&2
    PLOT="" NOISE=$noise SNR=$snr scripts/eval-wake-cv.sh >/dev/null
  done
done
PLOT="" NOISE=kitchen SNR=10 scripts/eval-wake-cv.sh >/dev/null
. scripts/wake/scores-key.sh
scripts/wake/noisy-negatives.sh "$work" "$work/scores/$key/negatives-noise/1e-60"
"$py" scripts/wake/second_stage.py --work "$work" --scores "$work/scores/$key" \
  --positives "$PARLEY_SHARED_DATA/wake-computer/clean" --plot "${PLOT-docs/wake-det-second-stage.svg}" ${MODEL:+--out "$MODEL"}
}
main "$@"

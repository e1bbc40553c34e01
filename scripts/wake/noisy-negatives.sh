#!/usr/bin/env bash
# The noisy negatives of the wake-word evaluations (issue 27 item 3): the
# clean coffee orders and espeak-ng prose of each fold of
# scripts/wake/make-negatives.py, mixed at 10 dB with one training noise
# (fold k: babble, pink, clatter for k mod 3; 1000 s noises of
# scripts/adapt/make-noises.py in WORK/noise-long), decoded by
# `parley-bench speech-wake-scores` into OUT (one JSON line per file, named
# KIND-NOISE10-foldK.jsonl); files already there are kept.
#
#   scripts/wake/noisy-negatives.sh WORK OUT
#
# Environment: JOBS (2), SET (decoder overrides, as scripts/eval-wake-cv.sh).
set -euo pipefail
work=${1:?usage: noisy-negatives.sh WORK OUT}
out=${2:?usage: noisy-negatives.sh WORK OUT}
cd "$(dirname "$0")/../.."
[ -f "$work/noise-long/clatter.wav" ] || nice -n 10 /usr/bin/python3 scripts/adapt/make-noises.py "$work/noise-long" 1000 >/dev/null
mkdir -p "$out"
noises=(babble pink clatter)
set_args=()
for o in ${SET:-}; do set_args+=(--set "$o"); done
export SET_ARGS="${set_args[*]}"
for kind in coffee-clean espeak-clean; do
  for k in 0 1 2 3 4; do
    n=${noises[$((k % 3))]}
    name=$out/$kind-${n}10-fold$k
    [ -s "$name.jsonl" ] || echo "$name $work/noise-long/$n.wav $work/negatives/$kind-fold$k.wav"
  done
done | xargs -r -P "${JOBS:-2}" -L 1 sh -c 'name=$1
    nice -n 10 .build/release/parley-bench speech-wake-scores $SET_ARGS --noise "$2" --snr 10 "$3" > "$name.jsonl.part" &&
    mv "$name.jsonl.part" "$name.jsonl"' sh-job

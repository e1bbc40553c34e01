#!/usr/bin/env bash
# Trains the wake word's keyword network the daemon ships
# (model/wake/computer.json) by the rule of training/parley_training/kws.py's fold runs:
# all 80 development recordings of "computer" and 500 espeak-ng voices,
# the negatives of folds 0-3 (training/parley_training/negatives.py and the long
# ones of training/parley_training/long_negatives.py), the training noises
# (synthetic and recorded, training/parley_training/recorded_noises.py); fold
# 4's negatives (9.7 h with their noisy copies, never trained on) set the
# threshold. Then
# writes the Python reference scores the Swift port's test holds
# KeywordSpotter to (Tests/Fixtures/wake-computer/kws-scores.jsonl).
#
#   training/bin/train-wake-kws.sh
#
# Needs ../shared/data (the recordings; PARLEY_SHARED_DATA); about 10 min on
# 2 cores (and 4 min to make the long negatives the first time). Environment: WORK (default .build/wake-cv), OUT (default
# model/wake/computer.json).
set -euo pipefail
main() {
. "$(dirname "$0")/lib.sh"
kws_inputs
out=${OUT:-model/wake/computer.json}
mkdir -p "$(dirname "$out")"
nice -n 10 "$py" -m parley_training.kws train --work "$work" --positives "$data/wake-computer/clean" \
  --noises "$work/noise" --recorded-noises "$recorded_noises" --more-negatives "$long_negatives" --out "$out"
[ "$out" = model/wake/computer.json ] || return 0
fixtures=Tests/Fixtures
{
  printf '{"model_sha256": "%s"}\n' "$(sha256sum "$out" | cut -d' ' -f1)"
  "$py" -m parley_training.kws score --model "$out" \
    "$fixtures"/wake-computer/clean/0386da81-9db7-499c-b4f8-910beec53c23.wav \
    "$fixtures"/wake-computer/clean/157d6e9a-6754-4621-b59f-bf5a198e38c4.wav \
    "$fixtures"/coffee-maker/clean/0075d273-51bb-47cb-b323-4437bd0de029.wav \
    "$fixtures"/noise/kitchen-20s.wav
} > "$fixtures/wake-computer/kws-scores.jsonl"
echo "reference scores: $fixtures/wake-computer/kws-scores.jsonl"
}
main "$@"

#!/usr/bin/env bash
# A small keyword network for "computer" (issue 27 item 3), trained and
# measured by folds: training/parley_training/kws.py's rule (its header), the held-out
# table, docs/wake-det-kws.svg.
#
#   training/bin/eval-wake-kws.sh
#
# Uses the negatives and training noises of training/bin/eval-wake-cv.sh (made
# here when missing, in WORK, default .build/wake-cv), the long negatives
# of training/parley_training/long_negatives.py (10 h of espeak-ng and flite
# speech, made here when missing; LONG_NEGATIVES=none leaves them out, as
# the runs before 2026-12-01), the recorded training noises of
# training/parley_training/recorded_noises.py (RECORDED_NOISES=none leaves them out, as
# the runs before 2026-12-02) and ../shared/data/wake-computer/clean;
# kitchen.wav is only reported. No
# PocketSphinx decoding: the network's features are computed in Python.
# Environment: WORK, FOLDS (default 0,1,2,3,4), PLOT (default
# docs/wake-det-kws.svg; "" writes none), KWS_ARGS (more kws.py options,
# e.g. "--features log"), FOLD_BY=voice (the positives' folds by voice,
# training/parley_training/voice_folds.py, instead of by take: no voice on both sides).
set -euo pipefail
main() {
. "$(dirname "$0")/lib.sh"
kws_inputs
plot=${PLOT-docs/wake-det-kws.svg}
more=$long_negatives
[ "${LONG_NEGATIVES:-}" = none ] && more=""
recorded=$recorded_noises
[ "${RECORDED_NOISES:-}" = none ] && recorded=""
folds_file=""
if [ "${FOLD_BY:-take}" = voice ]; then
  folds_file=$work/kws-voice-folds.txt
  [ -s "$folds_file" ] || nice -n 10 "$py" -m parley_training.voice_folds 5 "$data"/wake-computer/clean/*.wav > "$folds_file"
fi
# shellcheck disable=SC2086  # KWS_ARGS is a list of options
nice -n 10 "$py" -m parley_training.kws eval --work "$work" --positives "$data/wake-computer/clean" \
  --noises "$work/noise" ${recorded:+--recorded-noises "$recorded"} ${more:+--more-negatives "$more"} --kitchen "$data/noise/kitchen.wav" --folds "${FOLDS:-0,1,2,3,4}" \
  ${plot:+--plot "$plot"} ${folds_file:+--folds-file "$folds_file"} --json-report "$work/kws-report${FOLD_BY:+-$FOLD_BY}.json" ${KWS_ARGS:-}
}
main "$@"

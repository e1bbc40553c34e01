#!/usr/bin/env bash
# Asking when unsure (issue 26 item 3): every coffee order of
# ../shared/data/coffee-maker decoded by `parley understand` (the daemon's
# path: endpointer, streaming decoder, rejection) clean, in the training
# noises (babble, pink, clatter at 6, 12 and 18 dB) and in kitchen noise
# (6, 12, 18 dB: reported only, never used for choosing), then
# training/parley_training/ask_rule.py: each recording right, wrong or rejected;
# the ask rule (`AskRule`) chosen on five folds of the training noises,
# reported held out as right (acted on), right after the question (task
# success within one extra turn), wrong actions, wrong ones averted by the
# question, rejected. Also prints which rule the daemon should ship.
#
#   training/bin/eval-confidence.sh
#
# Environment: WORK (keep mixes and decodes there; reused by later runs),
# MODEL (stock), DECODE_SET (one more decoder setting, as eval-front-end.sh).
# Release build; run from the package root.
set -euo pipefail
main() {
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
work_folder
export WORK=$work PARLEY_SKIP_BUILD=1 FRONT_ENDS=none REMOVE_NOISE=yes ECHO=off MODEL=${MODEL:-stock}
NOISES="babble pink clatter" SNRS="6 12 18" training/bin/eval-front-end.sh
NOISES=kitchen SNRS="clean 6 12 18" training/bin/eval-front-end.sh
d=$work/decodes x=${DECODE_SET:+-$DECODE_SET}
/usr/bin/python3 -m parley_training.ask_rule "$PARLEY_SHARED_DATA/coffee-maker/labels.json" \
  --tune "$d"/babble-{6,12,18}-none-yes$x.jsonl "$d"/pink-{6,12,18}-none-yes$x.jsonl "$d"/clatter-{6,12,18}-none-yes$x.jsonl \
         "$d"/kitchen-clean-none-yes$x.jsonl \
  --report "$d"/kitchen-{6,12,18}-none-yes$x.jsonl
}
main "$@"

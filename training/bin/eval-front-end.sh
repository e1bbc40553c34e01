#!/usr/bin/env bash
# The capture front end (issue 26) against none: `parley understand
# --front-end X` on ../shared/data/coffee-maker, clean and mixed with noise,
# with PocketSphinx's own noise removal (-remove_noise) on and off. Each
# recording is scored right (intent and every labelled slot), wrong (an
# intent acted on that is not the labelled one, or a slot value that
# differs) or rejected (nothing understood).
#
#   training/bin/eval-front-end.sh                       the training noises (tuning)
#   NOISES=kitchen training/bin/eval-front-end.sh        the check on kitchen.wav (never for choosing)
#
# Environment: NOISES (training noises of scripts/adapt/make-noises.py:
# "babble pink clatter" by default; "kitchen" is ../shared/data/noise/kitchen.wav),
# SNRS ("6 12 18"; "clean" for no noise), FRONT_ENDS ("none denoise denoise+agc"),
# REMOVE_NOISE ("yes no"), MODEL (stock), WORK (keep mixes and decodes there),
# ECHO ("off"; e.g. "off on": the echo canceller as it runs while the device
# is silent, issue 28: what it does to a person speaking to a quiet device),
# DECODE_SET (one more decoder setting for `parley understand --set`, e.g.
# "loop_ds=2"; its decodes are kept under names of their own).
# Prints one line per condition: noise snr front_end remove_noise echo right wrong rejected.
# Release build; run from the package root.
set -euo pipefail
main() {
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
data=$PARLEY_SHARED_DATA/coffee-maker
work_folder
noises=${NOISES:-babble pink clatter}
training_noises "$work/noise"
printf '%-8s %-5s %-12s %-6s %-6s %6s %6s %6s\n' noise snr front_end rm_noise echo right wrong reject
for noise in $noises; do
  if [ "$noise" = kitchen ]; then noise_file=../shared/data/noise/kitchen.wav; else noise_file=$work/noise/$noise.wav; fi
  for snr in ${SNRS:-6 12 18}; do
    if [ "$snr" = clean ]; then
      files=("$data"/clean/*.wav)
    else
      dir=$work/audio/$noise-$snr
      [ -d "$dir" ] || .build/release/parley-bench audio mix --noise "$noise_file" --snr "$snr" --out "$dir" "$data"/clean/*.wav >/dev/null
      files=("$dir"/*.wav)
    fi
    for front in ${FRONT_ENDS:-none denoise denoise+agc}; do
      for rm in ${REMOVE_NOISE:-yes no}; do
       for echo in ${ECHO:-off}; do
        # Without the echo canceller the decodes keep their earlier names (a WORK folder stays valid).
        out=$work/decodes/$noise-$snr-$front-$rm$([ "$echo" = off ] || echo "-echo-$echo")${DECODE_SET:+-$DECODE_SET}.jsonl
        mkdir -p "$work/decodes"
        [ -s "$out" ] || .build/release/parley understand --app coffee-maker --acoustic-model "${MODEL:-stock}" \
          --front-end "$front" --set "remove_noise=$rm" ${DECODE_SET:+--set "$DECODE_SET"} --echo-cancel "$echo" "${files[@]}" > "$out"
        python3 - "$data/labels.json" "$out" "$noise" "$snr" "$front" "$rm" "$echo" <<'PY'
import json, os, sys
labels = json.load(open(sys.argv[1])); right = wrong = rejected = 0
for line in open(sys.argv[2]):
    r = json.loads(line); want = labels[os.path.basename(r["file"])]
    if r["intent"] is None: rejected += 1
    elif r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items()): right += 1
    else: wrong += 1
print("%-8s %-5s %-12s %-6s %-6s %6d %6d %6d" % (sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], right, wrong, rejected))
PY
       done
      done
    done
  done
done
}
main "$@"

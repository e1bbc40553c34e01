#!/usr/bin/env bash
# The `parley understand` contract end to end on the coffee-maker recordings:
# endpointing, recognition and ParleyCore's resolver, scored as published
# (intent right, every labelled slot exact, leading spaces stripped).
#
#   training/bin/eval-understand.sh                       clean recordings
#   SNRS="clean 24 12 6" training/bin/eval-understand.sh  also mixed with kitchen noise
#   APP=soup-chef training/bin/eval-understand.sh         false acceptance (any intent is wrong)
#
# Noise is mixed the published way by `parley-bench audio mix` into a
# temporary folder (the shared recordings are never copied into the project).
# Extra arguments go to `parley understand` (e.g. --set beam=1e-60).
# Release build; run from the package root. Needs python3 for the scoring.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
data=$PARLEY_SHARED_DATA/coffee-maker
app=${APP:-coffee-maker}
temp_work
for snr in ${SNRS:-clean}; do
  if [ "$snr" = clean ]; then
    files=("$data"/clean/*.wav)
  else
    .build/release/parley-bench audio mix --snr "$snr" --out "$work/$snr" "$data"/clean/*.wav
    files=("$work/$snr"/*.wav)
  fi
  .build/release/parley understand --app "$app" "$@" "${files[@]}" | python3 -c '
import json, os, sys
labels = json.load(open(sys.argv[1])); snr = sys.argv[2]; expect_nothing = sys.argv[3] != "coffee-maker"
ok = total = 0; audio = decode = 0.0
for line in sys.stdin:
    r = json.loads(line); total += 1
    audio += r["audio_seconds"]; decode += r["decode_seconds"]
    want = labels[os.path.basename(r["file"])]
    if expect_nothing:
        good = r["intent"] is None
    else:
        good = r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items())
    ok += good
    if not good: print("  miss:", os.path.basename(r["file"]), repr(r["transcript"]), r["intent"], r["slots"])
if expect_nothing:
    print("understand snr=%s false-acceptance=%.1f%% (%d/%d) rtf=%.3f" % (snr, 100.0 * (total - ok) / total, total - ok, total, decode / audio))
else:
    print("understand snr=%s accuracy=%.1f%% (%d/%d) rtf=%.3f" % (snr, 100.0 * ok / total, ok, total, decode / audio))
' "$data/labels.json" "$snr" "$app"
done

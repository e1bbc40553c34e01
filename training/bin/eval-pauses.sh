#!/usr/bin/env bash
# Phrase-complete endpointing on commands with natural pauses: how many are
# cut short, and how many are still understood.
#
#   training/bin/eval-pauses.sh                      the default listening settings
#   SILENCES="0 100 150 200 300" training/bin/eval-pauses.sh   a sweep of
#                                               --complete-phrase-silence (0: off)
#   EXTENDABLE="300 450 600" training/bin/eval-pauses.sh       and of
#                                               --extendable-phrase-silence
#   VARIANTS=3 SEED=19 training/bin/eval-pauses.sh   material: copies per recording, seed
#
# Material: `parley-bench audio pauses` writes, into a temporary folder, each
# clean coffee recording (../shared/data, never copied into the project)
# VARIANTS times with one 200-800 ms pause spliced in at a word boundary
# found by aligning the recording to its recognised words (manifest.json
# says where speech resumes). Then `parley understand` (the daemon's
# listening path) decodes them. A command is cut short when the first
# segment decoded from it ends before the speech after the pause resumes.
# Also prints the same for the unpaused recordings (accuracy; cut is 0 by
# construction there). Release build; python3 scores.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
data=$PARLEY_SHARED_DATA/coffee-maker
temp_work
.build/release/parley-bench audio pauses --variants "${VARIANTS:-3}" --seed "${SEED:-19}" --out "$work/paused" "$data"/clean/*.wav
score=$(cat <<'PY'
import json, os, sys
labels = json.load(open(sys.argv[1]))
manifest = {e["file"]: e for e in json.load(open(sys.argv[2]))}
which, silence = sys.argv[3], sys.argv[4]
total = ok = cut = 0
cut_by = {}
for line in sys.stdin:
    r = json.loads(line); total += 1
    name = os.path.basename(r["file"])
    entry = manifest.get(name) if which == "paused" else None
    want = labels[entry["source"] if entry else name]
    good = r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items())
    ok += good
    if entry and r["segments"] and r["segments"][0][1] < entry["resume_seconds"]:
        cut += 1
        cut_by[entry["progress"]] = cut_by.get(entry["progress"], 0) + 1
if which == "paused":
    kinds = {}
    for e in manifest.values(): kinds[e["progress"]] = kinds.get(e["progress"], 0) + 1
    detail = ", ".join("%s %d/%d" % (k, cut_by.get(k, 0), kinds[k]) for k in sorted(kinds))
    print("pauses silence=%s paused=%d cut=%.1f%% (%d; by words before the pause: %s) accuracy=%.1f%% (%d/%d)"
          % (silence, total, 100.0 * cut / total, cut, detail, 100.0 * ok / total, ok, total))
else:
    print("pauses silence=%s clean accuracy=%.1f%% (%d/%d)" % (silence, 100.0 * ok / total, ok, total))
PY
)
for silence in ${SILENCES:-default}; do
for extendable in ${EXTENDABLE:-default}; do
  args=()
  [ "$silence" = default ] || args+=(--complete-phrase-silence "$silence")
  [ "$extendable" = default ] || args+=(--extendable-phrase-silence "$extendable")
  for set in paused clean; do
    if [ "$set" = paused ]; then files=("$work/paused"/*.wav); else files=("$data"/clean/*.wav); fi
    .build/release/parley understand --app coffee-maker "${args[@]}" "${files[@]}" >"$work/out.jsonl"
    python3 -c "$score" "$data/labels.json" "$work/paused/manifest.json" "$set" "$silence/$extendable" <"$work/out.jsonl"
  done
done
done

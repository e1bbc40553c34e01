#!/usr/bin/env bash
# The `parley understand` contract end to end on the coffee-maker recordings:
# endpointing, recognition and ParleyCore's resolver, scored as published
# (intent right, every labelled slot exact, leading spaces stripped).
# Release build; run from the package root. Needs python3 for the scoring.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product parley >/dev/null
data=../shared/data/coffee-maker
.build/release/parley understand --app coffee-maker "$@" "$data"/clean/*.wav | python3 -c '
import json, os, sys
labels = json.load(open(sys.argv[1]))
ok = total = 0; audio = decode = 0.0
for line in sys.stdin:
    r = json.loads(line); total += 1
    audio += r["audio_seconds"]; decode += r["decode_seconds"]
    want = labels[os.path.basename(r["file"])]
    good = r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items())
    ok += good
    if not good: print("  miss:", os.path.basename(r["file"]), repr(r["transcript"]), r["slots"])
print("understand accuracy=%.1f%% (%d/%d) rtf=%.3f" % (100.0 * ok / total, ok, total, decode / audio))
' "$data/labels.json"

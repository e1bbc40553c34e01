#!/usr/bin/env bash
# The volume's built-in phrases (issue 28) said by espeak-ng, each after
# "hey" in its own file with a second of silence around it, through
# `parley understand` on every bundled app's grammar (the daemon's listening
# path: endpointing, the streaming decoder, rejection at -1): which are
# accepted and resolved to the right built-in. A synthetic voice, not people:
# a floor for what the recogniser makes of these words, not an accuracy.
#
#   training/bin/eval-volume-phrases.sh [--acoustic-model adapted] [other `parley understand` options]
#
# Needs espeak-ng, sox and python3; builds `parley` (debug) first.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product parley >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
phrases=(
  "louder|volumeUp" "turn it up|volumeUp" "volume up|volumeUp" "a bit louder|volumeUp" "speak up|volumeUp"
  "quieter|volumeDown" "turn it down|volumeDown" "volume down|volumeDown" "a bit quieter|volumeDown" "softer|volumeDown"
  "mute|mute" "unmute|unmute" "what's the volume|volumeQuery" "what is the volume|volumeQuery" "how loud is it|volumeQuery"
  "volume three|volumeSet" "volume seven|volumeSet" "set the volume to five|volumeSet" "volume to ten|volumeSet"
  # Controls: phrases that were there before, through the same path.
  "cancel|cancel (control)" "repeat|repeat (control)" "what can i say|help (control)"
  "start a ten minute timer|startTimer (control)" "order soup with soup chef|OrderSoup (control)"
)
sox -n -r 16000 -c 1 -b 16 "$work/silence.wav" trim 0 1
files=()
for i in "${!phrases[@]}"; do
  text=${phrases[$i]%%|*}
  espeak-ng -w "$work/raw.wav" "hey $text"
  sox "$work/raw.wav" -r 16000 -c 1 -b 16 "$work/body.wav"
  sox "$work/silence.wav" "$work/body.wav" "$work/silence.wav" "$work/$i.wav"
  files+=("$work/$i.wav")
done
.build/debug/parley understand --app all "$@" "${files[@]}" | python3 -c '
import json, os, sys
phrases = [p.split("|") for p in sys.argv[1:]]
counts = {False: [0, 0, 0], True: [0, 0, 0]}  # volume / control: right, wrong, rejected
for line in sys.stdin:
    r = json.loads(line)
    text, want = phrases[int(os.path.basename(r["file"])[:-4])]
    control = want.endswith(" (control)")
    want = want.replace(" (control)", "")
    got = (r.get("builtin") or r.get("intent")) if r.get("accepted") else None
    verdict = "right" if got == want else ("WRONG" if got else "rejected")
    counts[control][0 if got == want else (1 if got else 2)] += 1
    print("%-26s %-8s confidence %6.2f  heard: %s" % (text, verdict, r.get("confidence") or 0, r["transcript"]))
for control, (right, wrong, rejected) in counts.items():
    print("%s: %d/%d right, %d accepted wrong, %d rejected" % ("controls" if control else "volume phrases", right, right + wrong + rejected, wrong, rejected))
' "${phrases[@]}"

#!/usr/bin/env bash
# What the command stage makes of real speech that is not a command (issue
# 49): the 1,155 wake-other recordings of ../shared/data (people saying
# "alexa", "jarvis", "smart mirror", "snowboy", "view glass"; 0.92 h),
# clean and mixed with kitchen noise the published way (parley-bench audio
# mix, fixed seeds), through `parley understand --app coffee-maker` with
# the daemon's defaults otherwise (its rejection and ask rule). Per
# condition: accepted (not rejected), asked back, acted on (accepted and
# not asked: the device would do something), each also per hour of audio,
# and what was acted on.
#
#   training/bin/eval-non-commands.sh                       clean and 6 dB, neural
#   SNRS="6 12" FRONT_END=none training/bin/eval-non-commands.sh
#
# A bound, not the daemon's figure: `parley understand` decodes each
# recording against the app's commands alone, where the daemon's commands
# grammar wants "hey" or the name first (and, in the default mode, the hey
# gate's head heard first or the utterance short). Every rejection or ask
# rule change that accepts more of what is said should be weighed on it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
command -v flac >/dev/null || { echo "eval-non-commands: flac is missing (scripts/setup.sh installs it)" >&2; exit 1; }
bin=${PARLEY_BIN:-.build/release}
fe=${FRONT_END:-neural}
work_folder
if [ ! -f "$work/clean/.done" ]; then
  mkdir -p "$work/clean"
  for word in alexa jarvis smart-mirror snowboy view-glass; do
    for f in "$PARLEY_SHARED_DATA/wake-other/$word"/*.flac; do
      flac -s -d -f -o "$work/clean/$word-$(basename "$f" .flac).wav" "$f"
    done
  done
  touch "$work/clean/.done"
fi
for snr in ${SNRS:-clean 6}; do
  folder=$work/clean
  if [ "$snr" != clean ]; then
    folder=$work/$snr
    [ -d "$folder" ] || "$bin/parley-bench" audio mix --snr "$snr" --out "$folder" "$work/clean"/*.wav >/dev/null
  fi
  # Two processes side by side (2 cores), each half of the files.
  ls "$folder"/*.wav >"$work/files"
  split -n l/2 "$work/files" "$work/part."
  for part in "$work"/part.a?; do
    # shellcheck disable=SC2046
    "$bin/parley" understand --app coffee-maker --front-end "$fe" $(cat "$part") >"$part.jsonl" &
  done
  wait
  cat "$work"/part.a?.jsonl >"$work/$snr.$fe.jsonl"
  rm -f "$work"/part.a?*
  "$py" - "$snr" "$fe" "$work/$snr.$fe.jsonl" <<'PY'
import collections, json, sys
n = accepted = asked = 0; seconds = 0.0; acted = collections.Counter()
for line in open(sys.argv[3]):
    r = json.loads(line); n += 1; seconds += r["audio_seconds"]
    if not r["accepted"]: continue
    accepted += 1; asked += r["asks"]
    if not r["asks"]: acted[r["transcript"]] += 1
hours = seconds / 3600
done = sum(acted.values())
print("snr=%-5s front_end=%-8s recordings=%d hours=%.2f accepted=%d (%.1f%%) asked_back=%d (%.0f/h) acted_on=%d (%.1f%%, %.0f/h)"
      % (sys.argv[1], sys.argv[2], n, hours, accepted, 100.0 * accepted / n, asked, asked / hours, done, 100.0 * done / n, done / hours))
if acted:
    print("  acted on: " + ", ".join("%s x%d" % (t, c) for t, c in acted.most_common()))
PY
done

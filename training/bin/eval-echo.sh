#!/usr/bin/env bash
# Echo cancellation (issue 28) in a simulated room, with and without it: no
# machine here has a speaker and a microphone, so training/parley_training/echo_room.py makes
# the microphone signal (the device's own speech through an image-source
# room impulse response, heard 50 ms after it was queued, of which ALSA's
# delays account for 40; a person's words at 0, -10 and -20 dB relative to
# the echo; microphone noise). Then `parley-bench audio echo-room` listens
# to it as the device does while it speaks (the canceller with the played
# speech as its reference, the endpointer, the barge-in grammar: cancel
# phrases, and the wake word before a command):
#
#   ERLE        echo return loss enhancement over the hour of echo alone
#   heard       (of 30 each per mixture, and on the person alone: "clean")
#               "stop" (synthetic: espeak-ng voices other than the device's,
#               there are no recordings of "stop" in the evaluation data) and
#               "computer" + a coffee order (real recordings) said over the device
#   false       stops and wakes from the device's own voice over an hour of
#               it (answers, timers, notes read out, holding the wake word,
#               "hey computer", "stop" and "cancel")
#
#   training/bin/eval-echo.sh
#
# Environment: ECHO ("off on linear": the settings compared), SNRS ("0 -10 -20"),
# MINUTES (80: 63 min of the device speaking, pauses between), SEED (28: the device's lines; another seed
# is another hour of its speech, e.g. to check on speech nothing was chosen on), MIX_MINUTES (12), EVENTS (60 per mixture),
# WORK (keep the room's files there), JOBS (2: runs at once).
# Release build; run from the package root. Needs python3-numpy, python3-scipy.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley-bench
bench=.build/release/parley-bench
work_folder
settings=${ECHO:-off on linear}
snrs=${SNRS:-0 -10 -20}
# 40 ms of the latency are what ALSA's delays report: the reference's place.
offset=$((40 * 16))

[ -s "$work/device.wav" ] || $bench audio device-speech --minutes "${MINUTES:-80}" --seed "${SEED:-28}" --out "$work/device.wav" --lines "$work/device.tsv"
[ -s "$work/room/echo.wav" ] || python3 -m parley_training.echo_room --speech "$work/device.wav" --lines "$work/device.tsv" \
  --data "$PARLEY_SHARED_DATA" --out "$work/room" --snrs "$snrs" --mix-minutes "${MIX_MINUTES:-12}" --events "${EVENTS:-60}" \
  --latency-ms 50 --known-ms 40 --seed "${SEED:-28}"
cat "$work/room/room.txt"

# One line per run, in the background, JOBS at a time.
# The person's words alone, no echo, nothing cancelled: what the recogniser
# makes of them at all (the ceiling of "heard").
runs=("mix off clean" "mix off -10 --cancel-only" "hour off --cancel-only")
for echo in $settings; do
  runs+=("erle $echo")
  for snr in $snrs; do runs+=("mix $echo $snr"); done
  runs+=("hour $echo")
done
# "--cancel-only": the grammar of before (cancel phrases alone), the device as it was.
run() {
  local what=$1 echo=$2 snr=${3:-} out extra=()
  if [ "$snr" = --cancel-only ]; then extra=(--cancel-only); snr=; fi
  if [ "${4:-}" = --cancel-only ]; then extra=(--cancel-only); fi
  case $what in
    erle) $bench audio echo-room --erle --echo "$echo" --mic "$work/room/echo.wav" --reference "$work/device.wav" \
            --reference-offset $offset ;;
    mix)  out=$($bench audio echo-room --echo "$echo" --mic "$work/room/mix-$snr.wav" --reference "$work/device.wav" \
            --reference-offset $offset --lines "$work/device.tsv" --events "$work/room/events-$snr.tsv" "${extra[@]}") ; echo "snr=$snr $out" ;;
    hour) $bench audio echo-room --echo "$echo" --mic "$work/room/echo.wav" --reference "$work/device.wav" \
            --reference-offset $offset --lines "$work/device.tsv" "${extra[@]}" ;;
  esac
}
mkdir -p "$work/results"
i=0
for r in "${runs[@]}"; do
  name=$(echo "$r" | tr ' ' '_')
  [ -s "$work/results/$name" ] || { run $r > "$work/results/$name.tmp" && mv "$work/results/$name.tmp" "$work/results/$name"; } &
  i=$((i + 1))
  if (( i % ${JOBS:-2} == 0 )); then wait; fi
done
wait
for r in "${runs[@]}"; do cat "$work/results/$(echo "$r" | tr ' ' '_')"; done

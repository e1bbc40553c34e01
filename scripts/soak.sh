#!/usr/bin/env bash
# scripts/soak.sh MINUTES [OUT_DIR]
#
# The real daemon (release build unless SOAK_CONFIGURATION=debug; spool microphone, simulated board, Coffee
# Maker as the primary app) under load without pause for MINUTES: recorded
# commands from ../shared/data/coffee-maker/clean with and without "hey"
# (espeak-ng), kitchen noise (../shared/data/noise/kitchen.wav), TV-like
# speech (espeak-ng sentences over the noise), button presses at random
# moments, `parley say` from several clients at once, a shortcut and an
# external app (examples/apps/shopping-list) added and removed, and a handler
# that misbehaves (scripts/soak/misbehaving-handler.py). The load and the
# judgement are scripts/soak/driver.py: it samples RSS, descriptors, threads
# and CPU every few seconds and exits non-zero on growth (a fitted slope after
# warm-up), on the daemon's death, or when a command that must perform did not.
# OUT_DIR (default .build/soak) gets samples.csv, soak.svg (memory and CPU
# over time), events.log, summary.json and parleyd.log.
# Environment: SOAK_* knobs of driver.py (sample period, check period, sayers,
# growth limits, seed).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/evaluation-data.sh
minutes=${1:?usage: scripts/soak.sh MINUTES [OUT_DIR]}
out=$(realpath -m "${2:-.build/soak}")
# The load is the evaluation data (docs/evaluation-data.md): a benchmark, so
# it may use the full sets beside the checkout (or where PARLEY_SHARED_DATA points).
data=$PARLEY_SHARED_DATA
[ -d "$data/coffee-maker/clean" ] && [ -f "$data/noise/kitchen.wav" ] \
  || { echo "soak: evaluation data missing: $data/coffee-maker/clean or $data/noise/kitchen.wav (set PARLEY_SHARED_DATA)" >&2; exit 1; }
export PATH=/opt/swift/usr/bin:$PATH
bash scripts/setup.sh >/dev/null
# SOAK_CONFIGURATION=debug soaks the debug build instead (slower, more checks):
# for trying the script where a release build is not at hand.
configuration=${SOAK_CONFIGURATION:-release}
for product in parleyd parley; do
  if ! nice -n 10 swift build -c "$configuration" --product "$product" >"/tmp/parley-soak-build.log" 2>&1; then
    cat /tmp/parley-soak-build.log >&2; echo "soak.sh: the $configuration build of $product failed" >&2; exit 1
  fi
done
bin=$PWD/.build/$configuration

work=$(mktemp -d /tmp/parley-soak.XXXXXX)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$out" && mkdir -p "$out"

# Audio: 16 kHz mono 16-bit, as the spool takes it (parley play converts anyway).
mkdir -p "$work/commands-hey" "$work/commands-bare" "$work/noise" "$work/tv"
espeak-ng -w "$work/hey-raw.wav" "hey"
sox "$work/hey-raw.wav" -r 16000 -c 1 -b 16 "$work/hey.wav"
sox -n -r 16000 -c 1 -b 16 "$work/gap.wav" trim 0 0.3
n=0
for wav in $(ls "$data/coffee-maker/clean/"*.wav | sort); do
  n=$((n + 1))
  sox "$work/hey.wav" "$work/gap.wav" "$wav" -r 16000 -c 1 -b 16 "$work/commands-hey/$(basename "$wav")"
  if [ $((n % 3)) -eq 0 ]; then sox "$wav" -r 16000 -c 1 -b 16 "$work/commands-bare/$(basename "$wav")"; fi
done
kitchen=$data/noise/kitchen.wav
length=$(soxi -D "$kitchen" | cut -d. -f1)
for i in $(seq 0 11); do
  sox -V1 "$kitchen" -r 16000 -c 1 -b 16 "$work/noise/kitchen-$i.wav" trim $(( (i * 7) % (length > 6 ? length - 5 : 1) )) 4
done
i=0
while IFS= read -r line; do
  espeak-ng -v en+f3 -s 190 -w "$work/tv-raw.wav" "$line"
  sox "$work/tv-raw.wav" -r 16000 -c 1 -b 16 "$work/tv-16k.wav"
  sox -V1 -m -v 1 "$work/tv-16k.wav" -v 0.3 "$work/noise/kitchen-$((i % 12)).wav" -r 16000 -c 1 -b 16 "$work/tv/tv-$i.wav" trim 0 6
  i=$((i + 1))
done <<'TV'
And now the weather for the weekend: sunshine in the south, showers in the north.
The minister said the new bridge would open to traffic early next spring.
Tonight on the programme we visit a farm where the cows listen to music.
Stay with us after the break for the latest scores from the football.
Prices at the pump rose again this week, the third rise in a month.
Scientists have found a new species of frog in the mountains of Peru.
TV

# The daemon: spool microphone, speech into a file that goes nowhere, a
# gremlin app that misbehaves in the apps folder from the start.
state=$work/state
mkdir -p "$state/apps/gremlin"
cp scripts/soak/misbehaving-manifest.yaml "$state/apps/gremlin/manifest.yaml"
cp scripts/soak/misbehaving-handler.py "$state/apps/gremlin/handler.py"
cat >"$work/parley.yaml" <<YAML
board: sim
audio: {capture: "spool:microphone.raw", playback: "file:/dev/null"}
primary_app: Coffee Maker
state_directory: $state
control_socket: $work/parley.sock
YAML
"$bin/parleyd" --config "$work/parley.yaml" 2>"$out/parleyd.log" &
pid=$!
for _ in $(seq 600); do
  "$bin/parley" status --socket "$work/parley.sock" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "soak.sh: parleyd exited at start:" >&2; tail -20 "$out/parleyd.log" >&2; exit 1; }
  sleep 0.1
done
status=0
nice -n 5 python3 scripts/soak/driver.py --parley "$bin/parley" --socket "$work/parley.sock" --pid "$pid" \
  --log "$out/parleyd.log" --work "$work" --minutes "$minutes" --apps-folder "$state/apps" \
  --example-app "$PWD/examples/apps/shopping-list" --out "$out" || status=$?
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  wait "$pid" || { echo "soak.sh: parleyd exited with status $? after SIGTERM" >&2; status=1; }
else
  status=1
fi
pid=
echo "soak.sh: $([ $status -eq 0 ] && echo passed || echo FAILED); figures in $out (summary.json, samples.csv, soak.svg)"
exit $status

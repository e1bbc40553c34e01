#!/usr/bin/env bash
# Home Assistant satellite figures (issue 30), one parleyd per utterance as
# scripts/bench-daemon.sh does, its microphone an ALSA file device paced in
# real time, Home Assistant stood in for by scripts/lib/wyoming-ha.py (the
# real `wyoming` package from .build/wyoming-venv, scripts/setup.sh):
#   local      a command Parley handles itself ("hey" + a recorded coffee
#              order, LATENCY_FILES of them), with the satellite off and with
#              it on and Home Assistant connected: command end -> engine and
#              -> answer audio, from the last sample above -40 dBFS (sox);
#              the difference is what the link adds. Also: audio sent (none
#              expected).
#   rejected   "computer" (a real recording) + words no app knows (espeak-ng),
#              REJECTED_RUNS times: last word -> run-pipeline leaving the
#              device (the endpointer's end moved back to the last word, as
#              bench-daemon.sh does), and bytes sent per command (wire bytes:
#              headers, data and PCM) with the seconds of audio they carry.
# CONFIG=release (default) or debug picks the build.
set -euo pipefail
cd "$(dirname "$0")/.."
CONFIG=${CONFIG:-release}
LATENCY_FILES=${LATENCY_FILES:-8}
REJECTED_RUNS=${REJECTED_RUNS:-5}
PORT=${PORT:-10777}
bash scripts/setup.sh
swift build -c "$CONFIG" --product parleyd >&2
bin=.build/$CONFIG/parleyd
venv=.build/wyoming-venv/bin/python
work=$(mktemp -d /tmp/parley-bench-wyoming.XXXXXX)
ha_pid=
cleanup() { [ -n "$ha_pid" ] && kill "$ha_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
data=../shared/data/coffee-maker/clean
computer=$(ls ../shared/data/wake-computer/clean/*.wav | head -1)
espeak-ng -w "$work/hey-raw.wav" "hey"
sox "$work/hey-raw.wav" -r 16000 -c 1 -b 16 "$work/hey.wav"
espeak-ng -w "$work/light-raw.wav" "turn on the kitchen light"
sox "$work/light-raw.wav" -r 16000 -c 1 -b 16 "$work/light.wav"
# Leading silence: time for parleyd to start and Home Assistant to connect.
sox -n -r 16000 -c 1 -b 16 "$work/lead.wav" trim 0 5
sox -n -r 16000 -c 1 -b 16 "$work/silence.wav" trim 0 1.5

# run_one CAPTURE.wav MODE(off|on) -> the daemon's log in $work/run.log, Home Assistant's lines in $work/ha.log
run_one() {
  rm -rf "$work/state" && mkdir -p "$work/state"
  cp "$1" "$work/state/capture.wav"
  {
    echo "audio: {capture: \"file:capture.wav\"}"
    echo "state_directory: $work/state"
    echo "control_socket: $work/parley.sock"
    echo "primary_app: Coffee Maker"
    echo "wake: {hey_optional: true}"
    [ "$2" = on ] && echo "home_assistant: {satellite: true, port: $PORT, listen: 127.0.0.1}"
  } >"$work/run.yaml"
  : >"$work/ha.log"
  if [ "$2" = on ]; then "$venv" scripts/lib/wyoming-ha.py 127.0.0.1 "$PORT" >"$work/ha.log" 2>&1 & ha_pid=$!; fi
  "$bin" --config "$work/run.yaml" 2>"$work/run.log" &
  local pid=$!
  sleep "$(soxi -D "$work/state/capture.wav" | awk '{print $1 + 3}')"
  kill -TERM "$pid" 2>/dev/null || echo "bench-wyoming: parleyd exited early" >&2
  wait "$pid" || true
  if [ -n "$ha_pid" ]; then kill "$ha_pid" 2>/dev/null || true; wait "$ha_pid" 2>/dev/null || true; ha_pid=; fi
}
field() { grep -o " $1=[0-9]*" "$work/run.log" | head -1 | cut -d= -f2 || true; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

declare -A engine answer sent connected
mapfile -t files < <(ls "$data"/*.wav | head -n "$LATENCY_FILES")
for wav in "${files[@]}"; do
  sox "$work/lead.wav" "$work/hey.wav" "$wav" "$work/speech.wav" reverse silence 1 0.02 -40d reverse
  speech_end=$(soxi -s "$work/speech.wav")
  sox "$work/lead.wav" "$work/hey.wav" "$wav" "$work/silence.wav" "$work/silence.wav" "$work/capture.wav"
  for mode in off on; do
    run_one "$work/capture.wav" "$mode"
    a=$(field latency-ms) b=$(field answer-latency-ms) e=$(field end-sample)
    [ "$mode" = on ] && grep -q "home assistant connected" "$work/run.log" && connected[$mode]+="1 "
    sent[$mode]+="$(grep -c "audio sent to home assistant" "$work/run.log" || true) "
    if [ -n "$a" ] && [ -n "$b" ] && [ -n "$e" ]; then
      shift_ms=$(( (e - speech_end) * 1000 / 16000 ))
      engine[$mode]+="$((a + shift_ms)) " answer[$mode]+="$((b + shift_ms)) "
      echo "bench-wyoming: $(basename "$wav") [link $mode]: engine $((a + shift_ms)) ms, answer $((b + shift_ms)) ms" >&2
    else
      echo "bench-wyoming: $(basename "$wav") [link $mode]: not understood" >&2
    fi
  done
done

request=() bytes=() payload=()
sox "$work/lead.wav" "$computer" "$work/light.wav" "$work/speech.wav" reverse silence 1 0.02 -40d reverse
speech_end=$(soxi -s "$work/speech.wav")
sox "$work/lead.wav" "$computer" "$work/light.wav" "$work/silence.wav" "$work/silence.wav" "$work/rejected.wav"
for run in $(seq "$REJECTED_RUNS"); do
  run_one "$work/rejected.wav" on
  r=$(field request-ms) n=$(field bytes) e=$(grep -o "rejected command handed on.* end-sample=[0-9]*" "$work/run.log" | head -1 | grep -o '[0-9]*$' || true)
  p=$(grep -o '^pipeline [0-9]*' "$work/ha.log" | head -1 | cut -d' ' -f2 || true)
  if [ -n "$r" ] && [ -n "$n" ] && [ -n "$e" ]; then
    total=$(( r + (e - speech_end) * 1000 / 16000 ))
    request+=("$total") bytes+=("$n") payload+=("${p:-0}")
    echo "bench-wyoming: rejected run $run: last word -> request $total ms (after the endpointer's end: $r ms), $n bytes sent (${p:-?} of PCM)" >&2
  else
    echo "bench-wyoming: rejected run $run: nothing sent" >&2
  fi
done

set -f
echo "Home Assistant satellite ($CONFIG build), one parleyd per utterance:"
for mode in off on; do
  n=$(wc -w <<<"${engine[$mode]:-}")
  echo "  local command, link $mode ($n of ${#files[@]} understood$([ "$mode" = on ] && echo ", Home Assistant connected in $(wc -w <<<"${connected[on]:-}")")):"
  [ -n "${engine[$mode]:-}" ] && echo "    last word -> engine: median $(median ${engine[$mode]}) ms; -> answer audio: median $(median ${answer[$mode]}) ms"
  echo "    commands sent to Home Assistant: $(echo ${sent[$mode]} | tr ' ' '+' | bc)"
done
if ((${#request[@]})); then
  echo "  rejected command (${#request[@]} of $REJECTED_RUNS sent): last word -> run-pipeline leaving: median $(median "${request[@]}") ms (runs: ${request[*]})"
  echo "    bytes sent per command: median $(median "${bytes[@]}") (PCM payload $(median "${payload[@]}") bytes = $(median "${payload[@]}" | awk '{printf "%.2f", $1 / 32000}') s at 16 kHz)"
fi

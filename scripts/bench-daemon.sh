#!/usr/bin/env bash
# Daemon figures on this machine (release build), medians of RUNS runs:
#   ready     start of parleyd until its control socket answers `status`
#   stop      SIGTERM until the process has exited (graceful shutdown)
#   rss       resident memory after start, idle listening
#   idle cpu  CPU used while idle listening (capture, endpointer and recogniser
#             running on a silent input) over IDLE_SECONDS, as % of one core
#   write     one acknowledged durable write (donation + app value, each its own
#             WAL commit with synchronous=FULL), on the disk holding .build/
#   latency   (FRONT_END=neural: through the noise suppressor)
#             from the last sample of a spoken command in the input (ALSA file
#             device, paced in real time) to (a) the engine taking the command
#             and (b) the first sample of the spoken answer queued for playback;
#             over LATENCY_FILES recorded coffee orders, each after "hey". The
#             command's end is its last sample above -40 dBFS in the input (sox);
#             the daemon logs latencies from its endpointer's utterance end
#             (`end-sample`), which the script moves back to that point.
#             LATENCY_FILES=all takes every clean recording. Its parts:
#               wait        last word -> the end decided (`decided-sample`: the
#                           trailing silence, or the short pause after a
#                           complete phrase, plus the read block)
#               decode      ps_end_utt and scoring (`decode-ms`)
#               synthesis   engine asking to speak -> first chunk queued (`synthesis-ms`)
#               engine      the rest: inbox, resolution, the engine's turn
#   cut-off   commands with a 200-800 ms pause spliced in at a word boundary
#             cut short before their end (training/bin/eval-pauses.sh; CUT_OFF=0
#             skips it)
#   idle cost (IDLE_COST=1, the default; issue 19): per wake mode (direct,
#             named "computer") and idle scene (silence, kitchen noise,
#             television-like speech): share of a core, CPU ms per second of
#             audio, context switches per second, RSS and PSS, from
#             scripts/lib/idle-cost.sh (its header says how; IDLE_SMAPS=1 adds
#             where the resident memory is, IDLE_PROFILE=DIR a perf profile)
#   instructions (IR=1, the default): instructions per second of idle audio
#             per wake mode and scene, counted by callgrind
#             (scripts/lib/idle-instructions.sh; its header says how)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/evaluation-data.sh
RUNS=${RUNS:-5}
LATENCY_FILES=${LATENCY_FILES:-12}
# The latency runs' speech.front_end (auto: the sim board's, none; neural:
# the Pi 4 and 5 default, for issue 49's latency figure).
FRONT_END=${FRONT_END:-auto}
# HEY_GATE=true|false: the latency runs' wake.hey_gate (unset: the default).
HEY_GATE=${HEY_GATE:-}
IDLE_SECONDS=${IDLE_SECONDS:-10}
bash scripts/setup.sh
swift build -c release --product parleyd >&2
swift build -c release --product parley >&2
bin=.build/release/parleyd
work=$(mktemp -d /tmp/parley-bench.XXXXXX)
disk=$PWD/.build/bench-daemon
mkdir -p "$disk"
trap 'rm -rf "$work" "$disk"' EXIT
python3=/usr/bin/python3
hz=$(getconf CLK_TCK)

ready=() stop=() rss=() cpu=() write=()
# Idle listening: the capture file is silence, read in real time, long enough
# for the whole idle window (the endpointer and recogniser wait on it).
sox -n -r 16000 -c 1 -b 16 "$work/quiet.wav" trim 0 "$((IDLE_SECONDS + 15))"
for run in $(seq "$RUNS"); do
  mkdir -p "$work/state-$run"
  cp "$work/quiet.wav" "$work/state-$run/capture.wav"
  cat >"$work/parley.yaml" <<YAML
audio: {capture: "file:capture.wav"}
state_directory: $work/state-$run
control_socket: $work/parley.sock
YAML
  t0=$(date +%s%N)
  "$bin" --config "$work/parley.yaml" 2>"$work/log-$run" &
  pid=$!
  $python3 scripts/lib/wait-for-socket.py "$work/parley.sock"
  t1=$(date +%s%N)
  ready+=($(( (t1 - t0) / 1000000 )))
  sleep 3  # settle: model load and grammar compilation are not idle
  rss+=($(awk '/VmRSS/ {print $2}' /proc/$pid/status))
  c0=$(awk '{print $14 + $15}' /proc/$pid/stat)
  sleep "$IDLE_SECONDS"
  c1=$(awk '{print $14 + $15}' /proc/$pid/stat)
  cpu+=($(echo "scale=2; 100 * ($c1 - $c0) / $hz / $IDLE_SECONDS" | bc))
  t2=$(date +%s%N)
  kill -TERM "$pid"
  wait "$pid"
  t3=$(date +%s%N)
  stop+=($(( (t3 - t2) / 1000000 )))

  rm -f "$disk/state.db"*
  t4=$(date +%s%N)
  "$bin" store-stress --database "$disk/state.db" --count 200 >/dev/null
  t5=$(date +%s%N)
  write+=($(echo "scale=2; ($t5 - $t4) / 1000000 / 200" | bc))
done

# --- idle cost (issue 19): its own block, so the latency part can grow apart ---
idle_cost() {
  [ "${IDLE_COST:-1}" = 1 ] || return 0
  local lines
  lines=$(IDLE_SECONDS="$IDLE_SECONDS" bash scripts/lib/idle-cost.sh "$bin" "$work")
  echo "idle listening cost, ${IDLE_SECONDS} s per scene after a 3 s settle (mode scene: cpu% of one core, CPU ms per s of audio, context switches/s, RSS MiB, PSS MiB):"
  while read -r mode scene cpu ms switches rss pss; do
    printf '  %-7s %-8s %6s %%  %7s ms/s  %5s switches/s  RSS %6s MiB  PSS %6s MiB\n' \
      "$mode" "$scene" "$cpu" "$ms" "$switches" "$rss" "$pss"
  done <<<"$lines"
}
idle_cost_report=$(idle_cost)

# Instructions per second of idle audio: repeatable where the CPU share is not.
instructions() {
  [ "${IR:-1}" = 1 ] || return 0
  local lines
  lines=$(bash scripts/lib/idle-instructions.sh "$bin" "$work")
  echo "idle listening, instructions per second of audio (callgrind; silence in real time, kitchen and tv read fast):"
  while read -r mode scene ir; do
    printf '  %-7s %-8s %12s instructions/s\n' "$mode" "$scene" "$(printf "%'d" "$ir")"
  done <<<"$lines"
}
instructions_report=$(instructions)
# --- end idle cost ---

# Latency: one daemon per utterance (an order leaves the device awaiting the
# button, so the next command would be heard as an answer).
data=$PARLEY_SHARED_DATA/coffee-maker/clean
espeak-ng -w "$work/hey-raw.wav" "hey"
sox "$work/hey-raw.wav" -r 16000 -c 1 -b 16 "$work/hey.wav"
sox -n -r 16000 -c 1 -b 16 "$work/silence.wav" trim 0 1.5
# SILENCES: audio.complete_phrase_silence values to compare, each file
# played to each in turn (so machine noise falls on both alike); "0ms" is
# the listening before phrase-complete endpointing.
SILENCES=${SILENCES:-150ms}
declare -A intent answer waits decodes syntheses engines understood
if [ "$LATENCY_FILES" = all ]; then latency_files=("$data"/*.wav); else mapfile -t latency_files < <(ls "$data"/*.wav | head -n "$LATENCY_FILES"); fi
for wav in "${latency_files[@]}"; do
  # Where the spoken command ends in the input, in samples.
  sox "$work/silence.wav" "$work/hey.wav" "$wav" "$work/speech.wav" reverse silence 1 0.02 -40d reverse
  speech_end=$(soxi -s "$work/speech.wav")
  for silence in $SILENCES; do
  rm -rf "$work/lat" && mkdir -p "$work/lat"
  sox "$work/silence.wav" "$work/hey.wav" "$wav" "$work/silence.wav" "$work/silence.wav" "$work/lat/capture.wav"
  cat >"$work/lat.yaml" <<YAML
audio: {capture: "file:capture.wav", complete_phrase_silence: $silence}
speech: {front_end: "$FRONT_END"}
${HEY_GATE:+wake: {hey_gate: $HEY_GATE\}}
state_directory: $work/lat
control_socket: $work/lat.sock
primary_app: Coffee Maker
YAML
  "$bin" --config "$work/lat.yaml" 2>"$work/lat.log" &
  pid=$!
  sleep "$(soxi -D "$work/lat/capture.wav" | awk '{print $1 + 2}')"
  kill -TERM "$pid" 2>/dev/null || echo "bench-daemon: parleyd exited early on $(basename "$wav")" >&2
  wait "$pid" || true
  a=$(grep -o ' latency-ms=[0-9]*' "$work/lat.log" | head -1 | cut -d= -f2 || true)
  b=$(grep -o 'answer-latency-ms=[0-9]*' "$work/lat.log" | head -1 | cut -d= -f2 || true)
  e=$(grep -o ' end-sample=[0-9]*' "$work/lat.log" | head -1 | cut -d= -f2 || true)
  d=$(grep -o 'decided-sample=[0-9]*' "$work/lat.log" | head -1 | cut -d= -f2 || true)
  dec=$(grep -o 'decode-ms=[0-9]*' "$work/lat.log" | head -1 | cut -d= -f2 || true)
  syn=$(grep -o 'synthesis-ms=[0-9]*' "$work/lat.log" | head -1 | cut -d= -f2 || true)
  wait_ms=
  if [ -n "$a" ] && [ -n "$e" ]; then
    understood[$silence]+="1 "
    shift_ms=$(( (e - speech_end) * 1000 / 16000 ))
    intent[$silence]+="$((a + shift_ms)) "
    if [ -n "$b" ]; then answer[$silence]+="$((b + shift_ms)) "; fi
    if [ -n "$b" ] && [ -n "$d" ] && [ -n "$dec" ] && [ -n "$syn" ]; then
      wait_ms=$(( (d - speech_end) * 1000 / 16000 ))
      waits[$silence]+="$wait_ms " decodes[$silence]+="$dec " syntheses[$silence]+="$syn "
      engines[$silence]+="$(( b + shift_ms - wait_ms - dec - syn )) "
    fi
    echo "bench-daemon: $(basename "$wav") [$silence]: engine $((a + shift_ms)) ms, answer $(( ${b:-0} + shift_ms )) ms (wait ${wait_ms:-?}, decode ${dec:-?}, synthesis ${syn:-?})" >&2
  else
    echo "bench-daemon: $(basename "$wav") [$silence]: not understood" >&2
  fi
  done
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "parleyd, $RUNS runs (medians):"
echo "  ready after start:        $(median "${ready[@]}") ms   (runs: ${ready[*]})"
echo "  stop after SIGTERM:       $(median "${stop[@]}") ms   (runs: ${stop[*]})"
echo "  resident memory, idle:    $(median "${rss[@]}") KiB"
echo "  CPU idle (${IDLE_SECONDS} s):         $(median "${cpu[@]}") % of one core"
echo "  durable write (ack):      $(median "${write[@]}") ms   (runs: ${write[*]})"
p95() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {i=int(NR*0.95+0.999); if (i<1) i=1; print a[i]}'; }
for silence in $SILENCES; do
  set -f  # the values are numbers: word splitting only
  n=$(wc -w <<<"${understood[$silence]:-}")
  echo "latency with complete_phrase_silence $silence, over $n understood of ${#latency_files[@]} orders, from the last word (-40 dBFS):"
  if [ -n "${intent[$silence]:-}" ]; then
    echo "  command end -> engine:       median $(median ${intent[$silence]}) ms, p95 $(p95 ${intent[$silence]}) ms"
  fi
  if [ -n "${answer[$silence]:-}" ]; then
    echo "  command end -> answer audio: median $(median ${answer[$silence]}) ms, p95 $(p95 ${answer[$silence]}) ms"
  fi
  if [ -n "${waits[$silence]:-}" ]; then
    echo "  parts (median / p95 ms):     wait $(median ${waits[$silence]}) / $(p95 ${waits[$silence]}), decode $(median ${decodes[$silence]}) / $(p95 ${decodes[$silence]}), engine $(median ${engines[$silence]}) / $(p95 ${engines[$silence]}), synthesis $(median ${syntheses[$silence]}) / $(p95 ${syntheses[$silence]})"
  fi
  set +f
done
if [ "${CUT_OFF:-1}" != 0 ]; then
  echo "commands with a pause spliced in (training/bin/eval-pauses.sh):"
  bash training/bin/eval-pauses.sh | sed 's/^/  /'
fi
# --- idle cost (issue 19) ---
if [ -n "$idle_cost_report" ]; then echo "$idle_cost_report"; fi
if [ -n "$instructions_report" ]; then echo "$instructions_report"; fi

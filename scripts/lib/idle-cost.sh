#!/usr/bin/env bash
# Idle listening cost of parleyd (issue 19), called by scripts/bench-daemon.sh
# (function idle_cost) and runnable alone:
#   scripts/lib/idle-cost.sh BIN WORKDIR
# For each wake mode (IDLE_MODES: direct = wake.named false, named = wake.direct
# false, "computer" (the shipped detector), named-network and named-sphinx = the
# same with wake.detector network or pocketsphinx, default = both, as shipped;
# direct and default as shipped, with wake.hey_gate on; direct-hey and default-hey
# set it on, direct-ungated and default-ungated off) and each idle scene (IDLE_SCENES):
#   silence   digital silence
#   kitchen   ../shared/data/noise/kitchen.wav (room noise, no speech)
#   tv        television-like speech: an espeak-ng news paragraph and 20 clean
#             coffee-maker recordings with their pauses shortened to 0.25 s,
#             none of it after "hey" (it must wake nothing)
#   talk      people talking with pauses: 30 other coffee-maker recordings as
#             recorded (IDLE_SCENES="talk" to include it)
# the daemon listens to the scene through the ALSA file device paced in real
# time and the script prints
#   cpu       share of one core over IDLE_SECONDS after a 3 s settle (/proc/PID/stat)
#   rss, pss  resident / proportional memory at the end of that window (smaps_rollup)
#   cpu ms/s  CPU time per second of audio over the same window, from the
#             kernel's task clock (perf stat -e task-clock -p PID), with the
#             context switches per second (each a thread woken: the polling
#             and per-period wake-ups of capture and listening).
# Instructions per second: this VM exposes no hardware counters (`perf stat
# -e instructions` says <not supported>); scripts/lib/idle-instructions.sh
# counts them with callgrind instead.
# IDLE_SMAPS=1 also prints where the resident memory of the first run is
# (scripts/lib/smaps-breakdown.py); IDLE_PROFILE=DIR records a cpu-clock profile of
# each run's window there (perf record; read with perf report -i).
set -euo pipefail
bin=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
export PARLEY_BOARD_DIR=${PARLEY_BOARD_DIR:-$root/board}   # for a parleyd copied out of .build
IDLE_SECONDS=${IDLE_SECONDS:-10}
IDLE_MODES=${IDLE_MODES:-direct named}
IDLE_SCENES=${IDLE_SCENES:-silence kitchen tv}
IDLE_SMAPS=${IDLE_SMAPS:-0}
hz=$(getconf CLK_TCK)
data=${PARLEY_SHARED_DATA:-$root/../shared/data}
mkdir -p "$work/idle"

# The scenes, each long enough for the settle, the window and the daemon's start.
length=$(( 2 * IDLE_SECONDS + 40 ))
# shellcheck source=scripts/lib/idle-scenes.sh
source "$root/scripts/lib/idle-scenes.sh"

# Starts parleyd on a scene and waits until it is ready; sets $pid. $1 mode, $2 scene WAV, $3 run name.
start_daemon() {
  local mode=$1 scene_wav=$2 name=$3
  local state=$work/idle/$name
  scene_state "$mode" "$scene_wav" "$state"
  "$bin" --config "$state/parley.yaml" 2>"$state/log" &
  pid=$!
  # Under load the models take a while: up to 5 minutes.
  /usr/bin/python3 "$root/scripts/lib/wait-for-socket.py" "$state/parley.sock" 30000 0.01
}

stop_daemon() { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }

printf '%-8s %-8s %7s %9s %10s %9s %9s\n' mode scene "cpu %" "cpu ms/s" "switches/s" "rss MiB" "pss MiB" >&2
results=()
first=1
for mode in $IDLE_MODES; do
  for name in $IDLE_SCENES; do
    wav=$(scene "$name" "$length")
    start_daemon "$mode" "$wav" "$mode-$name"
    sleep 3   # settle: model load and grammar compilation are not idle
    c0=$(awk '{print $14 + $15}' /proc/$pid/stat)
    perf stat -x, -e task-clock,context-switches -p "$pid" -o "$work/idle/$mode-$name.perf" -- sleep "$IDLE_SECONDS" 2>/dev/null
    c1=$(awk '{print $14 + $15}' /proc/$pid/stat)
    cpu=$(echo "scale=2; 100 * ($c1 - $c0) / $hz / $IDLE_SECONDS" | bc)
    ms=$(awk -F, -v s="$IDLE_SECONDS" '$3 == "task-clock" {printf "%.2f", $1 / s}' "$work/idle/$mode-$name.perf")
    switches=$(awk -F, -v s="$IDLE_SECONDS" '$3 == "context-switches" {printf "%.0f", $1 / s}' "$work/idle/$mode-$name.perf")
    rss=$(awk '/^Rss:/ {printf "%.1f", $2 / 1024}' /proc/$pid/smaps_rollup)
    pss=$(awk '/^Pss:/ {printf "%.1f", $2 / 1024}' /proc/$pid/smaps_rollup)
    if [ "$IDLE_SMAPS" = 1 ] && [ $first = 1 ]; then
      echo "where the resident memory is ($mode, $name):" >&2
      /usr/bin/python3 "$root/scripts/lib/smaps-breakdown.py" "$pid" --top 25 >&2
      first=0
    fi
    if [ -n "${IDLE_PROFILE:-}" ]; then
      mkdir -p "$IDLE_PROFILE"
      perf record -q -e cpu-clock -F 999 -g -p "$pid" -o "$IDLE_PROFILE/$mode-$name.data" -- sleep "$IDLE_SECONDS" 2>/dev/null
    fi
    stop_daemon
    printf '%-8s %-8s %7s %9s %10s %9s %9s\n' "$mode" "$name" "$cpu" "$ms" "$switches" "$rss" "$pss" >&2
    results+=("$mode $name $cpu $ms $switches $rss $pss")
  done
done
printf '%s\n' "${results[@]}"

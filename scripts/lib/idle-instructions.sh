#!/usr/bin/env bash
# Instructions per second of idle audio (issue 19), counted by valgrind's
# callgrind: repeatable where the CPU share is not (this VM has no hardware
# counters for `perf stat -e instructions`). Called by scripts/bench-daemon.sh
# (IR=1) and runnable alone:
#   scripts/lib/idle-instructions.sh BIN WORKDIR
# BIN is a parleyd built with its synchronous entry point (BlockingMain:
# valgrind cannot run Swift's async main). Scenes and wake modes are those of
# scripts/lib/idle-cost.sh (IR_MODES, IR_SCENES).
#
# silence   the daemon listens in real time (ALSA file device) under
#           callgrind; after the start and a settle, the counters are zeroed
#           and dumped IR_WINDOW seconds later: every instruction of every
#           thread in that window (capture, endpointer, ticks), per second.
# kitchen,  under callgrind the daemon cannot keep up with real time, so the
# tv        scene is read as fast as possible (audio.pacing: fast; the ring
#           holds the whole file) at two lengths, IR_SECONDS and twice that,
#           each followed by 3 s of silence; a run ends once the input ended
#           and the process went quiet. The difference of the two runs'
#           totals, over IR_SECONDS, is what a second of that audio costs
#           (start-up, stop and the rest cancel).
#
# IR_ARCH=arm64: BIN is the Pi's parleyd (scripts/cross-build.sh arm64's
# out/arm64/bin/parleyd), run under qemu-user with the instruction-counting
# plugin of scripts/lib/arm64-count.sh instead of callgrind. The same runs;
# for silence, the plugin's once-a-second "SECONDS INSTRUCTIONS" lines stand
# in for callgrind_control's zero and dump (the window is the difference of
# two lines over their seconds). The control tool is this machine's parley
# (PARLEY, default .build/release/parley): the socket's protocol is the same.
# IR_CALLGRIND_ARGS: extra callgrind options (e.g. --separate-threads=yes:
# one callgrind.out-NN per thread, for what each decoder thread costs).
# IR_YAML: more lines of the daemon's configuration, e.g. 'speech:
# {front_end: neural}' (a Pi 4's and Pi 5's default: the runs' board is
# the simulated one, whose default is none).
# Prints one line per mode and scene: mode scene instructions-per-second.
set -euo pipefail
bin=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
IR_ARCH=${IR_ARCH:-$(uname -m)}
# The control tool beside the daemon (both from one build).
if [ "$IR_ARCH" = arm64 ]; then parley=${PARLEY:-$root/.build/release/parley}
else parley=${PARLEY:-$(dirname "$bin")/parley}; fi
export PARLEY_BOARD_DIR=${PARLEY_BOARD_DIR:-$root/board}
IR_MODES=${IR_MODES:-direct named}
IR_SCENES=${IR_SCENES:-silence kitchen tv}
IR_WINDOW=${IR_WINDOW:-20}
IR_SECONDS=${IR_SECONDS:-10}
# A quiet process under callgrind still runs its timers: "quiet" is less than
# this many clock ticks (of 100 a second) in a 2 s look.
IR_QUIET_TICKS=${IR_QUIET_TICKS:-40}
mkdir -p "$work/ir"
work=$(cd "$work" && pwd) bin=$(realpath "$bin")
if [ "$IR_ARCH" = arm64 ]; then
  # shellcheck source=scripts/lib/arm64-count.sh
  source "$root/scripts/lib/arm64-count.sh"
  ARM64_BIN=$(dirname "$bin")
  pushd "$root" >/dev/null && arm64_setup "$work/ir" && popd >/dev/null
  daemon=$bin
else
  command -v valgrind >/dev/null || { echo "idle-instructions: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
  # Debian 12's valgrind cannot read the DWARF 5 that Swift writes ("possibly
  # corrupted debuginfo file"): it runs a copy without it (symbols kept).
  daemon=$work/ir/parleyd
  strip --strip-debug -o "$daemon" "$bin"
fi

data=${PARLEY_SHARED_DATA:-$root/../shared/data}
# shellcheck source=scripts/lib/idle-scenes.sh
source "$root/scripts/lib/idle-scenes.sh"

# $1 mode, $2 scene WAV, $3 pacing, $4 run name: starts parleyd under callgrind; sets $pid, $state.
start() {
  local mode=$1 wav=$2 pacing=$3 name=$4 wake
  state=$work/ir/$name
  rm -rf "$state" && mkdir -p "$state"
  wake=$(wake_yaml "$mode")
  cat >"$state/parley.yaml" <<YAML
audio: {capture: "file:$wav", pacing: $pacing}
wake: $wake
state_directory: $state
control_socket: $state/parley.sock
${IR_YAML:-}
YAML
  if [ "$IR_ARCH" = arm64 ]; then
    "${ARM64_RUN[@]}" -plugin "$(arm64_plugin "$state/count" "$state/ticks")" "$daemon" --config "$state/parley.yaml" 2>"$state/log" &
  else
    # shellcheck disable=SC2086  # IR_CALLGRIND_ARGS: extra options, e.g. --separate-threads=yes
    valgrind --tool=callgrind ${IR_CALLGRIND_ARGS:-} --callgrind-out-file="$state/callgrind.out" "$daemon" --config "$state/parley.yaml" 2>"$state/log" &
  fi
  pid=$!
  # Loading the models under callgrind takes minutes on a busy machine.
  until "$parley" status --socket "$state/parley.sock" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "idle-instructions: parleyd under callgrind ended at start:" >&2; tail -5 "$state/log" >&2; exit 1; }
    sleep 1
  done
}

stop() { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# The instructions in a callgrind output file: its "totals:" (or "summary:") line.
callgrind_total() { awk '/^(totals|summary):/ {print $2; exit}' "$1"; }
# The instructions in callgrind output files that exist and are not empty:
# one file, or one a thread with --separate-threads=yes (NAME-NN).
callgrind_sum() {
  local f sum=0
  for f in "$@"; do
    if [ -s "$f" ]; then sum=$((sum + $(callgrind_total "$f"))); fi
  done
  echo "$sum"
}
# The run's instructions: callgrind's, or the plugin's count at exit.
total() {
  if [ "$IR_ARCH" = arm64 ]; then arm64_total "$state/count"
  else callgrind_sum "$state/callgrind.out" "$state"/callgrind.out-[0-9]*; fi
}
# The plugin's last once-a-second line: "SECONDS INSTRUCTIONS".
last_tick() { tail -n 1 "$state/ticks"; }

fast_run() {  # $1 mode, $2 scene, $3 seconds: total instructions of the run
  local mode=$1 name=$2 seconds=$3 wav
  wav=$work/ir/$name-$seconds.wav
  sox "$(scene "$name" "$seconds")" "$wav" pad 0 3
  start "$mode" "$wav" fast "$mode-$name-$seconds"
  until "$parley" status --socket "$state/parley.sock" 2>/dev/null | grep -q "end of input"; do
    kill -0 "$pid" 2>/dev/null || { echo "idle-instructions: parleyd ended early (see $state/log)" >&2; exit 1; }
    sleep 1
  done
  # Quiet twice in a row: one quiet look can be a decoder waiting for a
  # busy machine's CPU, which would end the run before its audio was heard.
  local a b quiet=0
  while [ $quiet -lt 2 ]; do
    a=$(ticks); sleep 2; b=$(ticks)
    if [ $((b - a)) -lt "$IR_QUIET_TICKS" ]; then quiet=$((quiet + 1)); else quiet=0; fi
  done
  stop
  total
}

for mode in $IR_MODES; do
  for name in $IR_SCENES; do
    if [ "$name" = silence ]; then
      start "$mode" "$(scene silence $((IR_WINDOW + 600)))" realtime "$mode-silence"
      # Capture starts once the decoders are loaded (on the listen thread,
      # after the socket is up): the window starts after that and a settle.
      until "$parley" status --socket "$state/parley.sock" 2>/dev/null | grep -q "^audio: *running"; do sleep 1; done
      sleep 5
      if [ "$IR_ARCH" = arm64 ]; then
        first=$(last_tick); sleep "$IR_WINDOW"; last=$(last_tick)
        stop
        ir=$(python3 -c 'import sys; t1, c1, t2, c2 = map(float, sys.argv[1:]); print(int((c2 - c1) / (t2 - t1)))' $first $last)
      else
        callgrind_control -z "$pid" >/dev/null
        sleep "$IR_WINDOW"
        callgrind_control -d "$pid" >/dev/null
        stop
        # The window's dump: one file, or one a thread (IR_CALLGRIND_ARGS).
        dumps=("$state"/callgrind.out.*)
        [ -e "${dumps[0]}" ] || { echo "idle-instructions: no callgrind dump for $mode silence (see $state/log)" >&2; exit 1; }
        ir=$(( $(callgrind_sum "${dumps[@]}") / IR_WINDOW ))
      fi
    else
      one=$(fast_run "$mode" "$name" "$IR_SECONDS")
      two=$(fast_run "$mode" "$name" $((2 * IR_SECONDS)))
      ir=$(( (two - one) / IR_SECONDS ))
    fi
    printf '%s %s %s\n' "$mode" "$name" "$ir"
  done
done

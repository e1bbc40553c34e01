#!/usr/bin/env bash
# Daemon figures on this machine (release build), medians of RUNS runs:
#   ready     start of parleyd until its control socket answers `status`
#   stop      SIGTERM until the process has exited (graceful shutdown)
#   rss       resident memory after start, idle
#   idle cpu  CPU used while idle over IDLE_SECONDS, as % of one core
#   write     one acknowledged durable write (donation + app value, each its own
#             WAL commit with synchronous=FULL), on the disk holding .build/
# The end-to-end latency figures (speech end to intent / first answer sample)
# need the audio and speech pipeline wired in (see BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
IDLE_SECONDS=${IDLE_SECONDS:-10}
bash scripts/setup.sh
swift build -c release --product parleyd >&2
bin=.build/release/parleyd
work=$(mktemp -d /tmp/parley-bench.XXXXXX)
disk=$PWD/.build/bench-daemon
mkdir -p "$disk"
trap 'rm -rf "$work" "$disk"' EXIT
python3=/usr/bin/python3
hz=$(getconf CLK_TCK)

ready=() stop=() rss=() cpu=() write=()
for run in $(seq "$RUNS"); do
  cat >"$work/parley.yaml" <<YAML
state_directory: $work/state-$run
control_socket: $work/parley.sock
YAML
  t0=$(date +%s%N)
  "$bin" --config "$work/parley.yaml" 2>"$work/log-$run" &
  pid=$!
  $python3 - "$work/parley.sock" <<'PY'
import socket, sys, time
for _ in range(2000):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
        s.sendall(b'{"command":"status"}\n'); s.makefile().readline(); sys.exit(0)
    except OSError:
        time.sleep(0.002)
sys.exit("parleyd did not become ready")
PY
  t1=$(date +%s%N)
  ready+=($(( (t1 - t0) / 1000000 )))
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

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "parleyd, $RUNS runs (medians):"
echo "  ready after start:        $(median "${ready[@]}") ms   (runs: ${ready[*]})"
echo "  stop after SIGTERM:       $(median "${stop[@]}") ms   (runs: ${stop[*]})"
echo "  resident memory, idle:    $(median "${rss[@]}") KiB"
echo "  CPU idle (${IDLE_SECONDS} s):         $(median "${cpu[@]}") % of one core"
echo "  durable write (ack):      $(median "${write[@]}") ms   (runs: ${write[*]})"

#!/usr/bin/env bash
# SIGTERM with a question open, on a slow CPU: how long parleyd takes to
# stop, and which service ended last (its ServiceTrace lines).
#
#   scripts/bench-stop.sh [RUNS] [--cpu-percent N] [--arm64 DIR | --daemon FILE]
#
# The daemon runs with the development defaults (simulated board, file
# audio) in a temporary state folder; `parley say "order soup with soup
# chef"` opens a question, then SIGTERM. --cpu-percent N confines it to N %
# of one core (a cgroup v1 `cpu` quota; needs root), a stand-in for a slow
# board. --arm64 DIR runs DIR/bin/parleyd (scripts/cross-build.sh arm64:
# out/arm64) under qemu-user with the arm64 SDK's sysroot as its root
# (scripts/swift-sdk.sh). --daemon FILE runs another native parleyd (an
# older build, to compare before and after a change; it finds the board
# files from its own folder upwards, so keep it inside the checkout, e.g.
# out/). The `parley` client is .build/debug/parley.
# One line per run: exit status, milliseconds, last service to end, or the
# watchdog's line. Exits 1 if any stop reached the watchdog or failed.
# STOP_LOGS=DIR keeps each run's daemon log there (DIR/runN.log) to read
# the whole ServiceTrace.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-4}; shift || true
cpu= arm64= native=
while (($#)); do
    case "$1" in
        --cpu-percent) cpu=$2; shift 2 ;;
        --arm64) arm64=$(cd "$2" && pwd); shift 2 ;;
        --daemon) native=$(realpath "$2"); shift 2 ;;
        *) echo "usage: bench-stop.sh [RUNS] [--cpu-percent N] [--arm64 DIR | --daemon FILE]" >&2; exit 2 ;;
    esac
done
parley=$PWD/.build/debug/parley
daemon=(.build/debug/parleyd)
[ -x "$parley" ] || swift build --product parley >/dev/null
if [ -n "$arm64" ]; then
    sysroot=$(eval "$(bash scripts/swift-sdk.sh)"; echo "$SDK_BUNDLE_arm64/debian13-arm64/sysroot")
    # libblas/liblapack are update-alternatives links to /etc/alternatives,
    # which qemu-user's -L does not translate: name their folders directly.
    daemon=(env LD_LIBRARY_PATH="$sysroot/usr/lib/aarch64-linux-gnu/blas:$sysroot/usr/lib/aarch64-linux-gnu/lapack"
            qemu-aarch64-static -L "$sysroot" "$arm64/bin/parleyd")
elif [ -n "$native" ]; then
    daemon=("$native")
else
    [ -x .build/debug/parleyd ] || swift build --product parleyd >/dev/null
fi
work=$(mktemp -d /tmp/parley-stop.XXXXXX)
group=
if [ -n "$cpu" ]; then
    group=/sys/fs/cgroup/cpu/parley-bench-stop-$$
    mkdir "$group"
    echo 100000 >"$group/cpu.cfs_period_us"
    echo $((cpu * 1000)) >"$group/cpu.cfs_quota_us"
fi
trap 'rm -rf "$work"; [ -z "$group" ] || rmdir "$group" 2>/dev/null || true' EXIT

failures=0
for run in $(seq 1 "$runs"); do
    rm -rf "$work/state"
    log=$work/log$run
    (
        [ -z "$group" ] || echo $BASHPID >"$group/tasks"
        exec "${daemon[@]}" --state-directory "$work/state" --socket "$work/s.sock" 2>"$log"
    ) &
    pid=$!
    waited=0
    until "$parley" status --socket "$work/s.sock" >/dev/null 2>&1; do
        sleep 0.5; waited=$((waited + 1))
        if [ $waited -gt 1200 ] || ! kill -0 $pid 2>/dev/null; then echo "run $run: not ready"; tail -3 "$log"; exit 1; fi
    done
    "$parley" say --socket "$work/s.sock" "order soup with soup chef" >"$work/said" 2>&1
    grep -q "Which soup" "$work/said" || { echo "run $run: no question open: $(cat "$work/said")"; failures=$((failures + 1)); }
    t0=$(date +%s%N); kill -TERM $pid; code=0; wait $pid || code=$?; t1=$(date +%s%N)
    [ -z "${STOP_LOGS:-}" ] || { mkdir -p "$STOP_LOGS"; cp "$log" "$STOP_LOGS/run$run.log"; }
    last=$(grep 'service ended' "$log" | tail -n 1 | grep -o 'ms-since-stop=[0-9]* service=[A-Za-z]*' || true)
    if grep -q 'stop took longer' "$log"; then
        echo "run $run: exit $code after $(((t1 - t0) / 1000000)) ms: WATCHDOG $(grep -o 'still-running=.*' "$log" | tail -n 1)"
        failures=$((failures + 1))
    else
        echo "run $run: exit $code after $(((t1 - t0) / 1000000)) ms; last to end: $last"
        [ "$code" -eq 0 ] || failures=$((failures + 1))
    fi
done
exit $((failures > 0))

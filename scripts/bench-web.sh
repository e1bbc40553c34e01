#!/usr/bin/env bash
# What the speaker's page costs (issue 29: under 5 MiB resident, nothing
# measurable in idle CPU while nobody has it open). parleyd is started RUNS
# times with the page off and RUNS times with it on (web.listen: loopback,
# a free port), on the simulated board with its silent spool microphone, and
# after it answers `status` and has been idle SETTLE seconds:
#   rss        VmRSS from /proc/PID/status
#   idle cpu   user+system ticks over IDLE_SECONDS, as % of one core
# With the page on, also the RSS after VISITS requests of each page (a
# browser that paired and looked around), then idle CPU again after it left,
# and the CPU while a paired browser keeps the status page's live stream open.
# Prints one line per run and the medians. BUILD=debug measures the debug
# build (default release; the figures in the report name which).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SETTLE=${SETTLE:-5}
IDLE_SECONDS=${IDLE_SECONDS:-20}
VISITS=${VISITS:-10}
BUILD=${BUILD:-release}
bash scripts/setup.sh
if [ "$BUILD" = release ]; then swift build -c release --product parleyd >&2; fi
bin=.build/$BUILD/parleyd
work=$(mktemp -d /tmp/parley-bench-web.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
idle_cpu() {  # PID -> % of one core over IDLE_SECONDS
  local before after
  before=$(ticks "$1"); sleep "$IDLE_SECONDS"; after=$(ticks "$1")
  echo "scale=3; 100 * ($after - $before) / ($hz * $IDLE_SECONDS)" | bc
}

for mode in off on; do
  for run in $(seq "$RUNS"); do
    state=$work/state-$mode-$run
    mkdir -p "$state"
    web_enabled=false; [ "$mode" = on ] && web_enabled=true
    cat >"$work/parley.yaml" <<YAML
state_directory: $state
control_socket: $work/parley.sock
speech: {acoustic_model: stock}
web: {enabled: $web_enabled, port: 0, listen: loopback}
YAML
    "$bin" --config "$work/parley.yaml" 2>"$work/log" &
    pid=$!
    python3 scripts/lib/wait-for-socket.py "$work/parley.sock" 30000 0.002
    sleep "$SETTLE"
    rss=$(rss_kib "$pid")
    cpu=$(idle_cpu "$pid")
    line="$mode run $run: rss ${rss} KiB, idle cpu ${cpu} %"
    echo "$rss" >>"$work/rss-$mode"; echo "$cpu" >>"$work/cpu-$mode"
    if [ "$mode" = on ]; then
      url=$(grep -o 'web page listening url=http://[0-9.:]*/' "$work/log" | head -1 | cut -d= -f2)
      [ -n "$url" ] || { echo "no web page in the log" >&2; cat "$work/log" >&2; exit 1; }
      for _ in $(seq "$VISITS"); do
        for path in pair style.css live.js; do curl -fsS -o /dev/null "$url$path"; done
      done
      visited=$(rss_kib "$pid")
      after=$(idle_cpu "$pid")
      echo "$visited" >>"$work/rss-visited"; echo "$after" >>"$work/cpu-after"
      line="$line; after $((VISITS * 3)) requests: rss ${visited} KiB, idle cpu ${after} %"
      # A browser with the status page open: paired with the code the speaker
      # says (read from its log), then the live stream (the state once a
      # second, the microphone level four times a second) read for
      # IDLE_SECONDS while the daemon's CPU is measured.
      origin=${url%/}
      curl -fsS -o /dev/null -H "Origin: $origin" -X POST "${url}pair/code"
      code=$(grep -o 'spoke text=Your pairing code is [0-9 ]*' "$work/log" | tail -1 | sed 's/.*code is //; s/ //g')
      cookie=$(curl -fsS -o /dev/null -D - -H "Origin: $origin" --data "code=$code" "${url}pair" | grep -o 'parley_session=[^;]*')
      [ -n "$cookie" ] || { echo "pairing with code '$code' failed" >&2; cat "$work/log" >&2; exit 1; }
      curl -sS -N -H "Cookie: $cookie" "${url}events" >"$work/events" &
      stream=$!
      streaming=$(idle_cpu "$pid")
      kill "$stream"; wait "$stream" 2>/dev/null || true
      streamed=$(rss_kib "$pid")
      echo "$streaming" >>"$work/cpu-streaming"; echo "$streamed" >>"$work/rss-streamed"
      line="$line; status page open: cpu ${streaming} % ($(grep -c '^data:' "$work/events") events), rss ${streamed} KiB"
    fi
    echo "$line"
    kill -TERM "$pid"; wait "$pid" || true; pid=
  done
done
off=$(median <"$work/rss-off"); on=$(median <"$work/rss-on")
echo "median rss: off $off KiB, on $on KiB, difference $((on - off)) KiB ($(echo "scale=2; ($on - $off) / 1024" | bc) MiB); after requests $(median <"$work/rss-visited") KiB"
echo "median idle cpu (% of one core over ${IDLE_SECONDS}s): off $(median <"$work/cpu-off"), on $(median <"$work/cpu-on"), on after requests $(median <"$work/cpu-after")"
echo "median with the status page open: cpu $(median <"$work/cpu-streaming") % of one core, rss $(median <"$work/rss-streamed") KiB"

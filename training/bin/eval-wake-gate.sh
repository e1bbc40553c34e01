#!/usr/bin/env bash
# Named mode's gate on the command decoders (issue 27 item 4, `WakeGate`):
# do commands get lost when the grammar and phone-loop decoders wait for the
# wake detector's first stage? Each pair of a development recording of
# "computer" and a coffee order, said as one command ("computer, <order>":
# the recordings' silences trimmed, 0.2 s between them), goes through the
# whole daemon in named mode alone (wake.direct false, hey_optional so the
# name alone starts a command; Coffee Maker the primary app), once with
# BASE, a parleyd built without the gate, and once with this checkout's,
# side by side on the same capture. Clean and with noise mixed in (the
# benchmark's peak-frame SNR). Nothing here is tuned: the gate's window and
# stage 1's threshold were fixed before this ran, so every pair reports.
#
#   training/bin/eval-wake-gate.sh BASE_PARLEYD
#
# Prints one line per pair and condition (the first decision of each
# daemon: the words heard, "woken", or "-" for nothing) and per condition
# the orders heard by each, the pairs decided differently, the utterances
# the gate left undecoded and the median time from the command's end to the
# engine taking it (`latency-ms`) over the pairs both heard. Side by side,
# the gate's catch-up competes with the other daemon for the cores, which
# inflates its latency; SEQUENTIAL=1 runs the two one after the other
# (twice as long) for latencies that compare.
# BASE_DETECTOR and DETECTOR set wake.detector of BASE's and this
# checkout's daemon (e.g. BASE_DETECTOR=pocketsphinx with BASE this
# checkout's parleyd: the keyword network against PocketSphinx's detector).
# Environment: COUNT (pairs, default 80), SEQUENTIAL (0), NOISES ("clean kitchen"; a noise
# is ../shared/data/noise/NAME.wav or .build/wake-cv/noise/NAME.wav),
# SNR (10), WORK (kept; default a temporary folder).
set -euo pipefail
main() {
. "$(dirname "$0")/lib.sh"
base=$(realpath "${1:?usage: training/bin/eval-wake-gate.sh BASE_PARLEYD}")
build_release parleyd parley-bench
gate=$PWD/.build/release/parleyd
count=${COUNT:-80} snr=${SNR:-10}
work_folder
export PARLEY_BOARD_DIR=$PWD/board
mapfile -t wakes < <(ls "$PARLEY_SHARED_DATA"/wake-computer/clean/*.wav | head -n "$count")
mapfile -t orders < <(ls "$PARLEY_SHARED_DATA"/coffee-maker/clean/*.wav | head -n "${#wakes[@]}")
sox -n -r 16000 -c 1 -b 16 "$work/lead.wav" trim 0 1.5
sox -n -r 16000 -c 1 -b 16 "$work/gap.wav" trim 0 0.2
sox -n -r 16000 -c 1 -b 16 "$work/tail.wav" trim 0 2.5
mkdir -p "$work/pairs"
for i in "${!wakes[@]}"; do
  # -D: no dither, so every run builds the same pairs (sox dithers with fresh noise otherwise).
  trim() { sox -D "$1" "$2" silence 1 0.02 -40d reverse silence 1 0.02 -40d reverse; }
  trim "${wakes[$i]}" "$work/w.wav"
  trim "${orders[$i]}" "$work/o.wav"
  sox -D "$work/lead.wav" "$work/w.wav" "$work/gap.wav" "$work/o.wav" "$work/tail.wav" "$work/pairs/$(printf %03d "$i").wav"
done

# Runs BIN on CAPTURE in folder DIR until the capture has played, with
# wake.detector DETECTOR when given; the log is DIR/log.
run() {
  local bin=$1 capture=$2 dir=$3 detector=${4:-}
  rm -rf "$dir" && mkdir -p "$dir"
  ln -s "$capture" "$dir/capture.wav"
  cat >"$dir/parley.yaml" <<YAML
audio: {capture: "file:capture.wav"}
wake: {named: true, direct: false, name: computer, hey_optional: true${detector:+, detector: $detector}}
primary_app: Coffee Maker
log_level: debug
state_directory: $dir
control_socket: $dir/parley.sock
YAML
  "$bin" --config "$dir/parley.yaml" 2>"$dir/log" &
  local pid=$!
  sleep "$(soxi -D "$capture" | awk '{print $1 + 3}')"
  kill -TERM "$pid" 2>/dev/null || echo "eval-wake-gate: $bin exited early on $capture" >&2
  wait "$pid" || true
}

# The median of the numbers on standard input, "-" for none.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# The first decision in a log: the words heard, "woken", or "-".
decision() {
  local line
  line=$(grep -m1 -E ': (heard|woken) ' "$1" || true)
  case $line in
    *": heard "*) sed -E 's/.* text=//; s/ (threshold|unsure)=.*//' <<<"$line" ;;
    *": woken "*) echo woken ;;
    *) echo - ;;
  esac
}

for noise in ${NOISES:-clean kitchen}; do
  folder=$work/$noise
  if [ "$noise" = clean ]; then
    folder=$work/pairs
  else
    file=$PARLEY_SHARED_DATA/noise/$noise.wav
    [ -f "$file" ] || file=.build/wake-cv/noise/$noise.wav
    [ -f "$file" ] || { echo "eval-wake-gate: no noise file for '$noise'" >&2; exit 2; }
    .build/release/parley-bench audio mix --snr "$snr" --noise "$file" --out "$folder" "$work"/pairs/*.wav
  fi
  heard_base=0 heard_gate=0 differ=0 undecoded=0 n=0 latencies=()
  for capture in "$folder"/*.wav; do
    name=$(basename "$capture" .wav)
    if [ "${SEQUENTIAL:-0}" = 1 ]; then
      run "$base" "$capture" "$work/run-base" "${BASE_DETECTOR:-}"; run "$gate" "$capture" "$work/run-gate" "${DETECTOR:-}"
    else
      run "$base" "$capture" "$work/run-base" "${BASE_DETECTOR:-}" & run "$gate" "$capture" "$work/run-gate" "${DETECTOR:-}"; wait
    fi
    a=$(decision "$work/run-base/log") b=$(decision "$work/run-gate/log")
    u=$(grep -c 'no wake phrase at its start' "$work/run-gate/log" || true)
    printf '%-8s %s  base: %-50s gate: %-50s undecoded %s\n' "$noise" "$name" "$a" "$b" "$u"
    n=$((n + 1)); undecoded=$((undecoded + u))
    [ "$a" = - ] || [ "$a" = woken ] || heard_base=$((heard_base + 1))
    [ "$b" = - ] || [ "$b" = woken ] || heard_gate=$((heard_gate + 1))
    [ "$a" = "$b" ] || differ=$((differ + 1))
    la=$(grep -m1 -o ' latency-ms=[0-9]*' "$work/run-base/log" | cut -d= -f2 || true)
    lb=$(grep -m1 -o ' latency-ms=[0-9]*' "$work/run-gate/log" | cut -d= -f2 || true)
    [ -z "$la" ] || [ -z "$lb" ] || latencies+=("$la $lb")
  done
  lat_base=$(printf '%s\n' "${latencies[@]}" | awk 'NF { print $1 }' | median)
  lat_gate=$(printf '%s\n' "${latencies[@]}" | awk 'NF { print $2 }' | median)
  echo "== $noise$([ "$noise" = clean ] || echo " at $snr dB"): $n pairs; orders heard: base $heard_base, gate $heard_gate; decided differently: $differ; utterances left undecoded by the gate: $undecoded; utterance end -> engine, median over ${#latencies[@]} heard by both: base $lat_base ms, gate $lat_gate ms"
done
}
main "$@"

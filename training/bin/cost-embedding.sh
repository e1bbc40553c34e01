#!/usr/bin/env bash
# Instructions per second of audio of the wake word's speech embedding
# (ParleyWake.SpeechEmbedding, streamed as the daemon runs it), counted by
# valgrind's callgrind on THIS machine's architecture (x86_64 here: a proxy
# for the Pi's arm64; Debian 12's qemu-user cannot count instructions).
# `parley-bench speech-embedding-cost` over SHORT and LONG seconds of three
# recordings of "computer" (the development data's first three, or FILES);
# the difference of the two totals over LONG - SHORT seconds is one second of
# audio, start-up and model loading cancelled. HEAD=FILE also scores a wake
# head (model/wake/NAME.embedding.json) on every window.
#   training/bin/cost-embedding.sh                 SHORT=5 LONG=15
# The binary is stripped first: valgrind 3.19 gives up on the debug
# information Swift 6.3 writes ("Possibly corrupted debuginfo file").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || { echo "cost-embedding: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
build_release parley-bench
bin=${PARLEY_BIN:-.build/release}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
strip -o "$work/parley-bench" "$bin/parley-bench"
if [ -n "${FILES:-}" ]; then read -ra files <<< "$FILES"
else mapfile -t files < <(ls "$PARLEY_SHARED_DATA"/wake-computer/clean/*.wav | head -3); fi
head=(); [ -z "${HEAD:-}" ] || head=(--head "$HEAD")
short=${SHORT:-5} long=${LONG:-15} ips=${IPS:-3e9}
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/parley-bench" speech-embedding-cost \
    --seconds "$1" "${head[@]}" "${files[@]}" >/dev/null 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  sed -n 's/^summary: //p; s/^totals: //p' "$work/out" | head -1
}
a=$(count "$short") b=$(count "$long")
python3 -c 'import sys
a, b, s, l, ips = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
per = (b - a) / (l - s)
print("arch=%s embedding_instructions_per_audio_second=%.3g share_of_one_core=%.2f%% (at %.2g instructions/s) start_up=%.3g"
      % (sys.argv[6], per, 100 * per / ips, ips, a - per * s))' "$a" "$b" "$short" "$long" "$ips" "$(uname -m)"

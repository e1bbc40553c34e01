#!/usr/bin/env bash
# Instructions per second of audio of the wake word's speech embedding
# (ParleyWake.SpeechEmbedding, streamed as the daemon runs it), counted by
# valgrind's callgrind on THIS machine's architecture (x86_64 here: a proxy
# for the Pi's arm64, whose own count is training/bin/cost-arm64.sh's).
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
temp_work
strip -o "$work/parley-bench" "$bin/parley-bench"
if [ -n "${FILES:-}" ]; then read -ra files <<< "$FILES"
else mapfile -t files < <(ls "$PARLEY_SHARED_DATA"/wake-computer/clean/*.wav | head -3); fi
head=(); [ -z "${HEAD:-}" ] || head=(--head "$HEAD")
LONG=${LONG:-15} instructions_per_second embedding 2 "$work/parley-bench" speech-embedding-cost --seconds "{}" "${head[@]}" "${files[@]}"

#!/usr/bin/env bash
# Audio benchmarks (release build): CPU time of the capture path per second of
# audio (ALSA file plugin read + conversion + ring), for 16 kHz mono and for
# 48 kHz stereo (a USB microphone), and playback stop latency.
# Usage: scripts/bench-audio.sh [seconds-per-run] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/evaluation-data.sh
seconds=${1:-300}
runs=${2:-5}
swift build -c release --product parley-bench >/dev/null
bench=.build/release/parley-bench
$bench audio capture-cpu --rate 16000 --channels 1 --seconds "$seconds" --runs "$runs"
$bench audio capture-cpu --rate 48000 --channels 2 --seconds "$seconds" --runs "$runs"
$bench audio playback-stop --stops 20

#!/usr/bin/env bash
# Endpointer evaluation (release build) on ../shared/data/coffee-maker/clean,
# clean and mixed with ../shared/data/noise/kitchen.wav at 6..24 dB SNR
# (peak 2048-sample frame ratio, seeded random noise slice: NoiseMixer).
# Extra arguments go to `parley-bench audio endpoint`, e.g. --trailing-ms 400,600,800
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley-bench
.build/release/parley-bench audio endpoint --snrs 6,9,12,15,18,21,24 "$@"

#!/usr/bin/env bash
# Wake word "computer": miss rate on ../shared/data/wake-computer against false
# alarms per hour on over an hour of speech without it (the coffee recordings,
# four passes: clean and kitchen noise at 20, 10 and 5 dB), over sensitivity.
# Release build; run from the package root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley-bench
.build/release/parley-bench speech-wake --passes 4 "$@"

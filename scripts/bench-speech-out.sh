#!/usr/bin/env bash
# espeak-ng speech out: time from request to the first audio chunk, and the
# synthesis real-time factor, over typical device lines. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product parley-bench >/dev/null
.build/release/parley-bench speech-synthesis "$@"

#!/usr/bin/env bash
# Parley's main job on this machine. Until the daemon lands this runs the text
# console, which drives the same conversation engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product parley >&2
exec .build/release/parley chat "$@"

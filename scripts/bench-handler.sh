#!/usr/bin/env bash
# External-app handler benchmark: perform round trips to a trivial handler
# through the real supervisor (release build). Usage: scripts/bench-handler.sh [--count N] [--handler "ARGV"]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product parley-bench >&2
exec .build/release/parley-bench handler "$@"

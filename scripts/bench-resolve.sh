#!/usr/bin/env bash
# Phrase model compilation and text resolution benchmark (release build).
# Usage: scripts/bench-resolve.sh [--extra-phrases N] [--iterations N] [--compile-runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product parley-bench >&2
exec .build/release/parley-bench resolve "$@"

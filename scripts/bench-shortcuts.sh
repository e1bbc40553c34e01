#!/usr/bin/env bash
# Shortcut files benchmark (release build): load + validate N generated
# shortcut files and recompile the phrase model with them; resolver speed
# with them loaded.
# Usage: scripts/bench-shortcuts.sh [--count N] [--runs N] [--iterations N]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product parley-bench >&2
exec .build/release/parley-bench shortcuts "$@"

#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds everything, refuses any
# compiler warning in Parley's own code, runs every test target.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! swift build --build-tests >"$log" 2>&1; then cat "$log"; exit 1; fi
# Warnings from Parley's sources (not from dependencies) fail the build.
if grep -E "^$PWD/(Sources|Tests)/.*warning:" "$log"; then
  echo "test.sh: compiler warnings in Parley's code (see above)" >&2; exit 1
fi
# A test that waits on a blocking call from async code (a socket read, a child
# process) holds a thread of Swift's cooperative pool, which has two on a
# 2-core machine; two at once starve every other test's tasks past their time
# limits. SatelliteTests did so (now serialized, its cause); without the
# cooperative queues dispatch adds a thread when one blocks, a margin against
# any such test not yet found. Only the tests (and the daemons they start) run
# so; parleyd as installed keeps Swift's default.
export SWIFT_DEBUG_CONCURRENCY_ENABLE_COOPERATIVE_QUEUES=0
swift test --skip-build --skip WebBrowserTests 2>&1
# The browser test on its own, after the rest: a real parleyd, chromium and
# a recorded command. Beside the whole suite's parallel load (dozens of
# daemons, decoders and compiles on 2 cores) the command is sometimes heard
# in two pieces and rejected (seen under load only; the cause is under
# investigation); here it runs as on a device.
swift test --skip-build --filter WebBrowserTests 2>&1
# LAN attacks on a real parleyd over loopback (scripts/attack.sh, about 10 s):
# each refused, a voice order answered within 1 s throughout, memory bounded.
bash scripts/attack.sh
# The example external apps' own tests (their handlers through their protocol).
python3 examples/apps/kitchen-lights/test_handler.py
examples/apps/shopping-list/test.sh
python3 examples/apps/home-assistant/test_handler.py
# The training package's own tests (training/: wake word features, heads and
# their evaluation), in its pinned environment (training/setup.sh).
py=$(bash training/setup.sh)
(cd training && PYTHONPATH=. "$py" -m pytest -q tests)

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
# Many async tests wait on blocking calls (a fake Home Assistant's socket
# reads, child processes). On a 2-core machine Swift's cooperative pool has two
# threads, and a few such waits starve the other tests' tasks past their time
# limits: on a slower 2-core machine SatelliteTests, ShortcutControlTests and
# ExternalAppsDaemonTests failed so in every whole-suite run, at 27863ed as
# after it, and passed alone. Without the cooperative queues, dispatch adds a
# thread when one blocks. Only the tests (and the daemons they start) run so;
# parleyd as installed keeps Swift's default.
export SWIFT_DEBUG_CONCURRENCY_ENABLE_COOPERATIVE_QUEUES=0
swift test --skip-build --skip WebBrowserTests 2>&1
# The browser test on its own, after the rest: a real parleyd, chromium and
# a recorded command. Beside the whole suite's parallel load (dozens of
# daemons, decoders and compiles on 2 cores) the command is sometimes heard
# in two pieces and rejected (seen under load only; the cause is under
# investigation); here it runs as on a device.
swift test --skip-build --filter WebBrowserTests 2>&1
# The example external apps' own tests (their handlers through their protocol).
python3 examples/apps/kitchen-lights/test_handler.py
examples/apps/shopping-list/test.sh
python3 examples/apps/home-assistant/test_handler.py

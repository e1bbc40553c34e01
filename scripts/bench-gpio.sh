#!/usr/bin/env bash
# GPIO event path: time from an edge's kernel timestamp to the engine's task
# receiving the recognised gesture, through the real watcher thread (poll on
# the line event fd and an eventfd), gpiod_line_event_read_fd, the gesture
# recogniser and the bounded AsyncStream. The line's event fd is a pipe fed
# with kernel gpioevent_data records, so no hardware is needed; on a board the
# interrupt-to-timestamp time comes on top. Release mode; prints the median.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --build-tests -Xswiftc -enable-testing >/dev/null
swift test -c release --skip-build -Xswiftc -enable-testing \
  --filter "ParleyHardwareTests.GPIOEventPathTests" 2>&1 | grep "gpio-bench:"

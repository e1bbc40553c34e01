#!/usr/bin/env bash
# The whole test suite under ThreadSanitizer: every data race between threads
# (the audio thread, GPIO, GRDB's queue, the cooperative pool) that the tests
# exercise is reported with both stacks. Slow: a separate build (scratch path
# .build-tsan) and the suite at several times its usual run time; run it at
# low priority. Fails if any test fails or TSan reports anything.
#   scripts/tsan.sh [--filter REGEX]    extra arguments go to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-tsan
reports="$PWD/$scratch/reports"
rm -rf "$reports"; mkdir -p "$reports"
# Reports go to files (one per process: the test runner and every parleyd or
# parley a test starts, whose standard error the tests read themselves).
# halt_on_error=0 and exitcode=0: report every race without failing the test
# that ran into it; the count below decides. second_deadlock_stack: both
# stacks of a lock-order inversion. scripts/tsan.supp: reports known not to
# be races, each with its reason.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 exitcode=0 second_deadlock_stack=1 log_path=$reports/tsan suppressions=$PWD/scripts/tsan.supp}"
swift build --build-tests --sanitize=thread --scratch-path "$scratch"
set +e
swift test --skip-build --sanitize=thread --scratch-path "$scratch" "$@"
status=$?
set -e
races=$(cat "$reports"/tsan.* 2>/dev/null | grep -c "WARNING: ThreadSanitizer" || true)
if [ "$races" -ne 0 ]; then
  echo "tsan.sh: reports in $reports:"
  grep -h "^SUMMARY: ThreadSanitizer" "$reports"/tsan.* | sort | uniq -c | sort -rn
fi
echo "tsan.sh: $races ThreadSanitizer report(s); swift test exit status $status"
if [ "$races" -ne 0 ] || [ "$status" -ne 0 ]; then exit 1; fi

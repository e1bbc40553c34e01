#!/usr/bin/env bash
# scripts/fuzz.sh SECONDS [TARGET...]
#
# Builds parley-fuzz with libFuzzer and AddressSanitizer (its own build
# directory, .build-fuzz/, so the normal build is untouched) and runs every
# fuzz target (or the ones named) for SECONDS each, starting from the seed
# corpus committed in Tests/Fuzz/corpus/<target>/. Exits non-zero on any
# crash, leak, out-of-memory or time-out; the input that caused it is kept in
# .build-fuzz/artifacts/<target>/ and printed as a replay command.
#
# Targets: config board shortcut manifest handler control wav template resolver wyoming page.
# Limits per input: FUZZ_TIMEOUT seconds (default 10), FUZZ_RSS_MB (default 2048),
# FUZZ_MAX_LEN bytes (default 16384). The table at the end (executions, corpus
# size, result per target) is what BENCHMARKS.md "Fuzzing" quotes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
all=(config board shortcut manifest handler control wav template resolver wyoming page)
targets=("${@:-${all[@]}}")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
build=.build-fuzz
export PATH=/opt/swift/usr/bin:$PATH

log=$(mktemp); trap 'rm -f "$log"' EXIT
# -sanitize=fuzzer on every Swift module gives libFuzzer its coverage; SwiftPM's
# own --sanitize only links the runtimes. PARLEY_LIBFUZZER swaps the replay
# main for LLVMFuzzerTestOneInput (Sources/parley-fuzz/Entry.swift).
if ! nice -n 10 swift build --build-path "$build" --product parley-fuzz \
    --sanitize fuzzer --sanitize address \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DPARLEY_LIBFUZZER >"$log" 2>&1; then
  grep -v "Cannot export local symbol" "$log" >&2; exit 1
fi
binary=$build/debug/parley-fuzz

failed=0
summary=()
for target in "${targets[@]}"; do
  seeds=Tests/Fuzz/corpus/$target
  [ -d "$seeds" ] || { echo "fuzz.sh: no seed corpus $seeds (targets: ${all[*]})" >&2; exit 2; }
  work=$build/corpus/$target        # grows across runs; never committed
  artifacts=$build/artifacts/$target/
  mkdir -p "$work" "$artifacts"
  out=$build/logs/$target.log; mkdir -p "$build/logs"
  status=0
  PARLEY_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
    nice -n 10 "$binary" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" \
      -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -max_len="${FUZZ_MAX_LEN:-16384}" \
      -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$seeds" >"$out" 2>&1 || status=$?
  runs=$(grep -E "^stat::number_of_executed_units:" "$out" | awk '{print $2}' || true)
  corpus=$(ls "$work" | wc -l)
  if [ "$status" -eq 0 ]; then
    result=ok
  else
    failed=1
    result="FAILED (exit $status)"
    echo "=== $target failed; the end of $out:" >&2
    grep -vE "^#[0-9]+" "$out" | tail -40 >&2
    for a in "$artifacts"*; do
      [ -f "$a" ] && echo "replay: PARLEY_FUZZ_TARGET=$target $binary $a   (or: swift run parley-fuzz $target $a)" >&2
    done
  fi
  summary+=("$(printf '%-9s %10s runs in %4ss  corpus %5s  %s' "$target" "${runs:-?}" "$seconds" "$corpus" "$result")")
done
printf '%s\n' "${summary[@]}"
exit $failed

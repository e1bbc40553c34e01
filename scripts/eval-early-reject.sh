#!/usr/bin/env bash
# Rejection while spoken (issue 27 item 4, `EarlyRejection`; measured, not
# shipped: BENCHMARKS.md, "Rejecting while spoken"): every coffee
# order of ../shared/data/coffee-maker decoded by `parley understand
# --reject-early measure` (the daemon's path; it looks at the words so far
# every 250 ms from 750 ms on and gives nothing up), clean, in the training
# noises (babble, pink, clatter at 6, 12 and 18 dB) and in kitchen noise (6,
# 12, 18 dB: reported only, never used for choosing), and the television-like
# scene of scripts/bench-daemon.sh cut into 10 s pieces. Then
# scripts/confidence/early_reject.py chooses the first look and the margin
# on five folds of the training noises, split by voice (the rule is in its header) and
# reports, held out, the commands that would have been given up and the
# share of the television's speech left undecoded.
#
#   scripts/eval-early-reject.sh
#
# Environment: WORK (keep mixes and decodes there; reused by later runs).
# Release build; run from the package root.
set -euo pipefail
main() {
cd "$(dirname "$0")/.."
. scripts/lib/evaluation-data.sh
build_release parley parley-bench
work_folder
data=$PARLEY_SHARED_DATA
[ -f "$work/noise/pink.wav" ] || python3 scripts/adapt/make-noises.py "$work/noise" 60 >/dev/null
mkdir -p "$work/early"
decode() {  # $1 name, then files
  local out=$work/early/$1.jsonl; shift
  [ -s "$out" ] || .build/release/parley understand --app coffee-maker --reject-early measure "$@" > "$out"
}
decode clean "$data"/coffee-maker/clean/*.wav
for noise in babble pink clatter kitchen; do
  if [ "$noise" = kitchen ]; then noise_file=$data/noise/kitchen.wav; else noise_file=$work/noise/$noise.wav; fi
  for snr in 6 12 18; do
    dir=$work/audio/$noise-$snr
    [ -d "$dir" ] || .build/release/parley-bench audio mix --noise "$noise_file" --snr "$snr" --out "$dir" "$data"/coffee-maker/clean/*.wav >/dev/null
    decode "$noise-$snr" "$dir"/*.wav
  done
done
# The television: the idle scene, in 10 s pieces (understand stops at an
# accepted segment; a piece is a fresh start).
export work data
# shellcheck source=scripts/lib/idle-scenes.sh
source scripts/lib/idle-scenes.sh
tv=$(scene tv 120)
mkdir -p "$work/tv"
[ -f "$work/tv/piece000.wav" ] || sox "$tv" "$work/tv/piece%3n.wav" trim 0 10 : newfile : restart
decode tv "$work"/tv/piece*.wav
[ -s "$work/voice-folds.txt" ] || python3 scripts/adapt/voice_folds.py 5 "$data"/coffee-maker/clean/*.wav > "$work/voice-folds.txt" 2>/dev/null
VOICE_FOLDS=$work/voice-folds.txt python3 scripts/confidence/early_reject.py "$data/coffee-maker/labels.json" "$work/early"
}
main "$@"

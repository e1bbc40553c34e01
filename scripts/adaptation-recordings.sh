#!/usr/bin/env bash
# The recordings the shipped acoustic model is adapted from, as WAV: decodes
# model/adaptation/clean/*.flac (kept in the repository in FLAC, about a third
# of the WAVs' size; model/adaptation/README.md) into OUT_DIR and prints
# OUT_DIR. The decode is lossless and restores each original WAV byte for
# byte (the FLAC files carry the WAV headers: flac --keep-foreign-metadata).
#
#   scripts/adaptation-recordings.sh [OUT_DIR]   (default .build/adaptation/clean)
#
# A WAV already decoded from the same FLAC file is kept (by modification time).
set -euo pipefail
main() {
cd "$(dirname "$0")/.."
out=${1:-.build/adaptation/clean}
src=model/adaptation/clean
command -v flac >/dev/null || { echo "adaptation-recordings: flac is missing (scripts/setup.sh installs it)" >&2; exit 1; }
shopt -s nullglob
flacs=("$src"/*.flac)
((${#flacs[@]})) || { echo "adaptation-recordings: no recordings in $src (expected the *.flac files of model/adaptation/README.md)" >&2; exit 1; }
mkdir -p "$out"
# A WAV whose FLAC file is gone (renamed, removed) must not be trained on.
for wav in "$out"/*.wav; do
  [ -f "$src/$(basename "$wav" .wav).flac" ] || rm -f "$wav"
done
for f in "${flacs[@]}"; do
  wav="$out/$(basename "$f" .flac).wav"
  [ "$wav" -nt "$f" ] && continue
  flac --silent --decode --keep-foreign-metadata --force -o "$wav.part" "$f" 2>/dev/null \
    || { echo "adaptation-recordings: $f: not a FLAC file flac can decode" >&2; rm -f "$wav.part"; exit 1; }
  touch "$wav.part"   # flac gives the WAV the FLAC file's time; the check above needs the decode's
  mv "$wav.part" "$wav"
done
echo "$out"
}
main "$@"

#!/usr/bin/env bash
# The adapted acoustic model Parley ships (speech.acoustic_model: adapted),
# built from Debian's en-us model by scripts/adapt-model.sh with the recipe
# below, on all 111 recordings of model/adaptation/ (in FLAC in the
# repository, decoded losslessly by scripts/adaptation-recordings.sh into
# .build/adaptation/clean; README, "The acoustic model"). Never downloaded.
#
#   scripts/shipped-model.sh [OUT_DIR]     (default .build/model/en-us-adapted)
#
# A folder already built from the same inputs is kept (a few seconds instead
# of about 4 minutes): OUT_DIR/INPUTS holds the hash of the recipe, the
# adaptation scripts, the recordings (their FLAC files) and labels, and the
# stock model. With
# PARLEY_MODEL_KEY_SOURCES=1 (scripts/package-deb.sh) the hash also covers the
# recogniser's sources (git), since the transcripts come from its decode; a
# development checkout (scripts/run.sh) keeps its model across code changes
# (delete the folder to rebuild). PARLEY_SKIP_BUILD=1 is passed through.
#
# The recipe (BENCHMARKS.md, "Acoustic model adaptation", the held-out table
# that chose it): MAP on the stock model, multi-condition data.
set -euo pipefail
# In a function, so bash has read it whole before it runs.
main() {
cd "$(dirname "$0")/.."
# adapt-model.sh builds the release parley (transcripts) and parley-bench
# (noise mixing) on this host; package-deb.sh may run without Swift on PATH.
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
out=${1:-.build/model/en-us-adapted}
export METHOD=map TAU=100 MAP_PARTS=all
unset CONDITIONS STOCK ALSO TAUS TRANSCRIPTS KEEP_WORK LABELS

stock=/usr/share/pocketsphinx/model/en-us/en-us
data=model/adaptation
inputs() {
  echo "recipe METHOD=$METHOD TAU=$TAU MAP_PARTS=$MAP_PARTS"
  sha256sum scripts/adapt-model.sh scripts/adaptation-recordings.sh scripts/adapt/*.py "$data/labels.json" "$data"/clean/*.flac
  (cd "$stock" && sha256sum mdef means variances sendump transition_matrices feat.params noisedict)
  if [ "${PARLEY_MODEL_KEY_SOURCES:-}" = 1 ]; then
    git ls-files -s Sources Package.swift
    git diff HEAD -- Sources Package.swift | sha256sum
  fi
}
key=$(inputs | sha256sum | cut -c1-64)
if [ -f "$out/sendump" ] && [ "$(cat "$out/INPUTS" 2>/dev/null)" = "$key" ]; then
  echo "shipped-model: $out is up to date" >&2
  return 0
fi
mkdir -p "$(dirname "$out")"
scripts/adapt-model.sh "$out"
echo "$key" > "$out/INPUTS"
echo "shipped-model: built $out" >&2
}
main "$@"

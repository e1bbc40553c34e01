#!/usr/bin/env bash
# Makes a copy of a PocketSphinx model folder that sphinxtrain can also
# read: the model's files plus `mdef.txt` (text model definition) and
# `mixture_weights` (float mixture weights recovered from the 8-bit
# sendump). Room adaptation (`parley adapt`, RoomAdapter) needs both; the
# adapted model scripts/adapt-model.sh builds already has them.
#
#   scripts/adapt/training-files.sh [MODEL_DIR] OUT_DIR
#
# MODEL_DIR defaults to Debian's en-us model. Deterministic.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -eq 1 ]; then model=/usr/share/pocketsphinx/model/en-us/en-us; out=$1
else model=${1:?usage: training-files.sh [MODEL_DIR] OUT_DIR}; out=${2:?usage: training-files.sh [MODEL_DIR] OUT_DIR}; fi
[ -f "$model/mdef" ] && [ -f "$model/sendump" ] || { echo "training-files: $model is not a PocketSphinx PTM model folder (mdef, sendump)" >&2; exit 1; }
command -v pocketsphinx_mdef_convert >/dev/null || { echo "training-files: pocketsphinx_mdef_convert missing (scripts/setup.sh installs pocketsphinx)" >&2; exit 1; }
mkdir -p "$out"
for f in mdef feat.params noisedict means variances transition_matrices sendump; do cp "$model/$f" "$out/$f"; done
pocketsphinx_mdef_convert -text "$model/mdef" "$out/mdef.txt" >/dev/null 2>&1
python3 scripts/adapt/sendump2mixw.py "$model/sendump" "$out/mixture_weights" >/dev/null
echo "training-files: $out (from $model)" >&2

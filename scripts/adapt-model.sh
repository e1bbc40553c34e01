#!/usr/bin/env bash
# Builds an acoustic model adapted to Parley's commands from Debian's en-us
# model (pocketsphinx-en-us, a PTM model) with Debian's sphinxtrain, the way
# the CMU adaptation tutorial describes: features with the model's own
# feat.params (sphinx_fe), forced alignment of labelled transcripts (bw), then
# MLLR (mllr_solve, mllr_transform), MAP (map_adapt, mk_s2sendump) or both.
#
#   scripts/adapt-model.sh OUT_DIR [FILE.wav ...]
#
# FILE.wav: labelled coffee-maker recordings to adapt on (default: all 111 of
# model/adaptation/, decoded from FLAC into .build/adaptation/clean by
# scripts/adaptation-recordings.sh; evaluation passes the training folds of
# the evaluation data, docs/evaluation-data.md).
# Environment:
#   LABELS=FILE           the recordings' labels (default model/adaptation/labels.json,
#                          the coffee-maker set's labels.json)
#   METHOD=both|map|mllr  (default both: MLLR first, then MAP with the
#                          MLLR-transformed means as the prior)
#   CONDITIONS="clean babble:6 ..."  the copies of each recording trained on:
#                          clean, or NOISE:SNR with NOISE one of the training
#                          noises of scripts/adapt/make-noises.py (never the
#                          evaluation's kitchen noise). Default: multi-condition.
#   STOCK=DIR             the model adapted from (default Debian's en-us)
#   PARLEY_SKIP_BUILD=1   use the release binaries as they are (set by eval-adapt.sh)
#   KEEP_WORK=1           keep the work folder (features, counts) beside OUT_DIR
#   TAU=T                 MAP with a fixed prior weight: map_adapt -bayesmean no
#                          -fixedtau yes -tau T (T frames of evidence hold a mean
#                          halfway between the stock and the data's). Unset: the
#                          tutorial's Bayesian means (-bayesmean yes, which ignores
#                          tau for the means; tau 10 for the rest)
#   MAP_PARTS=all|means   what MAP moves (default all: means, variances, mixture
#                          weights, transitions); means keeps the stock rest
#   ALSO=DIR              also write DIR/map (Bayesian means) and, with METHOD=both,
#                          DIR/mllr: the MAP-only and MLLR-only models from the
#                          same statistics
#   TAUS="100 400"        with ALSO, also DIR/map-tauT (all parts) and
#                          DIR/mapmean-tauT (means only) for each T, from the same
#                          statistics of the stock model: one bw pass, many
#                          variants (map_adapt and mk_s2sendump take seconds)
#   DENOISE=neural[:DB]   adapt on what the decoder hears behind speech.front_end:
#                          neural: every copy (clean and noisy) is written through
#                          the neural noise suppressor (parley-bench audio denoise)
#                          before its features are computed
#   TRANSCRIPTS=FILE      reuse a transcripts.tsv (path TAB words) of an earlier
#                          run instead of decoding; only the lines of FILE.wav are used
#
# Transcripts: labels.json holds slots, not words. Each recording is decoded by
# `parley understand` with the stock model on the coffee grammar; its
# transcript is kept when intent and every labelled slot match the label
# (those the stock model gets wrong are left out; the count is printed).
#
# Output: OUT_DIR is a complete PocketSphinx model folder (mdef, feat.params,
# noisedict, means, variances, transition_matrices, sendump) usable as -hmm,
# plus mllr_matrix when MLLR ran, and ADAPTED.txt saying how it was made.
# It also holds what sphinxtrain's bw needs to run against this model later
# (the device's room adaptation does): mdef.txt (the text mdef) and
# mixture_weights (the float weights its sendump was made from).
# Deterministic: sphinx_fe runs without dither, noise slices are seeded, the
# noises are generated from fixed seeds; the same inputs give the same bytes.
set -euo pipefail
# In a function, so bash has read it whole before it runs (editing the file
# during a long run cannot change what runs).
main() {
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/adapt-model.sh OUT_DIR [FILE.wav ...]}
shift
labels=${LABELS:-model/adaptation/labels.json}
[ -f "$labels" ] || { echo "adapt-model: LABELS=$labels: no such file (expected the recordings' labels.json)" >&2; exit 2; }
method=${METHOD:-both}
conditions=${CONDITIONS:-clean babble:6 babble:12 pink:9 brown:12 clatter:6 clatter:15 white:18}
stock=${STOCK:-/usr/share/pocketsphinx/model/en-us/en-us}
dict=/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict
st=/usr/lib/sphinxtrain
case $method in both|map|mllr) ;; *) echo "METHOD=$method: expected both, map or mllr" >&2; exit 2;; esac
parts=${MAP_PARTS:-all}
case $parts in all|means) ;; *) echo "MAP_PARTS=$parts: expected all or means" >&2; exit 2;; esac
for t in ${TAU:-} ${TAUS:-}; do
  [[ $t =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "TAU/TAUS: '$t' is not a positive number" >&2; exit 2; }
done
for tool in "$st/bw" "$st/map_adapt" "$st/mllr_solve" "$st/mllr_transform" "$st/mk_s2sendump" \
            "$(command -v sphinx_fe || true)" "$(command -v pocketsphinx_mdef_convert || true)"; do
  [ -x "$tool" ] || { echo "adapt-model: missing $tool (scripts/setup.sh installs sphinxtrain, sphinxbase-utils, pocketsphinx)" >&2; exit 1; }
done
[ -f "$stock/feat.params" ] || { echo "adapt-model: $stock is not a PocketSphinx model folder (no feat.params)" >&2; exit 1; }

if [ $# -gt 0 ]; then files=("$@"); else
  recordings=$(scripts/adaptation-recordings.sh)
  files=("$recordings"/*.wav)
fi

if [ -z "${PARLEY_SKIP_BUILD:-}" ]; then
  swift build -c release --product parley >/dev/null
  swift build -c release --product parley-bench >/dev/null
fi
work="$out.work"
rm -rf "$work" "$out"
mkdir -p "$work/wav" "$work/mfc" "$work/noise" "$out"
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

# 1. Transcripts by constrained decoding, checked against the labels.
IFS=$'\n' sorted=($(printf '%s\n' "${files[@]}" | sort)); unset IFS
if [ -n "${TRANSCRIPTS:-}" ]; then
  printf '%s\n' "${sorted[@]}" | awk -F'\t' 'NR == FNR { want[$0] = 1; next } ($1 in want)' - "$TRANSCRIPTS" > "$work/transcripts.tsv"
  echo "adapt-model: $(wc -l < "$work/transcripts.tsv") of ${#sorted[@]} recordings have a transcript in $TRANSCRIPTS" >&2
else
.build/release/parley understand --app coffee-maker --front-end none --set "hmm=$stock" "${sorted[@]}" > "$work/decoded.jsonl"
python3 - "$labels" "$work/decoded.jsonl" "$work/transcripts.tsv" <<'EOF'
import json, os, sys
labels = json.load(open(sys.argv[1])); kept = dropped = 0
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[2]):
        r = json.loads(line); name = os.path.basename(r["file"]); want = labels.get(name)
        if want is None:
            sys.exit(f"adapt-model: {r['file']}: no label in {sys.argv[1]}")
        good = r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items())
        if good and r["transcript"]:
            out.write(f"{r['file']}\t{r['transcript']}\n"); kept += 1
        else:
            dropped += 1
print(f"adapt-model: transcripts for {kept} recordings ({dropped} left out: the stock model's decode disagrees with the label)", file=sys.stderr)
EOF
fi
cut -f1 "$work/transcripts.tsv" > "$work/kept.list"
mapfile -t kept < "$work/kept.list"

# 2. The copies trained on: clean and mixed with the training noises.
python3 scripts/adapt/make-noises.py "$work/noise" 60 >/dev/null
: > "$work/train.fileids"; : > "$work/train.transcription"
for cond in $conditions; do
  if [ "$cond" = clean ]; then
    dir=clean; mkdir -p "$work/wav/clean"
    for f in "${kept[@]}"; do ln -sf "$(realpath "$f")" "$work/wav/clean/$(basename "$f")"; done
  else
    noise=${cond%%:*}; snr=${cond#*:}; dir="$noise-$snr"
    [ -f "$work/noise/$noise.wav" ] || { echo "CONDITIONS: $cond: unknown noise '$noise'; expected white, pink, brown, babble or clatter" >&2; exit 2; }
    .build/release/parley-bench audio mix --snr "$snr" --noise "$work/noise/$noise.wav" --out "$work/wav/$dir" "${kept[@]}" >/dev/null
  fi
  while IFS=$'\t' read -r file words; do
    id="$dir/$(basename "$file" .wav)"
    echo "$id" >> "$work/train.fileids"
    echo "<s> $words </s> ($(basename "$id"))" >> "$work/train.transcription"
  done < "$work/transcripts.tsv"
done
if [ -n "${DENOISE:-}" ]; then
  # 2b. Through the noise suppressor, as the daemon's decoders hear them.
  for d in "$work"/wav/*/; do
    dir=$(basename "$d")
    .build/release/parley-bench audio denoise --front-end "$DENOISE" --out "$work/wav-denoised/$dir" "$d"*.wav
  done
  rm -rf "$work/wav"; mv "$work/wav-denoised" "$work/wav"
fi
echo "adapt-model: $(wc -l < "$work/train.fileids") utterances (${#kept[@]} recordings x conditions: $conditions)" >&2

# 3. Features exactly as the model's front end computes them.
for d in "$work"/wav/*/; do mkdir -p "$work/mfc/$(basename "$d")"; done
sphinx_fe -argfile "$stock/feat.params" -samprate 16000 -dither no -c "$work/train.fileids" \
  -di "$work/wav" -do "$work/mfc" -ei wav -eo mfc -mswav yes > "$work/sphinx_fe.log" 2>&1

# 4. The starting model in SphinxTrain's formats: a text mdef and mixture
# weights recovered from the 8-bit sendump.
base="$work/base"; mkdir -p "$base"
pocketsphinx_mdef_convert -text "$stock/mdef" "$base/mdef.txt" > "$work/mdef.log" 2>&1
python3 scripts/adapt/sendump2mixw.py "$stock/sendump" "$base/mixture_weights" >/dev/null
cp "$stock/means" "$stock/variances" "$stock/transition_matrices" "$base/"
param() { awk -v k="-$1" '$1 == k { print $2 }' "$stock/feat.params"; }

# bw collects the statistics of the adaptation data aligned to its transcripts.
bw_pass() { # MODEL_DIR ACCUM_DIR
  mkdir -p "$2"
  "$st/bw" -moddeffn "$base/mdef.txt" -ts2cbfn ".$(param model)." \
    -meanfn "$1/means" -varfn "$1/variances" -mixwfn "$base/mixture_weights" -tmatfn "$base/transition_matrices" \
    -feat "$(param feat)" -svspec "$(param svspec)" -cmn "$(param cmn)" -agc "$(param agc)" -varnorm "$(param varnorm)" \
    -dictfn "$dict" -fdictfn "$stock/noisedict" -ctlfn "$work/train.fileids" -lsnfn "$work/train.transcription" \
    -cepdir "$work/mfc" -cepext mfc -accumdir "$2" -timing no > "$2.log" 2>&1 \
    || { tail -20 "$2.log" >&2; echo "adapt-model: bw failed (log above)" >&2; exit 1; }
  grep -E "^INFO: bw.c.*(Counts|Normalized)|ERROR" "$2.log" | tail -3 >&2 || true
}

map_pass() { # PRIOR_DIR ACCUM_DIR OUT_MODEL_DIR [TAU [PARTS]]
  local tau=${4:-} what=${5:-all} log="$work/$(basename "$3").map"
  local weight=(-bayesmean yes)
  [ -z "$tau" ] || weight=(-bayesmean no -fixedtau yes -tau "$tau")
  mkdir -p "$3"
  "$st/map_adapt" -moddeffn "$base/mdef.txt" -ts2cbfn ".$(param model)." "${weight[@]}" \
    -meanfn "$1/means" -varfn "$1/variances" -mixwfn "$base/mixture_weights" -tmatfn "$base/transition_matrices" \
    -accumdir "$2" -mapmeanfn "$3/means" -mapvarfn "$3/variances" \
    -mapmixwfn "$3/mixture_weights" -maptmatfn "$3/transition_matrices" > "$log.map_adapt.log" 2>&1 \
    || { tail -20 "$log.map_adapt.log" >&2; exit 1; }
  if [ "$what" = means ]; then
    # Means only: the prior's variances, the stock weights and transitions.
    cp "$1/variances" "$base/transition_matrices" "$base/mixture_weights" "$3/"
    cp "$stock/sendump" "$3/"
  else
    "$st/mk_s2sendump" -pocketsphinx yes -moddeffn "$base/mdef.txt" -mixwfn "$3/mixture_weights" \
      -sendumpfn "$3/sendump" > "$log.mk_s2sendump.log" 2>&1
  fi
}
finish() { # MODEL_DIR METHOD: the files PocketSphinx needs besides the adapted ones
  cp "$stock/mdef" "$stock/feat.params" "$stock/noisedict" "$base/mdef.txt" "$1/"
  # bw reads float mixture weights; a model whose weights MAP did not move
  # gets the stock ones its sendump holds.
  [ -f "$1/mixture_weights" ] || cp "$base/mixture_weights" "$1/"
  if [ -f "$stock/README" ]; then cp "$stock/README" "$1/README.en-us"; fi
  {
    echo "Adapted from $stock by scripts/adapt-model.sh (METHOD=$2)."
    [ "$2" = mllr ] || echo "MAP: ${3:-tau $(tau_words "${TAU:-}"), parts: $parts}"
    echo "Conditions: $conditions"
    echo "Recordings: ${#kept[@]} of ${#files[@]} (transcripts from the stock model's decode, kept when the label matches)"
    echo "Training utterances: $(wc -l < "$work/train.fileids")"
    echo "Recording list (sha256): $(printf '%s\n' "${kept[@]##*/}" | sha256sum | cut -c1-16)"
  } > "$1/ADAPTED.txt"
}

tau_words() { if [ -n "$1" ]; then echo "fixed $1"; else echo "Bayesian means"; fi; }

# 5. The statistics of the adaptation data aligned on the stock model: what
# MLLR solves from and what MAP on the stock model moves it by.
prior="$base"
bw_pass "$base" "$work/accum-stock"
if [ "$method" != map ]; then
  # MLLR: one global mean transform, applied to the means (also kept as
  # mllr_matrix for -mllr).
  "$st/mllr_solve" -meanfn "$base/means" -varfn "$base/variances" -outmllrfn "$out/mllr_matrix" \
    -accumdir "$work/accum-stock" > "$work/mllr_solve.log" 2>&1
  mkdir -p "$work/mllr"
  cp "$base/variances" "$work/mllr/"
  "$st/mllr_transform" -inmeanfn "$base/means" -outmeanfn "$work/mllr/means" -mllrmat "$out/mllr_matrix" \
    > "$work/mllr_transform.log" 2>&1
  prior="$work/mllr"
fi
if [ -n "${ALSO:-}" ]; then
  if [ "$method" = both ]; then
    mkdir -p "$ALSO/mllr"
    cp "$work/mllr/means" "$out/mllr_matrix" "$base/variances" "$base/transition_matrices" "$stock/sendump" "$ALSO/mllr/"
    finish "$ALSO/mllr" mllr
  fi
  map_pass "$base" "$work/accum-stock" "$ALSO/map"
  finish "$ALSO/map" map "Bayesian means, parts: all"
  for t in ${TAUS:-}; do
    map_pass "$base" "$work/accum-stock" "$ALSO/map-tau$t" "$t" all
    finish "$ALSO/map-tau$t" map "fixed $t, parts: all"
    map_pass "$base" "$work/accum-stock" "$ALSO/mapmean-tau$t" "$t" means
    finish "$ALSO/mapmean-tau$t" map "fixed $t, parts: means"
  done
fi
if [ "$method" = mllr ]; then
  cp "$work/mllr/means" "$base/variances" "$base/transition_matrices" "$stock/sendump" "$out/"
else
  # 6. MAP: move every Gaussian, mixture weight and transition (or the means
  # only) towards the adaptation data; with MLLR first, on statistics
  # re-aligned on the MLLR-transformed model.
  accum="$work/accum-stock"
  if [ "$method" = both ]; then accum="$work/accum-map"; bw_pass "$prior" "$accum"; fi
  map_pass "$prior" "$accum" "$out" "${TAU:-}" "$parts"
fi
finish "$out" "$method"
echo "adapt-model: $out ($method)" >&2
}
main "$@"

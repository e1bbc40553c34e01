#!/usr/bin/env bash
# What acoustic model adaptation buys, measured on recordings the model was
# not adapted on: k-fold cross-validation over ../shared/data/coffee-maker.
#
#   training/bin/eval-adapt.sh
#
# Environment: FOLDS (5), ONLY_FOLDS (e.g. "0 1 2 3": run only these folds; the
# table pools the folds run), FOLD_BY (recording or voice, below),
# SNRS ("clean 18 12 6", kitchen noise), FRONT_END (none: the front end every
# variant is decoded behind, as `parley understand --front-end`; with a
# neural one the folds' models are adapted on denoised copies, DENOISE of
# scripts/adapt-model.sh, so give it a WORK of its own),
# VARIANTS ("stock mllr map both both-clean"), WORK (a folder to keep
# models and decodes in; default a temporary one, removed).
#
# Folds: labels.json has no speaker ids. FOLD_BY=recording (the default, so
# the older figures reproduce): recording i goes to fold
# int(sha256(file name)[:8], 16) % FOLDS; a speaker's recordings then sit in
# test and training folds alike, so the figures flatter adaptation.
# FOLD_BY=voice: recordings grouped by voice (training/parley_training/voice_folds.py:
# Ward clustering of their mean and spread of MFCCs over speech, CLUSTERS
# clusters, default 24), whole clusters to folds; its models and decodes are
# kept apart in WORK (voicefoldK), so the two can share WORK. A fold's models
# and decodes in WORK are reused as they are: change FOLDS or CLUSTERS with a
# fresh WORK. Each fold's models are adapted
# (scripts/adapt-model.sh) on the other folds only, then every variant is run
# through `parley understand` on the fold left out; results are pooled over
# the folds and scored as eval-understand.sh scores them: right, wrong (an
# intent or slot not the label's) and rejected (no intent). Kitchen noise is
# mixed into all recordings once, slice i seeded by the recording's index in
# the full sorted list, so "stock" equals eval-understand.sh's figures.
#   stock       Debian's en-us model
#   mllr        one global MLLR mean transform            } multi-condition
#   map         MAP on the stock model                    } data (clean + the
#   both        MLLR, then MAP with MLLR means as prior   } training noises)
#   both-clean  as both, adapted on the clean recordings only
#   map-tauT    MAP with a fixed prior weight T (-bayesmean no -fixedtau yes
#               -tau T) on the stock model, every part     } multi-condition,
#   mapmean-tauT  the same, means only (stock variances,   } from the same bw
#               mixture weights and transitions)            } statistics as map
# Any number of T: the fold's model build makes all of them from one bw pass.
set -euo pipefail
# In a function, so bash has read it whole before it runs (editing the file
# during a long run cannot change what runs).
main() {
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
data=$PARLEY_SHARED_DATA/coffee-maker
[ -d "$data/clean" ] || { echo "eval-adapt: evaluation data missing: $data/clean (set PARLEY_SHARED_DATA to the folder of docs/evaluation-data.md)" >&2; exit 1; }
export LABELS=$data/labels.json   # adapt-model.sh: the folds' labels
folds=${FOLDS:-5}
snrs=${SNRS:-clean 18 12 6}
variants=${VARIANTS:-stock mllr map both both-clean}
fold_by=${FOLD_BY:-recording}
front_end=${FRONT_END:-none}
case $front_end in neural*) denoise=$front_end;; *) denoise=;; esac
case $fold_by in
  recording) fold=fold
    fold_of() { python3 -c 'import hashlib, os, sys
k = int(sys.argv[1])
for f in sys.argv[2:]: print(int(hashlib.sha256(os.path.basename(f).encode()).hexdigest()[:8], 16) % k, f)' "$folds" "$@"; } ;;
  voice) fold=voicefold
    fold_of() { nice -n 10 /usr/bin/python3 -m parley_training.voice_folds "$folds" "$@"; } ;;
  *) echo "FOLD_BY=$fold_by: expected recording or voice" >&2; exit 2 ;;
esac
work_folder
all=("$data"/clean/*.wav)

for snr in $snrs; do
  [ "$snr" = clean ] || [ -d "$work/audio/$snr" ] ||
    .build/release/parley-bench audio mix --snr "$snr" --out "$work/audio/$snr" "${all[@]}" >/dev/null
done
if [ ! -f "$work/transcripts.tsv" ]; then
  # Transcripts of every recording once (stock decode checked against its
  # label); each fold's adaptation reads only its training recordings' lines.
  PARLEY_SKIP_BUILD=1 KEEP_WORK=1 METHOD=mllr CONDITIONS=clean scripts/adapt-model.sh "$work/transcribe" "${all[@]}" 2>/dev/null
  cp "$work/transcribe.work/transcripts.tsv" "$work/transcripts.tsv"
  rm -rf "$work/transcribe" "$work/transcribe.work"
fi

# Atomically: two runs may share WORK (e.g. ONLY_FOLDS="0 1 2" and "3 4").
fold_of "${all[@]}" > "$work/$fold.txt.$$"; mv "$work/$fold.txt.$$" "$work/$fold.txt"
for variant in $variants; do
  case $variant in
    stock|mllr|map|both|both-clean) ;;
    map-tau*|mapmean-tau*) [[ ${variant#*-tau} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
      { echo "VARIANTS: $variant: expected map-tauT or mapmean-tauT with T a number" >&2; exit 2; } ;;
    *) echo "VARIANTS: $variant: expected stock, mllr, map, both, both-clean, map-tauT or mapmean-tauT" >&2; exit 2 ;;
  esac
done
# The prior weights the variants name, built together from one bw pass.
taus=$(for v in $variants; do case $v in map-tau*|mapmean-tau*) echo "${v#*-tau}";; esac; done | sort -nu | tr '\n' ' ')

for k in ${ONLY_FOLDS:-$(seq 0 $((folds - 1)))}; do
  mapfile -t train < <(awk -v k="$k" '$1 != k { print $2 }' "$work/$fold.txt")
  mapfile -t test < <(awk -v k="$k" '$1 == k { print $2 }' "$work/$fold.txt")
  m="$work/$fold$k"
  missing=false
  for variant in $variants; do
    case $variant in mllr|map|both|map-tau*|mapmean-tau*) [ -f "$m/$variant/sendump" ] || missing=true;; esac
  done
  if $missing; then
    # MLLR variants need METHOD=both (two bw passes); the MAP ones alone need
    # one: the stock model's statistics (its map variants land in ALSO).
    if [[ " $variants " =~ \ (mllr|both)\  ]]; then method=both; out="$m/both"; else method=map; out="$m/map-bayes"; fi
    DENOISE=$denoise PARLEY_SKIP_BUILD=1 TRANSCRIPTS="$work/transcripts.tsv" METHOD=$method ALSO="$m" TAUS="$taus" \
      scripts/adapt-model.sh "$out" "${train[@]}" 2>"$m.log" || { cat "$m.log" >&2; exit 1; }
  fi
  if [ ! -f "$m/both-clean/sendump" ] && [[ " $variants " =~ " both-clean " ]]; then
    DENOISE=$denoise PARLEY_SKIP_BUILD=1 TRANSCRIPTS="$work/transcripts.tsv" METHOD=both CONDITIONS=clean scripts/adapt-model.sh "$m/both-clean" "${train[@]}" 2>>"$m.log" ||
      { cat "$m.log" >&2; exit 1; }
  fi
  for variant in $variants; do
    if [ "$variant" = stock ]; then hmm=stock; else hmm="$m/$variant"; fi
    for snr in $snrs; do
      out="$work/decode/$variant-$snr-$fold$k.jsonl"
      [ -s "$out" ] && continue
      mkdir -p "$work/decode"
      files=()
      for f in "${test[@]}"; do
        if [ "$snr" = clean ]; then files+=("$f"); else files+=("$work/audio/$snr/$(basename "$f")"); fi
      done
      nice -n 10 .build/release/parley understand --app coffee-maker --front-end "$front_end" --set "hmm=$hmm" "${files[@]}" > "$out.part"
      mv "$out.part" "$out"
    done
  done
  echo "eval-adapt: fold $k done (${#train[@]} adapted on, ${#test[@]} tested)" >&2
done

python3 - "$data/labels.json" "$work/decode" "$snrs" "$variants" "$fold" <<'EOF'
import glob, json, os, sys
labels = json.load(open(sys.argv[1])); folder = sys.argv[2]
snrs = sys.argv[3].split(); variants = sys.argv[4].split(); fold = sys.argv[5]
runs = lambda v, s: sorted(glob.glob(os.path.join(folder, "%s-%s-%s[0-9]*.jsonl" % (v, s, fold))))
print("| model (%d %s folds, held-out): right (wrong, rejected) | %s | RTF |" % (len(runs(variants[0], snrs[0])), fold.replace("fold", "") or "recording",
      " | ".join("clean" if s == "clean" else "kitchen %s dB" % s for s in snrs)))
print("| --- " * (len(snrs) + 2) + "|")
per_fold = []
for v in variants:
    cells = []; audio = decode = 0.0; folds_right = []
    for s in snrs:
        ok = wrong = total = 0; by_fold = []
        for path in runs(v, s):
            fold_ok = 0
            for line in open(path):
                r = json.loads(line); want = labels[os.path.basename(r["file"])]; total += 1
                audio += r["audio_seconds"]; decode += r["decode_seconds"]
                right = r["intent"] == want["intent"] and all(r["slots"].get(k) == x.strip() for k, x in want["slots"].items())
                ok += right; fold_ok += right; wrong += r["intent"] is not None and not right
            by_fold.append(str(fold_ok))
        cells.append("%.1f%% (%d/%d; %d, %d)" % (100.0 * ok / max(total, 1), ok, total, wrong, total - ok - wrong))
        folds_right.append("/".join(by_fold))
    print("| %s | %s | %.3f |" % (v, " | ".join(cells), decode / max(audio, 1e-9)))
    per_fold.append("%s: %s" % (v, ", ".join("%s %s" % (s, f) for s, f in zip(snrs, folds_right))))
print("\nRight per fold (fold 0/1/...):\n" + "\n".join(per_fold))
EOF
}
main "$@"

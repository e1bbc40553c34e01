#!/usr/bin/env bash
# False wakes of the shipped wake detector (the daemon's: the name's keyword
# network, then its speech_embedding heads, at the default sensitivity) over
# 20 h of long negatives nothing shipped trained on: parley_training.long_negatives'
# fold 4 (espeak-ng and flite prose with near misses, "commuter",
# "computing": 2 h, whose text both the keyword network and the heads
# keep out of training, folds 0-3 being theirs) and 8 h more of fold 4's
# text in other voices (--only-fold 4 --voice-seed 20261206), clean and
# again with a training noise at 10 dB (babble, pink and clatter in turn;
# never the kitchen).
# Each part of a stream (a sentence in one voice, its start in the stream's
# .txt) is one utterance, as an endpointer that split at every pause would
# hand it over: cut out with the 2 s before it as its lead-in, then
# `parley detect-wake --wake computer` on the parts (each a fresh utterance,
# at most one wake each, as the daemon wakes at most once an utterance).
# Why not the streams whole: detect-wake decides a file as one utterance,
# so a 10-minute stream would wake at most once, and its embedding, once
# the keyword network woke it, would stay awake for the rest of the file
# (in the daemon it sleeps again at the next utterance); and the daemon's
# own endpointer, on this continuous synthetic prose, cuts a 10-minute
# stream into about 5 utterances (its noise floor rises with the speech).
#
#   training/bin/eval-wake-long.sh                 WORK=.build/wake-cv
#   FOLDS="0 1 2 3 4" training/bin/eval-wake-long.sh   # every fold of the pool
#                                                   # (training folds too: not a result)
#
# Prints false wakes and hours per condition, and each detection (file,
# second) with the words said there (the long negatives' .txt). Inputs are
# made when missing, deterministically (fixed seeds): the long negatives
# (about 4 min, 1.1 GB), fold 4's more voices (about 4 min), the training
# noises and the 10 dB mixtures.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
bin=${PARLEY_BIN:-.build/release}
work=${WORK:-.build/wake-cv}
mkdir -p "$work"
pool=$work/negatives-long
make_long_negatives "$pool"
more=$work/negatives-long-more
make_long_negatives "$more" 5 8 --only-fold 4 --voice-seed 20261206
folds=${FOLDS:-4}
# The streams measured, with their .txt, in one folder (links).
long=$work/negatives-long-eval-$(echo "$folds" | tr -d ' ')
rm -rf "$long"; mkdir -p "$long"
for f in $folds; do
  for s in "$pool"/prose-fold$f-*.wav; do ln -s "$(realpath "$s")" "$(realpath "${s%.wav}.txt")" "$long/"; done
  grep -P "^\S+/prose-fold$f-" "$pool/manifest.tsv" >> "$long/manifest.tsv"
done
if [ "$folds" = 4 ]; then
  for s in "$more"/prose-fold4-more-*.wav; do ln -s "$(realpath "$s")" "$(realpath "${s%.wav}.txt")" "$long/"; done
  cat "$more/manifest.tsv" >> "$long/manifest.tsv"
fi
noisy=$long-10db
long_negatives_10db "$long" "$noisy"
out=$work/long-false-wakes-$(echo "$folds" | tr -d ' ')-$(sha256sum model/wake/computer.json model/wake/computer.embedding.json | sha256sum | cut -c1-12)
mkdir -p "$out"
for cond in clean 10db; do
  [ -s "$out/$cond.jsonl" ] && continue
  if [ "$cond" = clean ]; then from=$long; else from=$noisy; fi
  parts=$out/parts-$cond
  rm -rf "$parts"; mkdir -p "$parts"
  # The parts, each with the 2 s before it (less at a stream's start).
  "$py" - "$long" "$from" "$parts" <<'PY'
import glob, os, sys, wave
long, source, parts = sys.argv[1:4]
for txt in sorted(glob.glob(os.path.join(long, "prose-fold*.txt"))):
    name = os.path.basename(txt)[:-4]
    starts = []
    for row in open(txt):
        try: starts.append(float(row.split("\t", 1)[0]))
        except ValueError: pass
    with wave.open(os.path.join(source, name + ".wav")) as w:
        rate, frames = w.getframerate(), w.readframes(w.getnframes())
    total = len(frames) // 2
    bounds = [int(t * rate) for t in starts] + [total]
    for i in range(len(starts)):
        a, b = max(0, bounds[i] - 2 * rate), bounds[i + 1]
        with wave.open(os.path.join(parts, "%s-%04d-%.2f.wav" % (name, i, starts[i])), "wb") as o:
            o.setnchannels(1); o.setsampwidth(2); o.setframerate(rate)
            o.writeframes(frames[2 * a:2 * b])
PY
  mapfile -t files < <(ls "$parts"/*.wav)
  half=$(( ${#files[@]} / 2 ))
  "$bin/parley" detect-wake --wake computer "${files[@]:0:$half}" > "$out/$cond.a.jsonl" &
  "$bin/parley" detect-wake --wake computer "${files[@]:$half}" > "$out/$cond.b.jsonl"
  wait
  cat "$out/$cond.a.jsonl" "$out/$cond.b.jsonl" > "$out/$cond.jsonl"
  rm -rf "$parts"
done
python3 - "$out" "$long" <<'PY'
import json, os, sys
out, long = sys.argv[1], sys.argv[2]
said = {}
for name in os.listdir(long):
    if name.endswith(".txt"):
        for row in open(os.path.join(long, name)):
            parts = row.rstrip("\n").split("\t", 1)
            if len(parts) == 2: said[(name[:-4], parts[0])] = parts[1]
all_wakes = all_hours = 0
for cond in ("clean", "10db"):
    wakes = []; n = 0
    for line in open(os.path.join(out, cond + ".jsonl")):
        r = json.loads(line); n += 1
        if r["detections"]:
            stem = os.path.basename(r["file"])[:-4]
            stream, _, start = stem.rpartition("-")
            stream = stream.rsplit("-", 1)[0]
            wakes.append((stem, said.get((stream, start), "")))
    # Hours: the streams' own length (the lead-ins overlap the part before).
    hours = sum(float(l.split("\t")[3]) for l in open(os.path.join(long, "manifest.tsv"))) / 3600
    all_wakes += len(wakes); all_hours += hours
    print("condition=%-6s utterances=%d false_wakes=%d hours=%.2f per_hour=%.3f" % (cond, n, len(wakes), hours, len(wakes) / hours))
    for stem, text in wakes: print("  %s: %s" % (stem, text[:110]))
print("all: false_wakes=%d hours=%.2f per_hour=%.3f" % (all_wakes, all_hours, all_wakes / all_hours))
PY

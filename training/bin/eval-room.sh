#!/usr/bin/env bash
# The device learning its room, by simulation (issue 15): adapt on N
# confirmed commands of one noise condition, test on other recordings in the
# same condition, for N = 5, 10, 20, 50, with `parley adapt --recordings`
# (RoomAdapter: the code `parley adapt` runs in the daemon) and
# `parley understand --set mllr=...` (the daemon's listening path).
#
#   training/bin/eval-room.sh
#
# Environment:
#   SNRS ("12")         kitchen-noise conditions (dB, or "clean"); one room each
#   NS ("5 10 20 50")   adaptation set sizes
#   REPEATS (3)         random splits per condition (seeds 1..REPEATS)
#   TEST (51)           recordings tested per split (the rest is the adaptation pool)
#   MODEL               the acoustic model adapted (a folder with mdef.txt and
#                       mixture_weights); default: .build/model/en-us-adapted if
#                       built, else a training copy of Debian's stock model
#   WORK                keep mixes, transforms and decodes here (default: temporary)
#   TRANSFORM (full)    full: the affine map of the means; shift: their offset only
#   FRONT_END (none)    the front end decoded behind, as `parley understand
#                       --front-end`; with neural the transform is estimated on
#                       denoised copies (`parley adapt --front-end`), as the
#                       daemon does with it. Give each a WORK of its own.
#
# What a household gives: only commands the device understood AND the person
# confirmed are kept, so the adaptation set of a split is the first N pool
# recordings the unadapted model decodes right (intent and slots equal the
# label), with the words it heard. The test recordings are never adapted on.
set -euo pipefail
# In a function, so bash has read it whole before it runs.
main() {
. "$(dirname "$0")/lib.sh"
build_release parley parley-bench
data=$PARLEY_SHARED_DATA/coffee-maker
work_folder
model=${MODEL:-}
if [ -z "$model" ]; then
  if [ -f .build/model/en-us-adapted/mdef.txt ]; then model=.build/model/en-us-adapted
  else
    model=.build/model/en-us-stock-train
    [ -f "$model/mixture_weights" ] || scripts/adapt/training-files.sh "$model"
  fi
fi
model=$(realpath "$model")
all=("$data"/clean/*.wav)
ns=${NS:-5 10 20 50}
transform=${TRANSFORM:-full}
front_end=${FRONT_END:-none}
suffix=; [ "$transform" = full ] || suffix=-$transform
for snr in ${SNRS:-12}; do
  audio="$work/audio/$snr"
  if [ "$snr" = clean ]; then audio=$data/clean
  elif [ ! -d "$audio" ]; then .build/release/parley-bench audio mix --snr "$snr" --out "$audio" "${all[@]}" >/dev/null; fi
  base="$work/decode/$snr-none.jsonl"
  if [ ! -s "$base" ]; then
    mkdir -p "$work/decode"
    nice -n 10 .build/release/parley understand --app coffee-maker --front-end "$front_end" --acoustic-model "$model" "$audio"/*.wav > "$base.part"
    mv "$base.part" "$base"
  fi
  for seed in $(seq 1 "${REPEATS:-3}"); do
    split="$work/split-$snr-$seed"; mkdir -p "$split"
    # The split and each N's confirmed commands, from the unadapted decode.
    python3 - "$data/labels.json" "$base" "$seed" "${TEST:-51}" "$split" $ns <<'PY'
import json, os, random, sys
labels = json.load(open(sys.argv[1])); rows = [json.loads(l) for l in open(sys.argv[2])]
seed, test_count, out = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]; ns = [int(n) for n in sys.argv[6:]]
rows.sort(key=lambda r: os.path.basename(r["file"])); random.Random(seed).shuffle(rows)
test, pool = rows[:test_count], rows[test_count:]
def right(r):
    want = labels[os.path.basename(r["file"])]
    return r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items())
confirmed = [r for r in pool if right(r) and r["transcript"]]
open(os.path.join(out, "test.list"), "w").write("".join(r["file"] + "\n" for r in test))
for n in ns:
    if n > len(confirmed):
        print(f"eval-room: seed {seed}: only {len(confirmed)} of {len(pool)} pool recordings confirmed; N={n} skipped", file=sys.stderr)
        continue
    open(os.path.join(out, f"adapt-{n}.tsv"), "w").write("".join(f'{r["file"]}\t{r["transcript"]}\n' for r in confirmed[:n]))
PY
    mapfile -t test < "$split/test.list"
    for n in $ns; do
      [ -f "$split/adapt-$n.tsv" ] || continue
      out="$work/decode/$snr-seed$seed-n$n$suffix.jsonl"
      [ -s "$out" ] && continue
      .build/release/parley adapt --recordings "$split/adapt-$n.tsv" --output "$split/room-$n$suffix.mllr" --acoustic-model "$model" \
        --transform "$transform" --front-end "$front_end" >&2
      nice -n 10 .build/release/parley understand --app coffee-maker --front-end "$front_end" --acoustic-model "$model" --set "mllr=$split/room-$n$suffix.mllr" \
        "${test[@]}" > "$out.part"
      mv "$out.part" "$out"
    done
  done
done

python3 - "$data/labels.json" "$work" "${SNRS:-12}" "${REPEATS:-3}" "$suffix" $ns <<'PY'
import json, os, statistics, sys
labels = json.load(open(sys.argv[1])); work = sys.argv[2]; snrs = sys.argv[3].split(); repeats = int(sys.argv[4])
suffix = sys.argv[5]; ns = [int(n) for n in sys.argv[6:]]
def right(r):
    want = labels[os.path.basename(r["file"])]
    return r["intent"] == want["intent"] and all(r["slots"].get(k) == v.strip() for k, v in want["slots"].items())
print("| condition | " + " | ".join(["not adapted"] + [f"N = {n}" for n in ns]) + " |")
print("| --- " * (len(ns) + 2) + "|")
for snr in snrs:
    base = {os.path.basename(r["file"]): r for r in map(json.loads, open(f"{work}/decode/{snr}-none.jsonl"))}
    cells = {n: [0, 0] for n in [0] + ns}; rtf = {n: [0.0, 0.0] for n in [0] + ns}
    for seed in range(1, repeats + 1):
        test = [os.path.basename(l.strip()) for l in open(f"{work}/split-{snr}-{seed}/test.list")]
        for name in test:
            cells[0][0] += right(base[name]); cells[0][1] += 1
        for n in ns:
            path = f"{work}/decode/{snr}-seed{seed}-n{n}{suffix}.jsonl"
            if not os.path.exists(path): continue
            for r in map(json.loads, open(path)):
                cells[n][0] += right(r); cells[n][1] += 1
                rtf[n][0] += r["decode_seconds"]; rtf[n][1] += r["audio_seconds"]
    label = ("clean" if snr == "clean" else f"kitchen {snr} dB") + (f" ({suffix[1:]} transform)" if suffix else "")
    print(f"| {label} | " + " | ".join(
        f"{100.0 * ok / total:.1f}% ({ok}/{total})" if total else "—" for ok, total in (cells[n] for n in [0] + ns)) + " |")
PY
}
main "$@"

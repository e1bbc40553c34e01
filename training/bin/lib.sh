# Sourced by every driver in training/bin (first thing in its main): the
# set-up lines they all share, once.
#
#   . "$(dirname "$0")/lib.sh"
#
# - the repository root as the working folder (paths below are from there);
# - PARLEY_SHARED_DATA (../shared/data beside the checkout, the recordings of
#   docs/evaluation-data.md), build_release PRODUCT... and work_folder, from
#   scripts/lib/evaluation-data.sh (the benchmarks in scripts/ use it too);
# - PYTHONPATH with training/, so `"$py" -m parley_training.MODULE` runs the
#   package's modules;
# - py: Debian's python3 (numpy, scipy, matplotlib from scripts/setup.sh),
#   the interpreter every evaluation figure in BENCHMARKS.md was made with
#   (train-wake.sh alone uses training/.venv, training/setup.sh);
# - temp_work, training_noises, instructions_per_second, make_long_negatives,
#   long_negatives_10db, scores_key and kws_inputs below.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. scripts/lib/evaluation-data.sh
. scripts/lib/arm64-count.sh
export PYTHONPATH="$PWD/training${PYTHONPATH:+:$PYTHONPATH}"
py=/usr/bin/python3

# temp_work: sets `work` to a temporary folder removed when the script exits
# (work_folder, without WORK).
temp_work() {
  work=$(mktemp -d)
  # The trap names the folder itself, not $work, which a script may reuse.
  trap "rm -rf '$work'" EXIT
}

# instructions_per_second NAME DECIMALS COMMAND...: instructions per second
# of audio of COMMAND, whose "{}" arguments stand for the seconds of audio it
# runs: counted at SHORT and LONG seconds (defaults 5 and 10), the difference
# of the two totals over LONG - SHORT seconds, so start-up and model loading
# cancel. Counted by valgrind's callgrind on this machine (x86_64), or with
# COUNT_ARCH=arm64 by qemu-user's instruction-counting plugin
# (scripts/lib/arm64-count.sh; arm64_setup first, COMMAND an arm64
# program). Prints one line: the architecture,
# NAME_instructions_per_audio_second, the share of one core at IPS
# instructions a second (default 3e9 on x86_64, 1.5e9 on arm64: a Pi 4's
# Cortex-A72 at 1.5 GHz and about one instruction a cycle; DECIMALS places)
# and the start-up.
instructions_per_second() {
  local name=$1 decimals=$2; shift 2
  local short=${SHORT:-5} long=${LONG:-10} arch=${COUNT_ARCH:-$(uname -m)} ips out a b
  [ "$arch" = arm64 ] && arch=aarch64
  ips=${IPS:-$([ "$arch" = aarch64 ] && echo 1.5e9 || echo 3e9)}
  out=$(mktemp -d)
  count() {
    if [ "$arch" = aarch64 ]; then
      arm64_run "$out/count" -- "${@//\{\}/$secs}" >/dev/null 2>"$out/log" \
        || { cat "$out/log" >&2; rm -rf "$out"; exit 1; }
      arm64_total "$out/count"
    else
      valgrind --tool=callgrind --callgrind-out-file="$out/callgrind" "${@//\{\}/$secs}" >/dev/null 2>"$out/log" \
        || { cat "$out/log" >&2; rm -rf "$out"; exit 1; }
      sed -n 's/^summary: //p; s/^totals: //p' "$out/callgrind" | head -1
    fi
  }
  local secs=$short; a=$(count "$@")
  secs=$long; b=$(count "$@")
  rm -rf "$out"
  python3 -c 'import sys
a, b, s, l, ips, d = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[7])
per = (b - a) / (l - s)
print("arch=%s %s_instructions_per_audio_second=%.3g share_of_one_core=%.*f%% (at %.2g instructions/s) start_up=%.3g"
      % (sys.argv[6], sys.argv[8], per, d, 100 * per / ips, ips, a - per * s))' "$a" "$b" "$short" "$long" "$ips" "$arch" "$decimals" "$name"
}

# training_noises DIR [SECONDS]: the synthetic training noises of
# scripts/adapt/make-noises.py (white, pink, brown, babble, clatter; default
# 60 s each) in DIR, made when missing. Never the kitchen noise.
training_noises() {
  [ -f "$1/clatter.wav" ] || nice -n 10 "$py" scripts/adapt/make-noises.py "$1" "${2:-60}" >/dev/null
}

# make_long_negatives DIR [FOLDS HOURS [OPTIONS]]: parley_training.long_negatives'
# streams in DIR (default 5 folds of 2 h: the pool the keyword network and
# the heads train on), made once (DIR/manifest.tsv), deterministically.
make_long_negatives() {
  local dir=$1; shift
  [ $# -gt 0 ] || set -- 5 2
  [ -f "$dir/manifest.tsv" ] || nice -n 10 "$py" -m parley_training.long_negatives "$dir" "$@"
}

# long_negatives_10db DIR OUT: DIR's long negatives (prose-fold*.wav) with a
# training noise at 10 dB in OUT, babble, pink and clatter in turn by the
# streams' sorted order (parley-bench audio mix seeds each file's slice), once
# (OUT/.done). Needs parley-bench built (build_release) and `work`.
long_negatives_10db() {
  local dir=$1 out=$2 noises=(babble pink clatter) streams i j mine
  [ -f "$out/.done" ] && return 0
  # Longer than a stream (10 min, some to 10.5): the mixer takes one seeded slice of noise per file.
  training_noises "$work/noise-long" 700
  mapfile -t streams < <(ls "$dir"/prose-fold*.wav)
  for i in "${!noises[@]}"; do
    mine=()
    for j in "${!streams[@]}"; do (( j % 3 == i )) && mine+=("${streams[$j]}"); done
    "${PARLEY_BIN:-.build/release}/parley-bench" audio mix --snr 10 --noise "$work/noise-long/${noises[$i]}.wav" --out "$out" "${mine[@]}" >/dev/null
  done
  touch "$out/.done"
}

# scores_key: sets `key`, the folder name under WORK/scores of the cached
# wake scores (eval-wake-cv.sh, eval-wake-noise.sh). The detector's source,
# so a change to stage 1 or stage 2 scores everything again; with SET
# (decoder overrides, e.g. "hmm=.build/model/en-us-adapted") also a hash of
# SET and of the files of any model folder it names, so another model (or
# the same folder rebuilt) is never read from another's cache.
scores_key() {
  key=$(cat Sources/ParleySpeech/WakeDetector.swift Sources/ParleySpeech/WakeVerifier.swift | sha256sum | cut -c1-12)
  if [ -n "${SET:-}" ]; then
    local set_hash
    set_hash=$(for o in $SET; do
        echo "$o"
        v=${o#*=}
        if [ -d "$v" ]; then find "$v" -type f | LC_ALL=C sort | xargs cat; fi
      done | sha256sum | cut -c1-12)
    key="$key-set-$set_hash"
  fi
}

# kws_inputs: the keyword network's inputs (eval-wake-kws.sh,
# train-wake-kws.sh). Sets `work` (WORK, default .build/wake-cv), `data`
# (PARLEY_SHARED_DATA), `long_negatives` (parley_training.long_negatives:
# 10 h of espeak-ng and flite speech, about 4 min to make, 1.1 GB) and
# `recorded_noises` (parley_training.recorded_noises: rooms recorded by
# people, from Debian's blanket package and the coffee-maker recordings),
# and makes the negatives (parley_training.negatives), the long negatives
# and the training noises in $work when they are missing.
kws_inputs() {
  scripts/setup.sh
  work=${WORK:-.build/wake-cv}
  data=$PARLEY_SHARED_DATA
  mkdir -p "$work"
  [ -f "$work/negatives/manifest.tsv" ] || nice -n 10 "$py" -m parley_training.negatives "$work/negatives" "$data" 5
  long_negatives=$work/negatives-long
  make_long_negatives "$long_negatives"
  recorded_noises=$work/recorded-noise
  [ -f "$recorded_noises/voices.wav" ] || nice -n 10 "$py" -m parley_training.recorded_noises "$recorded_noises" "$data/coffee-maker/clean"
  training_noises "$work/noise"
}

# The keyword network's inputs, for training/bin/eval-wake-kws.sh and
# training/bin/train-wake-kws.sh (sourced from the package root): sets `work`
# (WORK, default .build/wake-cv), `data` (../shared/data), `py` (Debian's
# python3, with numpy and scipy from scripts/setup.sh) and `long_negatives`
# (the folder of training/parley_training/long_negatives.py: 10 h of espeak-ng and
# flite speech, about 4 min to make, 1.1 GB) and `recorded_noises` (the
# folder of training/parley_training/recorded_noises.py: rooms recorded by people, from
# Debian's blanket package and the coffee-maker recordings), and makes the negatives
# (training/parley_training/negatives.py), the long negatives and the training
# noises (scripts/adapt/make-noises.py) in $work when they are missing.
. scripts/lib/evaluation-data.sh
scripts/setup.sh
work=${WORK:-.build/wake-cv}
data=$PARLEY_SHARED_DATA
py=/usr/bin/python3
mkdir -p "$work"
[ -f "$work/negatives/manifest.tsv" ] || nice -n 10 "$py" training/parley_training/negatives.py "$work/negatives" "$data" 5
long_negatives=$work/negatives-long
[ -f "$long_negatives/manifest.tsv" ] || nice -n 10 "$py" training/parley_training/long_negatives.py "$long_negatives" 5 2
recorded_noises=$work/recorded-noise
[ -f "$recorded_noises/voices.wav" ] || nice -n 10 "$py" training/parley_training/recorded_noises.py "$recorded_noises" "$data/coffee-maker/clean"
[ -f "$work/noise/brown.wav" ] || nice -n 10 "$py" scripts/adapt/make-noises.py "$work/noise" 60 >/dev/null

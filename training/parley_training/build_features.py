"""Makes the wake word's feature cache (speech_embedding embeddings) in WORK.

    python -m parley_training.build_features WORK DATA NOISES [--festival] [--long CLEAN NOISY]

DATA is ../shared/data; NOISES a folder of training noises (WAV,
scripts/adapt/make-noises.py: none of them the kitchen noise the
evaluation mixes in). With --long, also the long negatives
(parley_training.long_negatives' streams in CLEAN, and the same streams
with a training noise at 10 dB in NOISY, as training/bin/eval-wake-long.sh
mixes them): sets long-clean and long-noisy, one entry per stream.
Sets already in WORK are kept.
"""
import argparse
import glob
import os
import sys
import time

from . import audio, dataset


def speed_set(factor):
    """The cache name of the real recordings played `factor` times as fast, with a training noise."""
    return f"pos-speed{round(100 * factor)}-noisy"


def stream_features(path):
    """One long stream's embeddings (a worker's task: a stream is 10 minutes)."""
    name = os.path.basename(path)
    return name, dataset.features([(name, audio.read(path))])[name]


def long_sets(work, clean_dir, noisy_dir):
    """long-clean and long-noisy: {stream file name: embeddings}, two workers
    (about 100 times real time each)."""
    from multiprocessing import Pool
    for name, folder in (("long-clean", clean_dir), ("long-noisy", noisy_dir)):
        path = os.path.join(work, name + ".npz")
        if os.path.exists(path):
            continue
        streams = sorted(glob.glob(os.path.join(folder, "prose-fold*.wav")))
        if not streams:
            sys.exit(f"build_features: no long negatives (prose-fold*.wav) in {folder}")
        t0 = time.time()
        with Pool(2) as pool:
            feats = dict(pool.map(stream_features, streams))
        dataset.save(path, feats)
        print(f"build_features: {name}: {len(feats)} streams in {time.time() - t0:.0f} s", file=sys.stderr)


def main(work, data, noises_dir, festival=False):
    noises = {os.path.basename(p): audio.read(p) for p in sorted(glob.glob(os.path.join(noises_dir, "*.wav")))}
    if not noises:
        sys.exit(f"build_features: no training noises (*.wav) in {noises_dir}")
    kitchen = {"kitchen": audio.read(os.path.join(data, "noise/kitchen.wav"))}
    pos, neg = dataset.real_files(data)
    rel = lambda p: os.path.relpath(p, data)
    real_pos = lambda: [(rel(p), audio.read(p)) for p in pos]
    real_neg = lambda: [(rel(p), audio.read(p)) for p in neg]
    sets = {
        "pos-clean": lambda: dataset.features(real_pos()),
        "pos-kitchen-10dB": lambda: dataset.features(real_pos(), kitchen, 10, "kitchen10"),
        "pos-noisy-a": lambda: dataset.features(real_pos(), noises, None, "a"),
        "pos-noisy-b": lambda: dataset.features(real_pos(), noises, None, "b"),
        # Other speakers' voices from the same ones (pitch and formants move
        # with the speed), and rooms: for voices the folds never heard.
        "pos-slow-noisy": lambda: dataset.features([(n, dataset.speed(x, 0.88)) for n, x in real_pos()], noises, None, "slow"),
        "pos-fast-noisy": lambda: dataset.features([(n, dataset.speed(x, 1.12)) for n, x in real_pos()], noises, None, "fast"),
        "pos-room-noisy": lambda: dataset.features([(n, dataset.reverberant(x, n)) for n, x in real_pos()], noises, None, "room"),
        "pos-room": lambda: dataset.features([(n, dataset.reverberant(x, n + "/2")) for n, x in real_pos()]),
        # More speakers from the same voices: eight more speeds, each with a training noise.
        **{speed_set(f): (lambda f=f: dataset.features([(n, dataset.speed(x, f)) for n, x in real_pos()], noises, None, f"speed{f}"))
           for f in dataset.MORE_SPEEDS},
        "neg-clean": lambda: dataset.features(real_neg()),
        "neg-noisy": lambda: dataset.features(real_neg(), noises, None, "a"),
        "syn-pos-clean": lambda: dataset.features(dataset.synthetic("positive", festival)),
        "syn-pos-noisy": lambda: dataset.features(dataset.synthetic("positive", festival), noises, None, "a"),
        "syn-neg-clean": lambda: dataset.features(dataset.synthetic("negative", festival)),
        "syn-neg-noisy": lambda: dataset.features(dataset.synthetic("negative", festival), noises, None, "a"),
    }
    for name, make in sets.items():
        path = os.path.join(work, name + ".npz")
        if os.path.exists(path):
            continue
        t0 = time.time()
        feats = make()
        dataset.save(path, feats)
        print(f"build_features: {name}: {len(feats)} recordings in {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("work"); ap.add_argument("data"); ap.add_argument("noises")
    ap.add_argument("--festival", action="store_true")
    ap.add_argument("--long", nargs=2, metavar=("CLEAN", "NOISY"))
    a = ap.parse_args()
    main(a.work, a.data, a.noises, festival=a.festival)
    if a.long:
        long_sets(a.work, *a.long)

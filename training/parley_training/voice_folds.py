#!/usr/bin/env python3
"""Cross-validation folds that keep each voice in one fold.

    voice_folds.py FOLDS FILE.wav ...

labels.json has no speaker ids and the file names are random UUIDs, so the
speaker is guessed from the sound: per recording, the mean and standard
deviation of its MFCCs (c1..c12, no c0: c0 is loudness, which follows the
microphone gain more than the voice) over its speech frames. The mean
cepstrum holds the speaker's vocal tract and the recording's channel
(microphone, room), both of which stay with one crowd-sourced speaker; the
standard deviation holds how the voice moves. Recordings are clustered by
Ward's agglomerative clustering on the standardised features and the tree is
cut at CLUSTERS clusters; whole clusters go to the folds, largest first, each
to the fold with the fewest recordings so far (balanced by size).

Why a coarse cut: a split voice (one speaker in two clusters) can land in a
training fold and a test fold, which is the leak this exists to stop; two
voices merged into one cluster only make a fold a little less like the
others. So the cut errs towards merging (CLUSTERS is about half the number of
speakers we expect among 111 recordings of a 619-recording set by "more than
50 speakers").

Prints "FOLD FILE" per recording on stdout (as eval-adapt.sh's fold_of), and
on stderr the cluster sizes, the folds' sizes and two checks that clusters
are voices, each from a feature the clustering did not use:
  - pitch: median F0 (autocorrelation, voiced frames) per recording; its
    spread within clusters against the spread over all recordings;
  - background: the mean log spectrum of the recording's non-speech frames
    (the room and microphone without the voice); distance to the nearest
    recording in the same cluster against the nearest in another.
It also prints how many recordings the folds by recording hash leave with a
recording of their own cluster in training. Deterministic (no random
start): the same files give the same folds.
"""
import hashlib
import os
import sys
import wave

import numpy
from scipy.cluster.hierarchy import fcluster, linkage

RATE = 16000
CLUSTERS = int(os.environ.get("CLUSTERS", "24"))
FRAME, HOP, NFFT = 410, 160, 512  # 25.6 ms windows every 10 ms, as sphinx_fe


def read(path):
    with wave.open(path) as w:
        if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, RATE):
            sys.exit(f"voice_folds: {path}: expected 16 kHz 16-bit mono")
        x = numpy.frombuffer(w.readframes(w.getnframes()), "<i2").astype(float)
    return x - x.mean()


def frames(x):
    n = 1 + max(0, (len(x) - FRAME) // HOP)
    idx = numpy.arange(FRAME)[None, :] + HOP * numpy.arange(n)[:, None]
    return x[idx]


def mel_filters(low=133.0, high=6855.0, count=40):
    """Triangular filters evenly spaced on the mel scale (sphinx_fe's range)."""
    mel = lambda f: 2595 * numpy.log10(1 + f / 700.0)
    hz = lambda m: 700 * (10 ** (m / 2595.0) - 1)
    edges = hz(numpy.linspace(mel(low), mel(high), count + 2)) / RATE * NFFT
    bins = numpy.arange(NFFT // 2 + 1)
    f = numpy.zeros((count, len(bins)))
    for i in range(count):
        a, b, c = edges[i], edges[i + 1], edges[i + 2]
        f[i] = numpy.clip(numpy.minimum((bins - a) / (b - a), (c - bins) / (c - b)), 0, None)
    return f


MEL = mel_filters()
N = MEL.shape[0]
DCT = numpy.cos(numpy.pi / N * (numpy.arange(N)[None, :] + 0.5) * numpy.arange(13)[:, None])


def analyse(path):
    x = read(path)
    pre = numpy.append(x[0], x[1:] - 0.97 * x[:-1])
    f = frames(pre) * numpy.hamming(FRAME)
    power = numpy.abs(numpy.fft.rfft(f, NFFT)) ** 2
    logmel = numpy.log(power @ MEL.T + 1e-3)
    cep = logmel @ DCT.T
    energy = numpy.log10((frames(x) ** 2).sum(1) + 1e-3) * 10
    # Speech: frames within 25 dB of the recording's loud frames (the 95th
    # percentile); background: frames more than 35 dB under them. Relative
    # levels, so the microphone gain does not matter.
    loud = numpy.percentile(energy, 95)
    speech = energy > loud - 25
    quiet = energy < loud - 35
    if quiet.sum() < 10:  # no real pause: the quietest tenth
        quiet = energy <= numpy.percentile(energy, 10)
    c = cep[speech, 1:]
    feature = numpy.concatenate([c.mean(0), c.std(0)])
    background = numpy.log(power[quiet].mean(0)[2:200] + 1e-3)
    background -= background.mean()  # shape, not level
    return feature, background, pitch(x, speech)


def pitch(x, speech):
    """Median F0 of the voiced speech frames (autocorrelation peak 70-400 Hz)."""
    f = frames(x)[speech]
    f = f * numpy.hanning(FRAME)
    spec = numpy.fft.rfft(f, 2 * 1024)
    ac = numpy.fft.irfft(numpy.abs(spec) ** 2)[:, :FRAME]
    lo, hi = RATE // 400, RATE // 70
    lag = lo + ac[:, lo:hi].argmax(1)
    voiced = ac[numpy.arange(len(f)), lag] > 0.4 * ac[:, 0]
    return float(numpy.median(RATE / lag[voiced])) if voiced.sum() >= 5 else float("nan")


def clusters(feats):
    z = numpy.array(feats)
    z = (z - z.mean(0)) / (z.std(0) + 1e-9)
    return fcluster(linkage(z, "ward"), CLUSTERS, "maxclust")


def assign_folds(cluster, folds):
    """Whole voices (clusters) to folds: the largest clusters first, each to
    the emptiest fold (ties: the lowest fold), so no voice is in two folds.
    (members {cluster: [recording index]}, the clusters in that order,
    fold_of {cluster: fold}, each fold's size in recordings)."""
    members = {c: [i for i in range(len(cluster)) if cluster[i] == c] for c in sorted(set(cluster))}
    order = sorted(members, key=lambda c: (-len(members[c]), min(members[c])))
    fold_of, size = {}, [0] * folds
    for c in order:
        k = min(range(folds), key=lambda j: (size[j], j))
        fold_of[c] = k
        size[k] += len(members[c])
    return members, order, fold_of, size


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: python3 -m parley_training.voice_folds FOLDS FILE.wav ...")
    folds, files = int(sys.argv[1]), sorted(sys.argv[2:])
    feats, backs, f0 = zip(*(analyse(p) for p in files))
    cluster = clusters(feats)
    members, order, fold_of, size = assign_folds(cluster, folds)
    for i, path in enumerate(files):
        print(fold_of[cluster[i]], path)

    log = lambda *a: print("voice_folds:", *a, file=sys.stderr)
    log(f"{len(files)} recordings, {len(members)} clusters (Ward, CLUSTERS={CLUSTERS}); sizes:",
        " ".join(str(len(members[c])) for c in order))
    log("fold sizes:", " ".join(map(str, size)))
    # What these folds stop: eval-adapt.sh's FOLD_BY=recording split (the
    # file name's hash), where a cluster's recordings land in several folds.
    by_hash = [int(hashlib.sha256(os.path.basename(p).encode()).hexdigest()[:8], 16) % folds for p in files]
    leaks = sum(any(cluster[j] == cluster[i] and by_hash[j] != by_hash[i] for j in range(len(files)))
                for i in range(len(files)))
    log(f"folds by recording hash: {leaks} of {len(files)} recordings have a recording of their cluster"
        f" in their training folds; {sum(len({by_hash[i] for i in m}) > 1 for m in members.values())}"
        f" of {len(members)} clusters are split")
    # Check 1: pitch. Semitones, so a man's and a woman's spread weigh alike.
    st = 12 * numpy.log2(numpy.array(f0) / 100.0)
    ok = ~numpy.isnan(st)
    within = [abs(st[i] - numpy.median(st[[j for j in m if ok[j]]]))
              for m in members.values() if len(m) > 1 for i in m if ok[i]]
    log("pitch: median F0 %.0f Hz (10-90%%: %.0f-%.0f); |F0 - cluster median| median %.1f semitones,"
        " |F0 - overall median| median %.1f semitones" % (
            numpy.median(numpy.array(f0)[ok]), *numpy.percentile(numpy.array(f0)[ok], [10, 90]),
            numpy.median(within), numpy.median(abs(st[ok] - numpy.median(st[ok])))))
    # Check 2: background spectrum, nearest neighbour in vs out of the cluster.
    b = numpy.array(backs)
    d = numpy.sqrt(((b[:, None, :] - b[None, :, :]) ** 2).mean(2))
    numpy.fill_diagonal(d, numpy.inf)
    same = cluster[:, None] == cluster[None, :]
    paired = [i for i in range(len(files)) if same[i].sum() > 1]
    closer = sum(d[i][same[i]].min() < d[i][~same[i]].min() for i in paired)
    nearest_same = sum(same[i][d[i].argmin()] for i in range(len(files)))
    chance = sum(same[i].sum() - 1 for i in range(len(files))) / (len(files) - 1)
    log("background: for %d of %d recordings in a cluster of 2+, the nearest background in its cluster is"
        " nearer than any outside it; the nearest background of all is in the same cluster for %d of %d"
        " recordings (%.1f expected by chance)" % (closer, len(paired), nearest_same, len(files), chance))


if __name__ == "__main__":
    main()

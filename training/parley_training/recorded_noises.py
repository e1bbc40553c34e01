#!/usr/bin/env python3
"""Recorded training noises for the wake word's keyword network (issue 27
item 3): rooms recorded by people, beside make-noises.py's synthetic ones.
../shared/data/noise/kitchen.wav is never read here.

    python3 -m parley_training.recorded_noises OUT_DIR COFFEE_DIR

Why: every training noise of make-noises.py is synthesized (espeak-ng
babble, resonant hits over a whine, coloured noise), and the network hears
kitchen.wav, a recording, worse than any of them (BENCHMARKS.md, "False
wakes on ten hours of two synthesizers' speech"). What a recording has that
those lack (reverberant voices, irregular impacts, running water) is what
these bring.

Writes 16 kHz mono 16-bit WAVs into OUT_DIR:
- the ambient recordings of Debian's `blanket` package (0.7.0-4, from
  trixie's archive; the file is checked against its SHA-256): birds, boat,
  city, coffee-shop (a restaurant), fireplace, rain, storm, stream,
  summer-night, train, waves, wind. Their sources and licences (CC0,
  public domain, CC-BY 3.0 / 4.0) are in the package's copyright file,
  copied to OUT_DIR/blanket-copyright;
- voices.wav: 60 s of six overlapping real talkers, made from the
  coffee-maker development recordings (COFFEE_DIR: crowd-sourced orders,
  Apache License 2.0), each talker's orders back to back with short gaps.

The same call gives the same audio (fixed seed; the download is verified).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import wave

import numpy

if __package__ in (None, ""):  # run as a file (python3 training/parley_training/X.py): import the package beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from parley_training import repo  # noqa: E402

make_noises = repo.make_noises()

RATE = 16000
DEB = "http://deb.debian.org/debian/pool/main/b/blanket/blanket_0.7.0-4_all.deb"
DEB_SHA256 = "dbbf2a33f5763cf23330f94c8753d1c50e8a8e8df8a843dedaeda279e83558e6"
RESOURCE = "usr/share/blanket/blanket.gresource"
SOUNDS = ["birds", "boat", "city", "coffee-shop", "fireplace", "rain", "storm", "stream",
          "summer-night", "train", "waves", "wind"]


def fetch_deb(path):
    """Downloads the package once; fails naming the URL when the bytes differ."""
    if not os.path.exists(path):
        with urllib.request.urlopen(DEB, timeout=120) as r, open(path + ".part", "wb") as f:
            shutil.copyfileobj(r, f)
        os.replace(path + ".part", path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != DEB_SHA256:
        os.remove(path)
        sys.exit(f"recorded-noises: {DEB}: SHA-256 {digest}, expected {DEB_SHA256}")


def read_pcm(path):
    with wave.open(path) as w:
        return numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(numpy.float64)


def ambient(out_dir, cache):
    deb = os.path.join(cache, os.path.basename(DEB))
    fetch_deb(deb)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", deb, tmp], check=True)
        shutil.copy(os.path.join(tmp, "usr/share/doc/blanket/copyright"), os.path.join(out_dir, "blanket-copyright"))
        for name in SOUNDS:
            ogg = os.path.join(tmp, name + ".ogg")
            with open(ogg, "wb") as f:
                subprocess.run(["gresource", "extract", os.path.join(tmp, RESOURCE),
                                f"/com/rafaelmardojai/Blanket/sounds/{name}.ogg"], check=True, stdout=f)
            wav = os.path.join(out_dir, name + ".wav")
            # sox's dither is random: -D leaves it out, so the bytes repeat.
            subprocess.run(["sox", "-D", ogg, "-r", str(RATE), "-c", "1", "-b", "16", wav], check=True)


def voices(out_dir, coffee_dir, seconds=60, talkers=6):
    """Six real talkers at once: each a track of coffee orders, trimmed of
    their leading and trailing quiet, levelled, with 0-0.5 s gaps."""
    rng = numpy.random.default_rng(7)
    files = sorted(f for f in os.listdir(coffee_dir) if f.endswith(".wav"))
    n = seconds * RATE
    out = numpy.zeros(n)
    for _ in range(talkers):
        track, length = [], 0
        while length < n:
            x = read_pcm(os.path.join(coffee_dir, files[rng.integers(len(files))]))
            loud = numpy.nonzero(numpy.abs(x) > 0.1 * numpy.max(numpy.abs(x)))[0]
            x = x[loud[0]:loud[-1] + 1] if len(loud) else x
            x /= numpy.sqrt(numpy.mean(x ** 2)) + 1e-9
            gap = numpy.zeros(int(rng.integers(0, RATE // 2)))
            track += [x * rng.uniform(0.5, 1.0), gap]
            length += len(x) + len(gap)
        out += numpy.concatenate(track)[:n]
    make_noises.write_wav(os.path.join(out_dir, "voices.wav"), out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python3 -m parley_training.recorded_noises OUT_DIR COFFEE_DIR")
    out_dir, coffee_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    ambient(out_dir, out_dir)
    voices(out_dir, coffee_dir)
    os.remove(os.path.join(out_dir, os.path.basename(DEB)))
    print(f"recorded-noises: {len(SOUNDS) + 1} noises in {out_dir}")


if __name__ == "__main__":
    main()

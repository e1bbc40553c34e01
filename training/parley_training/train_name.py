"""A wake head for a name a person picks, from synthetic voices alone
(`parley wake train NAME` runs this).

    python -m parley_training.train_name NAME OUT.json [--work DIR] [--data DATA] [--noises DIR]

- Positives: NAME said by every offline voice Debian gives this machine
  (espeak-ng's English voices and variants at several rates and pitches,
  flite's four voices at three speeds), each also with a training noise
  and in a synthetic room.
- Negatives: the stored bank (`bank.npz` in WORK, made once): synthetic
  sentences and near-misses, and, where ../shared/data is present, the real
  speech of wake-other/ and coffee-maker/ (recordings of the name itself
  are left out of the bank).
- The threshold: a fifth of the bank is held out of training; where it
  has real speech, the lowest line with at most one false wake an hour of
  it, else just above the highest score it gives that fifth (`MARGIN`).
  Synthetic voices alone hear real people far worse than the shipped head
  (BENCHMARKS.md, "A wake word real speech cannot fool": name_cv).

Deterministic: the same name, bank and requirements give the same file.
"""
import argparse
import os
import sys

import numpy as np

from . import audio, dataset, head as H

MARGIN = 0.5
PER_HOUR = 1.0
# Quiet before each synthetic clip: the head's first window ends 1.98 s into
# a stream, so a short word after a 1 s pad would end before any window (as
# the daemon feeds it 2 s of the room before an utterance).
LEAD = 2 * audio.RATE
RATES = [(120, 35), (145, 60), (165, 45), (185, 70), (210, 30), (230, 55)]
FLITE_SPEEDS = [0.85, 1.0, 1.2]


# What follows a name in a command: a head must fire at the name's end
# whether speech goes on ("hey, coffee time") or not ("computer").
TAILS = ["coffee time", "order soup with soup chef", "what time is it", "turn on the kitchen light",
         "set a timer for ten minutes", "play some music", "add milk to the list", "how is the weather"]


def positives(name):
    """(key, audio, (start, end) of the name in it) of synthetic voices
    saying `name`, alone and followed after a short gap by a command in the
    same voice."""
    from .wake_cv import speech_bounds
    rendered = []
    for v in dataset.ESPEAK_VOICES:
        for rate, pitch in RATES:
            say = lambda t, v=v, rate=rate, pitch=pitch: audio.espeak(t, v, rate, pitch)
            rendered.append((f"espeak/{v}/{rate}-{pitch}", say(name), say))
    for v in dataset.FLITE_VOICES:
        x = audio.flite(name, v)
        for s in FLITE_SPEEDS:
            say = lambda t, v=v, s=s: dataset.speed(audio.flite(t, v), s) if s != 1.0 else audio.flite(t, v)
            rendered.append((f"flite/{v}/{s}", dataset.speed(x, s) if s != 1.0 else x, say))
    for v in dataset.FESTIVAL_VOICES:
        for st in (0.85, 1.0, 1.2):
            x = audio.festival(name, v, st)
            for s in FLITE_SPEEDS:
                say = lambda t, v=v, st=st, s=s: dataset.speed(audio.festival(t, v, st), s) if s != 1.0 else audio.festival(t, v, st)
                rendered.append((f"festival/{v}/{st}-{s}", dataset.speed(x, s) if s != 1.0 else x, say))
    out = []
    for key, x, say in rendered:
        bounds = speech_bounds(x)
        out.append((key, x, bounds))
        rng = np.random.default_rng(audio.seed_of("tail", name, key))
        tail = say(TAILS[int(rng.integers(len(TAILS)))])
        s0, e0 = speech_bounds(tail)
        gap = np.zeros(int(rng.uniform(0.05, 0.25) * audio.RATE), np.float32)
        out.append((key + "/tail", np.concatenate([x[:bounds[1]], gap, tail[s0:]]), bounds))
    return out


def bank(work, data, noises, log):
    """{name: embeddings} of the negative bank, made once into WORK/bank.npz."""
    path = os.path.join(work, "bank.npz")
    if os.path.exists(path):
        return dataset.load(path)
    feats = {}
    syn = dataset.synthetic("negative", festival=True)
    feats.update({"syn/" + k: v for k, v in dataset.features(syn).items()})
    feats.update({"syn-noisy/" + k: v for k, v in dataset.features(syn, noises, None, "bank").items()})
    if data and os.path.isdir(os.path.join(data, "wake-other")):
        _, neg = dataset.real_files(data)
        real = [(os.path.relpath(p, data), audio.read(p)) for p in neg]
        feats.update({"real/" + k: v for k, v in dataset.features(real).items()})
        log(f"bank: {len(real)} real recordings from {data}")
    dataset.save(path, feats)
    return feats


def load_noises(noises_dir):
    noises = {os.path.basename(p): audio.read(os.path.join(noises_dir, p))
              for p in sorted(os.listdir(noises_dir)) if p.endswith(".wav")}
    if not noises:
        sys.exit(f"train_name: no training noises (*.wav) in {noises_dir}")
    return noises


def positive_arrays(name, noises):
    """Windows of the synthetic voices saying `name` (clean, with a training
    noise, in a synthetic room), labelled as wake_cv labels real ones."""
    from .wake_cv import label_windows
    pos = positives(name)
    bounds = {n: b for n, _, b in pos}
    plain = [(n, x) for n, x, _ in pos]
    copies = [("clean", plain), ("noisy", plain), ("room", [(n, dataset.reverberant(x, n)) for n, x in plain])]
    xs, ys = [], []
    for kind, items in copies:
        feats = dataset.features(items, noises if kind != "clean" else None, None, kind, lead=LEAD)
        for n, _ in items:
            win = H.windows(feats[n])
            lab = label_windows(len(win), bounds[n], LEAD)
            xs.append(win[lab >= 0]); ys.append(lab[lab >= 0].astype(np.float32))
    return np.concatenate(xs), np.concatenate(ys), len(plain) * len(copies)


def without_name(neg, name):
    """The bank less any recording of the name itself (wake-other/<name>/)."""
    return {k: v for k, v in neg.items() if name.replace(" ", "-") not in k.lower() and name not in k.lower()}


def fit(name, pos, neg, log):
    """A head from positive windows and a negative bank ({name: embeddings});
    its threshold is the highest score of the fifth of the bank it never
    trained on, plus MARGIN."""
    px, py, _ = pos
    held = {k for k in neg if audio.seed_of("bank-hold", k) % 5 == 0}
    xs, ys = [px], [py]
    for k, emb in neg.items():
        if k not in held:
            win = H.windows(emb)
            xs.append(win); ys.append(np.zeros(len(win), np.float32))
    x, y = np.concatenate(xs), np.concatenate(ys)
    w = np.ones(len(y), np.float32)
    w[y == 1] *= w[y == 0].sum() / w[y == 1].sum()
    log(f"train_name: {int(y.sum())} positive and {int((y == 0).sum())} negative windows")
    head = H.Head(seed=audio.seed_of("name", name) % 2**31).fit(x, y, w, seed=1, epochs=12, dropout=0.3, log=log)
    from .wake_cv import events
    scores = {k: head.logits(H.windows(neg[k])) for k in sorted(held)}
    real = {k: v for k, v in scores.items() if k.startswith("real/")}
    if real:
        # Real speech held out of training: the lowest line with at most
        # PER_HOUR false wakes an hour of it (a recording's embeddings are
        # 80 ms apart; less the 2 s of padding around it).
        hours = sum(max(0.0, (len(v) + 15) * 0.08 + 0.78 - 2.0) for v in real.values()) / 3600
        threshold = next((t for t in np.arange(-4, 16.01, 0.1)
                          if sum(events(v, t) for v in real.values()) <= PER_HOUR * hours), 16.0)
        log(f"train_name: threshold {threshold:.2f} (at most {PER_HOUR} false wakes an hour of {len(real)} held-out real recordings, {hours:.2f} h)")
    else:
        peak = max(float(v.max(initial=-99)) for v in scores.values())
        threshold = peak + MARGIN
        log(f"train_name: threshold {threshold:.2f} (highest of {len(held)} held-out bank recordings {peak:.2f} + {MARGIN})")
    return head, float(threshold)


def train(name, work, data, noises_dir, log):
    noises = load_noises(noises_dir)
    neg = without_name(bank(work, data, noises, log), name)
    pos = positive_arrays(name, noises)
    head, threshold = fit(name, pos, neg, log)
    return head, threshold, pos[2]


def requirements():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "requirements.txt")
    return [l for l in open(path).read().splitlines() if l and not l.startswith("#")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name"); ap.add_argument("out")
    ap.add_argument("--work", default="/var/cache/parley/wake-train")
    ap.add_argument("--data", default=None, help="../shared/data: real speech for the negative bank")
    ap.add_argument("--noises", required=True, help="training noises (scripts/adapt/make-noises.py), never the kitchen noise")
    a = ap.parse_args()
    name = " ".join(a.name.lower().split())
    if not name or not all(c.isalpha() or c in " '" for c in name) or len(name.split()) > 3:
        sys.exit(f"train_name: \"{a.name}\" is not one to three words of letters")
    os.makedirs(a.work, exist_ok=True)
    log = lambda m: print(m, file=sys.stderr, flush=True)
    head, threshold, voices = train(name, a.work, a.data, a.noises, log)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(head.to_json(name, threshold, {"trained_on": f"{voices} synthetic voices of \"{name}\" and the negative bank",
                                               "requirements": requirements()}))
    os.replace(tmp, a.out)
    log(f"train_name: wrote {a.out}")


if __name__ == "__main__":
    main()

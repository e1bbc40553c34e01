"""The "hey" gate's head, trained as `parley wake train hey` trains it, with
some synthetic voices left out to measure it on (no recording of a person
saying "hey" exists here: its misses are on synthetic voices the head never
heard, and say so), and its false opens on real speech it never trained on.

    python -m parley_training.hey_eval FEATURES DATA NOISES OUT.json

FEATURES: build_features' caches made with --festival (the bank: syn-neg-*,
and neg-* less fold 0, whose clean recordings are the false-open test).
Writes the head trained on every voice (the bank still less fold 0) to OUT.
"""
import os
import sys

import numpy as np

from . import audio, dataset, head as H, train_name as T, wake_cv as W

# Voices no training sees: one of each engine's kinds.
HELD_VOICES = ("espeak/en-gb-scotland/", "espeak/en-us+f4/", "flite/slt/", "festival/cmu_us_slt_arctic_hts/")


def main(features, data, noises_dir, out):
    log = lambda m: print(m, file=sys.stderr, flush=True)
    sets = {k: dataset.load(os.path.join(features, k + ".npz")) for k in ("neg-clean", "neg-noisy", "syn-neg-clean", "syn-neg-noisy")}
    bank = {"syn/" + n: v for n, v in sets["syn-neg-clean"].items()}
    bank.update({"syn-noisy/" + n: v for n, v in sets["syn-neg-noisy"].items()})
    bank.update({"real/" + n: v for n, v in sets["neg-clean"].items() if W.fold_of_name(n) != 0})
    bank.update({"real-noisy/" + n: v for n, v in sets["neg-noisy"].items() if W.fold_of_name(n) != 0})
    bank = T.without_name(bank, "hey")
    noises = T.load_noises(noises_dir)
    kitchen = audio.read(os.path.join(data, "noise/kitchen.wav"))
    pos = T.positives("hey")
    held = [p for p in pos if any(v in p[0] for v in HELD_VOICES)]
    log(f"hey_eval: {len(pos)} synthetic clips, {len(held)} of them held out")

    def arrays(items):
        from .wake_cv import label_windows
        plain = [(n, x) for n, x, _ in items]
        b = {n: bb for n, _, bb in items}
        xs, ys = [], []
        for kind, its in (("clean", plain), ("noisy", plain), ("room", [(n, dataset.reverberant(x, n)) for n, x in plain])):
            feats = dataset.features(its, noises if kind != "clean" else None, None, kind, lead=T.LEAD)
            for n, _ in its:
                win = H.windows(feats[n])
                lab = label_windows(len(win), b[n], T.LEAD)
                xs.append(win[lab >= 0]); ys.append(lab[lab >= 0].astype(np.float32))
        return np.concatenate(xs), np.concatenate(ys), len(plain) * 3

    train = [p for p in pos if p not in held]
    head, threshold = T.fit("hey", arrays(train), bank, log)
    clean = {n: head.logits(H.windows(e)) for n, e in dataset.features([(n, x) for n, x, _ in held], lead=T.LEAD).items()}
    noisy = {n: head.logits(H.windows(e)) for n, e in dataset.features([(n, x) for n, x, _ in held], {"kitchen": kitchen}, 10, "hey-kitchen", lead=T.LEAD).items()}
    neg = {n: head.logits(H.windows(v)) for n, v in sets["neg-clean"].items() if W.fold_of_name(n) == 0}
    hours = W.seconds(data, neg) / 3600
    # Kitchen noise alone, in 3 s pieces, as the endpointer hands the
    # kitchen's clatters over: what a line decodes where nobody speaks.
    step = 3 * audio.RATE
    pieces = [(f"kitchen-{i:03d}", kitchen[i * step:(i + 1) * step]) for i in range(len(kitchen) // step)]
    clatter = {n: head.logits(H.windows(e)) for n, e in dataset.features(pieces, lead=T.LEAD).items()}
    print(f"'hey' head, {len(held)} clips of synthetic voices never trained on ({', '.join(HELD_VOICES)}), "
          f"{len(neg)} recordings of real speech never trained on ({hours:.2f} h)")
    print(f"line (logits from the threshold)  missed clean  missed kitchen 10 dB  opened on real speech (per hour)  opened on {len(clatter)} 3 s pieces of kitchen noise alone")
    for margin in (0, 2, 4, 6, 8, 10, 12, 14, 16, 20):
        t = threshold - margin
        mc = sum(1 for s in clean.values() if s.max(initial=-99) < t)
        mk = sum(1 for s in noisy.values() if s.max(initial=-99) < t)
        fo = sum(W.events(s, t) for s in neg.values())
        oc = sum(1 for s in clatter.values() if s.max(initial=-99) >= t)
        print(f"-{margin}  {mc}/{len(clean)}  {mk}/{len(noisy)}  {fo} ({fo / hours:.1f}/h)  {oc}/{len(clatter)}")
    full, full_threshold = T.fit("hey", arrays(pos), bank, log)
    with open(out, "w") as f:
        f.write(full.to_json("hey", full_threshold, {"trained_on": f"{len(pos)} synthetic clips of 'hey' (alone and before a command) x 3 copies, the negative bank less fold 0 of the real speech"}))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])

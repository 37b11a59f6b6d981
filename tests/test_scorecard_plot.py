"""The score card's plot draws its accuracy beside reference lines on the same positions (issue 51: it showed the
policy's accuracy alone, with nothing to read it against)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from trinity_env import scorecard
from trinity_env.evaluation import accuracy

ROOT = Path(__file__).resolve().parent.parent


def test_the_reference_lines_are_random_s_expectation_and_greedy_s_share_on_the_card_s_positions():
    references = scorecard.reference_accuracy(3, 0)
    positions = accuracy.first_per_count(accuracy.load_set(), 3)
    greedy = accuracy.score_agent("greedy", positions, 0)
    assert references["greedy"] == {row.empty: row.moves.hits / row.moves.total for row in greedy.counts}
    counted = [p for p in positions if p.counts_for_moves and p.empty == 4]
    assert references["random (expected)"][4] == pytest.approx(
        sum(len(p.best_moves) / p.legal_moves for p in counted) / len(counted)
    )
    assert set(references["random (expected)"]) == set(references["greedy"]) == {p.empty for p in positions}


@pytest.fixture
def drawn(monkeypatch):
    """What ``plot`` would write: the figure, caught at the write door."""
    import matplotlib

    matplotlib.use("Agg")
    from trinity_env.core import writes

    caught = {}
    monkeypatch.setattr(writes, "write_figure", lambda path, figure, **options: caught.update(figure=figure))
    return caught


def _greedy_card(**changes):
    """The shipped quick card of greedy, read back, its accuracy cut to two tiny cells (fast reference lines)."""
    data = json.loads((ROOT / "docs" / "benchmark" / "quick" / "greedy" / "scorecard.json").read_text("utf-8"))
    tiny = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=3, puzzles=8)
    cell = {"hits": 1, "total": 2, "share": 0.5, "low": 0.1, "high": 0.9}
    card = scorecard.ScoreCard.from_json(data)
    return dataclasses.replace(card, protocol=tiny, accuracy={"4": cell, "5": cell}, value_sign=None, **changes)


def test_the_plot_draws_the_reference_lines(tmp_path, drawn):
    _greedy_card().plot(tmp_path / "scorecard.png")
    axis = drawn["figure"].axes[0]
    lines = {line.get_label(): line for line in axis.get_lines()}
    references = scorecard.reference_accuracy(3, 0)
    for name in ("random (expected)", "greedy"):
        assert list(lines[name].get_xdata()) == [4, 5]
        assert list(lines[name].get_ydata()) == [references[name][4], references[name][5]]
    assert {"random (expected)", "greedy"} <= {text.get_text() for text in axis.get_legend().get_texts()}


def test_the_plot_shows_both_ratings_among_the_pool_members(tmp_path, drawn):
    """The pool is the rating's reference: each rating's point and interval on the line of its pool's members."""
    from trinity_env.evaluation.anchored import POOL_FILES, ReferencePool

    card = _greedy_card()
    card.plot(tmp_path / "scorecard.png")
    panel = drawn["figure"].axes[1]
    assert [label.get_text() for label in panel.get_yticklabels()] == ["dealt hands", "with the draft"]
    names = [text.get_text() for text in panel.texts]
    for y, (rating, file) in enumerate(((card.rating, POOL_FILES["dealt"]), (card.rating_draft, POOL_FILES["pick"]))):
        pool = ReferencePool.load(file)
        members = [text for text in panel.texts if text.get_text() in pool.labels and text.xy[1] == y]
        assert sorted((text.get_text(), text.xy[0]) for text in members) == sorted(zip(pool.labels, pool.elo))
        assert f"{rating['elo']:+.0f}" in names
    drawn_intervals = [  # each errorbar's one segment: its (low, high)
        float(x) for container in panel.containers for x, _ in container.lines[2][0].get_segments()[0]
    ]
    assert drawn_intervals == pytest.approx(
        [r[end] for r in (card.rating, card.rating_draft) for end in ("low", "high")]
    )


def test_a_card_read_back_from_its_json_is_the_card():
    card = _greedy_card()
    assert scorecard.ScoreCard.from_json(card.to_json()) == card

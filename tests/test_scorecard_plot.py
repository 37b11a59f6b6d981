"""The score card's plot draws its accuracy beside reference lines on the same positions (issue 51: it showed the
policy's accuracy alone, with nothing to read it against)."""

from __future__ import annotations

import pytest

from trinity_env import scorecard
from trinity_env.evaluation import accuracy


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


def test_the_plot_draws_the_reference_lines(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from trinity_env.core import writes

    drawn = {}
    monkeypatch.setattr(writes, "write_figure", lambda path, figure, **options: drawn.update(figure=figure))
    tiny = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=3, puzzles=8)
    cell = {"hits": 1, "total": 2, "share": 0.5, "low": 0.1, "high": 0.9}
    card = scorecard.ScoreCard("greedy", tiny, 0, {}, {}, {"4": cell, "5": cell}, None, {}, None)
    card.plot(tmp_path / "scorecard.png")
    axis = drawn["figure"].axes[0]
    lines = {line.get_label(): line for line in axis.get_lines()}
    references = scorecard.reference_accuracy(3, 0)
    for name in ("random (expected)", "greedy"):
        assert list(lines[name].get_xdata()) == [4, 5]
        assert list(lines[name].get_ydata()) == [references[name][4], references[name][5]]
    assert {"random (expected)", "greedy"} <= {text.get_text() for text in axis.get_legend().get_texts()}

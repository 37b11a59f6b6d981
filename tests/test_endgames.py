"""The endgame suite: built from play, solved, saved as JSONL in the position format, scores agents."""

from __future__ import annotations

import json

import pytest
from perfect import PerfectAgent

from trinity_env.agents import make
from trinity_env.core import PositionError
from trinity_env.evaluation.endgames import (
    DEFAULT_SUITE,
    FORMAT,
    build_suite,
    load_suite,
    save_suite,
    score_agent,
    suite_share,
)
from trinity_env.evaluation.ratings import Share
from trinity_env.search.solver import Solver


def test_a_suite_is_built_saved_loaded_and_scored(tmp_path):
    suite = build_suite(4, seed=1, empty=(4, 6), progress=False)
    assert len(suite) == 4
    for endgame in suite:
        assert 4 <= endgame.empty <= 6 and endgame.value == 1
        assert 0 < len(endgame.best_moves) < len(endgame.position.legal_moves())
    path = tmp_path / "suite.jsonl"
    save_suite(suite, path)
    lines = path.read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[0]) == {"format": FORMAT}
    record = json.loads(lines[1])
    assert record["position"]["phase"] == "play" and record["winner"] == record["position"]["to_move"]
    loaded = load_suite(path)
    assert [e.best_moves for e in loaded] == [e.best_moves for e in suite]
    assert score_agent(PerfectAgent(), loaded) == 1.0
    won = sum(e.value == 1 for e in loaded)
    assert suite_share(PerfectAgent(), loaded) == Share(won, won) and isinstance(
        suite_share(make("random"), loaded).hits, int
    )
    assert 0.0 <= score_agent(make("random"), loaded) < 1.0


def test_a_corrupt_suite_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"format": FORMAT}) + '\n{"position": {"phase": "play"}, "value": 1, "best_moves": []}\n'
    )
    with pytest.raises(PositionError, match=r"bad\.jsonl, line 2: not an endgame record"):
        load_suite(path)


def test_a_suite_from_before_the_header_is_refused_in_one_line(tmp_path):
    """The shipped suite starts with its header; the same records without it (the old format) are refused."""
    first, rest = DEFAULT_SUITE.read_text(encoding="utf-8").split("\n", 1)
    assert json.loads(first) == {"format": FORMAT}
    old = tmp_path / "old.jsonl"
    old.write_text(rest, encoding="utf-8")
    with pytest.raises(PositionError) as refused:
        load_suite(old)
    expected = f"{old}, line 1: not an endgame suite (its first line must be a header with format {FORMAT!r})"
    assert str(refused.value) == expected


def test_the_shipped_suite_is_sound():
    suite = load_suite(DEFAULT_SUITE)
    assert len(suite) >= 50
    assert all(6 <= e.empty <= 10 and e.value == 1 for e in suite)
    solver = Solver(table_bits=20)
    for endgame in suite[:3]:  # spot-check: the stored winning moves do win
        state = endgame.position
        for move in endgame.best_moves:
            child = state.play(move)
            if not child.is_over:
                value = solver.value(child)
                assert (value if child.to_move == state.to_move else -value) == 1

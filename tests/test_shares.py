"""``Share``: one type for every figure that is a proportion, its Wilson interval and its JSON, read back strictly."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from trinity_env.evaluation.ratings import SHARE_KEYS, Share, wilson_interval


def _old_dict_share(hits: float, total: int) -> dict:
    """The balance lab's and the solved openings' share before ``Share`` (their ``_share``), for comparison."""
    if not total:
        return {"share": None, "low": None, "high": None, "n": 0}
    low, high = wilson_interval(hits, total)
    return {"share": hits / total, "low": low, "high": high, "n": total}


CASES = [(0, 0), (0, 1), (1, 1), (0, 11), (3, 7), (2.5, 3), (12.0, 20), (199.5, 400), (400, 400)]


@pytest.mark.parametrize(("hits", "total"), CASES)
def test_a_share_goes_to_json_and_back_unchanged(hits, total):
    share = Share(hits, total)
    text = json.dumps(share.to_json())
    assert list(json.loads(text)) == list(SHARE_KEYS)
    again = Share.from_json(json.loads(text))
    assert again == share and again.to_json() == share.to_json()
    assert json.dumps(again.to_json()) == text


@pytest.mark.parametrize(("hits", "total"), CASES)
def test_its_figures_are_the_ones_every_old_helper_gave(hits, total):
    share = Share(hits, total)
    old = _old_dict_share(hits, total)
    data = share.to_json()
    assert (data["share"], data["low"], data["high"], data["total"]) == (
        old["share"],
        old["low"],
        old["high"],
        old["n"],
    )
    if total:
        # accuracy.Share, puzzles.PuzzleScore, the arena's cells and the trainers' (rate, low, high) rows
        assert share.value == hits / total and share.interval == wilson_interval(hits, total)
        arena = wilson_interval(np.float64(hits), int(np.float64(total)))  # the arena kept numpy floats
        assert share.interval == arena
        low, high = wilson_interval(hits, total)
        assert share.text() == f"{hits / total:.1%} [{low:.1%}, {high:.1%}]"
    else:
        assert math.isnan(share.value) and share.text() == "-"


def test_whole_hits_are_kept_whole_and_halves_as_halves():
    assert Share(12.0, 20) == Share(12, 20) and type(Share(12.0, 20).hits) is int
    assert Share(np.int64(3), np.int64(7)).to_json()["hits"] == 3 and type(Share(np.int64(3), 7).total) is int
    assert Share(2.5, 3).hits == 2.5


@pytest.mark.parametrize(
    ("hits", "total", "message"),
    [
        (1, -1, "total must be a whole number >= 0, got -1"),
        (1, 2.0, "total must be a whole number >= 0, got 2.0"),
        (1, True, "total must be a whole number"),
        (3, 2, "hits must be a number from 0 to its total 2, got 3"),
        (-0.5, 2, "hits must be a number from 0 to its total 2"),
        (math.nan, 2, "hits must be a number"),
        ("1", 2, "hits must be a number"),
        (True, 2, "hits must be a number"),
    ],
)
def test_a_share_that_cannot_be_is_refused(hits, total, message):
    with pytest.raises(ValueError, match=message):
        Share(hits, total)


GOOD = Share(3, 7).to_json()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([3, 7], "moves: expected an object with hits, total, share, low, high, got list"),
        ({k: v for k, v in GOOD.items() if k != "hits"}, "moves: missing hits"),
        ({"share": 0.5, "low": 0.1, "high": 0.9, "n": 2}, "moves: missing hits, total; unknown n"),
        (GOOD | {"z": 1}, r"moves: unknown z \(a share has hits, total, share, low, high\)"),
        (GOOD | {"hits": "3"}, "moves: hits must be a number, got '3'"),
        (GOOD | {"total": 7.0}, "moves: total must be a whole number, got 7.0"),
        (GOOD | {"total": None}, "moves: total must be a number, got None"),
        (GOOD | {"hits": 8}, "moves: a share's hits must be a number from 0 to its total 7, got 8"),
        (GOOD | {"share": 0.5}, "moves: share is 0.5, but 3 of 7 gives 0.428"),
        (GOOD | {"low": None}, "moves: low is None, but 3 of 7 gives"),
        (GOOD | {"high": True}, "moves: high is True, but 3 of 7 gives"),
        (Share(0, 0).to_json() | {"share": 0.0}, "moves: share is 0.0, but 0 of 0 gives None"),
    ],
)
def test_from_json_refuses_a_bad_field_in_one_line(data, message):
    with pytest.raises(ValueError, match=message) as refused:
        Share.from_json(data, "moves")
    assert "\n" not in str(refused.value)


def test_a_reader_s_share_is_a_share():
    from trinity_env.evaluation.accuracy import CountScore

    row = CountScore(5, Share(30, 40))
    assert CountScore.from_json(json.loads(json.dumps(row.to_json()))) == row
    with pytest.raises(ValueError, match="moves: unknown n"):
        CountScore.from_json({"empty_tiles": 5, "moves": row.moves.to_json() | {"n": 40}})

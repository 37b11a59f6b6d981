"""A rating's games are kept as they finish (``games_file``): a stopped rating, run again, plays only the chunks
not yet played and ends on the same rating; a file of other settings, or with a record no chunk of the rating
plays, is refused in one line; the score card and ``trinity benchmark`` keep theirs in the card's folder and
remove them once the card is written."""

from __future__ import annotations

import json

import pytest
from pools import small_pools

from trinity_env import scorecard
from trinity_env.agents.spec import AgentSpec, player
from trinity_env.cli import main as trinity
from trinity_env.cli.common import EXIT_INTERRUPTED
from trinity_env.core import ArgumentError
from trinity_env.evaluation import anchored
from trinity_env.evaluation.anchored import GamesFileError, ReferencePool, rate_against_pool, rate_all_against_pool

TINY = scorecard.Protocol("tiny", rating_games=12, accuracy_per_count=2, puzzles=4)
"""Two chunks of games (10 and 2) against each pool member."""


@pytest.fixture
def pool() -> ReferencePool:
    return ReferencePool.load().only(["random", "greedy"])


@pytest.fixture
def counted(monkeypatch):
    """The chunks played (agent, member, start), in order; ``stop_after[0]``: Ctrl-C after that many."""
    played: list[tuple[int, int, int]] = []
    stop_after = [None]
    real = anchored._play

    def play(task):
        if stop_after[0] is not None and len(played) == stop_after[0]:
            raise KeyboardInterrupt
        result = real(task)
        played.append(result[:3])
        return result

    monkeypatch.setattr(anchored, "_play", play)
    return played, stop_after


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_stopped_rating_goes_on_from_its_games_file_and_ends_on_the_same_rating(tmp_path, pool, counted):
    played, stop_after = counted
    whole = rate_against_pool("mcts:20", 25, seed=3, workers=1, pool=pool)  # chunks start at 0, 10, 20
    assert len(played) == 6
    played.clear()
    stop_after[0] = 4
    path = tmp_path / "games.jsonl"
    with pytest.raises(KeyboardInterrupt):
        rate_against_pool("mcts:20", 25, seed=3, workers=1, pool=pool, games_file=path)
    lines = _records(path)
    assert lines[0]["format"] == anchored.GAMES_FORMAT and lines[0]["agents"] == ["mcts:20"]
    assert lines[0]["source_sha256"] == anchored.source_sha256() and lines[0]["rules"] == pool.rules.to_dict()
    assert [(r["agent"], r["member"], r["first_game"]) for r in lines[1:]] == played  # each finished chunk, kept
    kept = list(played)
    played.clear()
    stop_after[0] = None
    resumed = rate_against_pool("mcts:20", 25, seed=3, workers=1, pool=pool, games_file=path)
    assert resumed == whole
    assert len(played) == 2 and not set(played) & set(kept)  # only what was missing
    played.clear()
    assert rate_against_pool("mcts:20", 25, seed=3, workers=1, pool=pool, games_file=path) == whole
    assert played == []  # everything there: no game played


def test_a_games_file_is_the_same_with_two_workers(tmp_path, pool):
    path = tmp_path / "games.jsonl"
    two = rate_all_against_pool(["greedy", "mcts:20"], 12, seed=1, workers=2, pool=pool, games_file=path)
    assert rate_all_against_pool(["greedy", "mcts:20"], 12, seed=1, workers=1, pool=pool) == two
    assert len(_records(path)) == 1 + 2 * 2 * 2  # the header, then 2 agents x 2 members x 2 chunks


def test_a_games_file_of_other_settings_is_refused_in_one_line_before_a_game(tmp_path, pool, counted):
    played, _ = counted
    path = tmp_path / "games.jsonl"
    rate_against_pool("greedy", 2, seed=3, workers=1, pool=pool, games_file=path)
    before = path.read_bytes()
    played.clear()
    for call in (
        lambda: rate_against_pool("greedy", 2, seed=4, workers=1, pool=pool, games_file=path),
        lambda: rate_against_pool("mcts:20", 2, seed=3, workers=1, pool=pool, games_file=path),
        lambda: rate_against_pool("greedy", 4, seed=3, workers=1, pool=pool, games_file=path),
        lambda: rate_against_pool("greedy", 2, seed=3, workers=1, pool=ReferencePool.load(), games_file=path),
    ):
        with pytest.raises(GamesFileError, match="was built with") as caught:
            call()
        assert "\n" not in str(caught.value)
    assert played == [] and path.read_bytes() == before


@pytest.mark.parametrize(
    "record, problem",
    [
        ({"agent": 0, "member": 5, "first_game": 0, "games": 2, "points": 1}, "no chunk of this rating starts there"),
        ({"agent": 0, "member": 0, "first_game": 0, "games": 1, "points": 1}, "no chunk of this rating starts there"),
        ({"agent": 0, "member": 0, "first_game": 0, "games": 2, "points": 3}, "3 points in 2 games"),
        ({"agent": 0, "member": 0, "first_game": 0, "games": 2, "points": 0.3}, "points must be a whole or half"),
        ({"agent": 0, "member": 0, "first_game": 0, "games": 2, "points": -1}, "points must be a whole or half"),
        ({"agent": 0, "member": 0, "first_game": "0", "games": 2, "points": 1}, "first_game must be a whole number"),
    ],
)
def test_a_record_no_chunk_of_the_rating_plays_is_refused_in_one_line(tmp_path, pool, record, problem):
    path = tmp_path / "games.jsonl"
    header = anchored.games_header([player("greedy")], 2, 3, pool)
    path.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(GamesFileError, match=problem) as caught:
        rate_against_pool("greedy", 2, seed=3, workers=1, pool=pool, games_file=path)
    assert f"{path}, line 2" in str(caught.value) and "\n" not in str(caught.value)


def test_outside_code_cannot_be_rated_with_a_games_file(tmp_path, pool):
    """A py: factory's code is outside the package: nothing could tell its edited version from the one that played."""
    spec = AgentSpec.parse("py:json:loads", allow_code=True)
    with pytest.raises(ArgumentError, match="a games file cannot check outside code"):
        rate_against_pool(spec, 2, workers=1, pool=pool, games_file=tmp_path / "g")


def test_a_games_file_of_other_code_is_refused(tmp_path, pool, monkeypatch):
    path = tmp_path / "games.jsonl"
    rate_against_pool("greedy", 2, seed=3, workers=1, pool=pool, games_file=path)
    monkeypatch.setattr(anchored, "source_sha256", lambda: "0" * 64)  # the package's code edited since
    with pytest.raises(GamesFileError, match=r"was built with .*source_sha256"):
        rate_against_pool("greedy", 2, seed=3, workers=1, pool=pool, games_file=path)


def test_a_function_cannot_be_rated_with_a_games_file(tmp_path, pool):
    with pytest.raises(ArgumentError, match="needs agents named by spec"):
        rate_against_pool(
            lambda observation, mask: int(mask.argmax()), 2, workers=1, pool=pool, games_file=tmp_path / "g"
        )


@pytest.fixture
def two_pools(tmp_path, monkeypatch):
    """The card's pools, dealt and drafted, each ``random`` and ``greedy`` (quick games)."""
    monkeypatch.setattr(anchored, "POOL_FILES", small_pools(tmp_path))


def test_a_stopped_card_goes_on_from_its_games_and_removes_them_when_complete(tmp_path, two_pools, counted):
    played, stop_after = counted
    whole = scorecard.benchmark("greedy", TINY, seed=2, workers=1).to_json()
    total = len(played)
    played.clear()
    folder = tmp_path / "card"
    folder.mkdir()
    stop_after[0] = total - 3  # stopped in the rating with the draft
    with pytest.raises(KeyboardInterrupt):
        scorecard.benchmark("greedy", TINY, seed=2, workers=1, games_folder=folder)
    kept = sorted(p.name for p in folder.iterdir())
    assert len(kept) == 2 and all(name.startswith("rating-games-") for name in kept)
    played.clear()
    stop_after[0] = None
    card = scorecard.benchmark("greedy", TINY, seed=2, workers=1, games_folder=folder)
    assert card.to_json() == whole and len(played) == 3
    assert sorted(p.name for p in folder.iterdir()) == kept  # kept until the card is on disk
    card.write(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["scorecard.json", "scorecard.md", "scorecard.png"]


def test_trinity_benchmark_stopped_keeps_its_games_and_the_same_command_goes_on(
    tmp_path, two_pools, counted, monkeypatch, capsys
):
    played, stop_after = counted
    monkeypatch.setitem(scorecard.PROTOCOLS, "quick", TINY)
    command = [
        "benchmark",
        "--agent",
        "greedy",
        "--out",
        str(tmp_path / "card"),
        "--quiet",
        "--workers",
        "1",
        "--seed",
        "2",
    ]
    stop_after[0] = 2
    assert trinity(command) == EXIT_INTERRUPTED
    assert "finished rating games are kept in" in capsys.readouterr().err
    stop_after[0] = None
    played.clear()
    assert trinity(command) == 0
    assert len(played) == 4 + 4 - 2  # each pool's 2 members x 2 chunks, less the 2 kept
    card = json.loads((tmp_path / "card" / "scorecard.json").read_text(encoding="utf-8"))
    assert card == scorecard.benchmark("greedy", TINY, seed=2, workers=1).to_json()
    assert sorted(p.name for p in (tmp_path / "card").iterdir()) == ["scorecard.json", "scorecard.md", "scorecard.png"]

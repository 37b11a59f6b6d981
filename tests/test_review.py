"""``trinity review``: exact values where the solver answers, labelled estimates elsewhere, blunders, bad input."""

from __future__ import annotations

import json
import random

import pytest

from trinity_env.agents import make
from trinity_env.cli import main
from trinity_env.core import GameState, Move, Replay
from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite
from trinity_env.evaluation.match import RunInterrupted, play_game
from trinity_env.evaluation.review import review_replay
from trinity_env.search.solver import Solver
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict


def _play(start: GameState, specs: tuple[str, str], seed: int) -> list[GameState]:
    agents = [make(spec) for spec in specs]
    for seat, agent in enumerate(agents):
        agent.reset(seed + seat)
    states = [start]
    while not states[-1].is_over:
        state = states[-1]
        seat = state.to_move
        states.append(state.apply(agents[seat].act(observation_dict(state, seat, True), state)))
    return states


def _small_replays() -> list[Replay]:
    """Games from the endgame suite's positions with few empty tiles (replays that start at a position)."""
    starts = [e.position for e in load_suite(DEFAULT_SUITE) if e.empty <= 7][:3]
    assert len(starts) == 3
    pairs = [("random", "random"), ("greedy", "random"), ("random", "greedy")]
    return [Replay.from_states(_play(s, pair, k)) for k, (s, pair) in enumerate(zip(starts, pairs))]


def _value(solver: Solver, state: GameState, player: int) -> int:
    if state.is_over:
        return 0 if state.winner is None else (1 if state.winner == player else -1)
    value = solver.value(state)
    return value if state.to_move == player else -value


def test_the_review_of_small_games_is_the_solvers():
    solver = Solver(table_bits=18)
    blunders = 0
    for replay in _small_replays():
        review = review_replay(replay, solver=Solver(table_bits=18))
        states = replay.states()
        assert len(review.placements) == len(states) - 1 and not review.partial
        for k, placement in enumerate(review.placements):
            state, after = states[k], states[k + 1]
            solution = solver.solve(state)
            assert placement.before.exact and placement.after_exact
            assert placement.before.value == solution.value == _value(solver, state, state.to_move)
            assert placement.best_moves == solution.best_moves
            assert placement.after_value == _value(solver, after, state.to_move)
            played = Move(after.last.card, after.last.tile)
            assert (placement.blunder is not None) == (played not in solution.best_moves)
            assert (placement.blunder is not None) == (placement.after_value < placement.before.value)
            if placement.blunder:
                names = {1: "won", 0: "drawn", -1: "lost"}
                assert placement.blunder == f"{names[solution.value]} -> {names[placement.after_value]}"
                blunders += 1
        data = review.to_json()
        assert data["blunders"] == [p.number for p in review.blunders]
        assert all(p["before"]["kind"] == "exact" for p in data["placements"])
        assert "BLUNDER" in review.text() or not review.blunders
    assert blunders > 0  # random players blunder: the check above saw some


def test_positions_past_the_budget_are_labelled_estimates():
    replay = _small_replays()[0]
    states = replay.states()
    for agent, method in (("mcts:50", "root win share"), ("greedy", "self-play playouts")):
        review = review_replay(replay, max_nodes=1, agent=agent, solver=Solver(table_bits=16))
        estimated = [p for p in review.placements if p.empty_tiles > 1]  # one empty tile: solved at the root node
        assert len(estimated) >= 5
        for placement in estimated:
            assert not placement.before.exact and method in placement.before.method
            assert -1 <= placement.before.value <= 1
            assert placement.blunder is None and placement.best_moves is None
        assert all(p.before.exact == (len(states[p.number - 1].empty_tiles()) == 1) for p in review.placements)
        data = review.to_json()
        assert {p["before"]["kind"] for p in data["placements"][: len(estimated)]} == {"estimate"}
        assert all("estimated_best_moves" in p and "best_moves" not in p for p in data["placements"][: len(estimated)])
        text = review.text()
        assert "estimates by" in text and "~" in text and "Blunders (proven by the solver): none" in text


def test_a_deterministic_estimator_s_playouts_are_said_to_be_one_game(tmp_path):
    """``greedy`` plays its eight playouts as one game: the review printed ``~+1.00`` and "prefers X 100%" as if
    from eight independent games (issue 51). ``level:1`` (random) plays distinct ones."""
    from trinity_env.evaluation.review_values import PLAYOUTS

    replay = _small_replays()[0]
    review = review_replay(replay, max_nodes=1, agent="greedy", solver=Solver(table_bits=16))
    estimated = [p for p in review.placements if not p.before.exact]
    assert estimated and all(p.before.distinct_games == 1 for p in estimated)
    assert all(f"({PLAYOUTS} games, 1 distinct)" in p.before.method for p in estimated)
    text = review.text()
    assert f"{len(estimated)} of the estimates rest on {PLAYOUTS} identical self-play games (greedy plays" in text
    assert "prefers" not in text and "(its playouts: one game)" in text
    assert review.to_json()["placements"][0]["before"]["distinct_games"] == 1
    stochastic = review_replay(replay, max_nodes=1, agent="level:1", solver=Solver(table_bits=16))  # random
    assert any(p.before.distinct_games > 1 for p in stochastic.placements if not p.before.exact)
    assert "identical self-play games" not in stochastic.text()


def test_a_hidden_hand_game_is_reviewed_with_both_hands_revealed(tmp_path):
    config = make_config(draft="dealt", open_hands=False)
    states = []
    play_game((make("greedy"), make("random")), config, 3, on_state=states.append)
    replay = Replay.from_states(states, open_hands=False)
    review = review_replay(replay, max_nodes=200_000, agent="mcts:30", solver=Solver(table_bits=18))
    assert review.hands_revealed and review.to_json()["hands_revealed"] is True
    assert "hidden hands" in review.text() and "both hands revealed" in review.text()
    assert any(p.before.exact for p in review.placements) and any(not p.before.exact for p in review.placements)
    path = tmp_path / "review.png"
    review.plot(path)
    assert path.read_bytes().startswith(b"\x89PNG")


def test_a_drafted_game_reviews_its_placements_only():
    states = []
    play_game((make("greedy"), make("greedy")), make_config(), 5, on_state=states.append)
    replay = Replay.from_states(states)
    assert replay.rules["draft"] == "pick"
    review = review_replay(replay, max_nodes=50_000, agent="mcts:20", solver=Solver(table_bits=16))
    assert len(review.placements) == len(replay.moves)
    assert [(p.card, p.tile) for p in review.placements] == [(c.notation, t) for _, c, t in replay.moves]


def _replay_file(tmp_path) -> str:
    path = tmp_path / "game.json"
    _small_replays()[1].save(path)
    return str(path)


def test_the_command_prints_the_review_and_writes_json_and_png(tmp_path, capsys):
    replay = _replay_file(tmp_path)
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    assert main(["review", replay, "--json", str(out_json), "--png", str(out_png), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"Review of {replay}:") and f"wrote {out_json}" in printed
    data = json.loads(out_json.read_text())
    assert data["format"] == "trinity-towers-review" and not data["partial"] and data["max_nodes"] == 2_000_000
    assert out_png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "nobody"], "no agent named 'nobody'"),
        (["--agent", "mcts:0"], "bad arguments|simulations"),
        (["--max-nodes", "0"], "expected a whole number >= 1"),
        (["--max-nodes", "-5"], "expected a whole number >= 1|expected one argument"),
        (["--max-nodes", "1e6"], "expected a whole number >= 1"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    import re

    replay = _replay_file(tmp_path)
    assert main(["review", replay, *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("trinity review: ") and captured.err.count("\n") == 1
    assert re.search(message, captured.err), captured.err


def test_a_file_that_is_not_a_replay_is_one_line_and_exit_2(tmp_path, capsys):
    position = tmp_path / "position.json"
    position.write_text(json.dumps(load_suite(DEFAULT_SUITE)[0].position.to_dict()))
    broken = tmp_path / "broken.json"
    data = _small_replays()[0].to_dict()
    data["moves"][0]["tile"] = (data["moves"][0]["tile"] + 1) % 15  # no longer the recorded game
    broken.write_text(json.dumps(data))
    cases = {
        str(position): "is not a replay",
        str(tmp_path / "missing.json"): "cannot read",
        str(broken): "replay",
    }
    (tmp_path / "text.json").write_text("not json")
    cases[str(tmp_path / "text.json")] = "not valid JSON"
    for path, message in cases.items():
        assert main(["review", path]) == 2
        err = capsys.readouterr().err
        assert err.startswith("trinity review: ") and err.count("\n") == 1 and message in err, err


def test_an_output_path_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys):
    replay = _replay_file(tmp_path)
    assert main(["review", replay, "--png", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_ctrl_c_keeps_what_was_reviewed(tmp_path, capsys, monkeypatch):
    from trinity_env.search import solver as solver_module

    calls = {"n": 0}
    original = solver_module.Solver.solve

    def interrupted_on_the_third(self, state, **budget):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return original(self, state, **budget)

    monkeypatch.setattr(solver_module.Solver, "solve", interrupted_on_the_third)
    with pytest.raises(RunInterrupted) as stop:
        review_replay(_small_replays()[0], solver=Solver(table_bits=16))
    partial = stop.value.partial
    assert partial.partial and sum(e is not None for e in partial.evaluations) >= 2
    assert "PARTIAL REVIEW" in partial.text()

    calls["n"] = 0
    replay = _replay_file(tmp_path)
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    assert main(["review", replay, "--json", str(out_json), "--png", str(out_png), "--quiet"]) == 130
    captured = capsys.readouterr()
    assert "PARTIAL REVIEW" in captured.out
    assert captured.err.startswith("trinity review: interrupted: partial review (") and captured.err.count("\n") == 1
    assert json.loads(out_json.read_text())["partial"] is True and out_png.read_bytes().startswith(b"\x89PNG")


def test_a_replay_is_accepted_as_a_dict_or_a_path(tmp_path):
    replay = _small_replays()[2]
    path = tmp_path / "g.json"
    replay.save(path)
    by_path = review_replay(path, solver=Solver(table_bits=16))
    by_dict = review_replay(replay.to_dict(), solver=Solver(table_bits=16))
    assert by_path.source == str(path) and by_dict.source is None

    def timeless(review):
        return [{**p.to_json(), "before": {**p.to_json()["before"], "seconds": 0}} for p in review.placements]

    assert timeless(by_path) == timeless(by_dict)


@pytest.mark.slow
def test_a_whole_game_with_the_default_budget_and_agent(tmp_path):
    states = []
    play_game((make("greedy"), make("mcts:200")), make_config(draft="dealt"), 3, on_state=states.append)
    review = review_replay(Replay.from_states(states), seed=random.Random(0).randrange(100))
    exact = [p.before.exact for p in review.placements]
    assert exact[-1] and not exact[0]  # the end is solved, the start estimated
    review.plot(tmp_path / "game.png")

"""Solved openings (``trinity solve-openings``, ``trinity_env.evaluation.openings``): what is solved, the summary,
bad input and the balance lab's use of the records.

A dealt game's opening takes the solver billions of nodes, so most tests solve late-game
positions of the same deals (``LateGame``: a few empty tiles, milliseconds each) through the
very code the openings take, and check the records against the solver called directly; the
dealt openings themselves run under budgets too small to solve them, which tests the
unsolved records. The records file across runs (reruns, locks, Ctrl-C, progress):
``test_openings_file.py``; on Ray: ``test_openings_ray.py``.
"""

from __future__ import annotations

import json
import random
import re
from unittest.mock import ANY

import pytest
from openings_common import BIG, BITS, LATE, records_in, run_cli, without_time

from trinity_env.agents.spec import make
from trinity_env.core import ArgumentError, GameState, Move
from trinity_env.evaluation import openings
from trinity_env.evaluation.match import play_game
from trinity_env.evaluation.openings import LateGame, dealt_game, solve_deal, solve_openings
from trinity_env.evaluation.openings_file import read_records
from trinity_env.evaluation.openings_summary import file_summary, mover_tile, summarise, summary_text
from trinity_env.evaluation.ratings import wilson_interval
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.config import make_config

# ---------------------------------------------------------------------- what is solved


class _FirstState(Exception):
    """Raised with a game's first state, to stop the game there."""


def _stop_at_first(state: GameState) -> None:
    raise _FirstState(state)


def test_a_dealt_game_is_the_one_the_arena_deals_from_the_seed():
    config = make_config(draft="dealt")
    for seed in (0, 1, 77):
        state = dealt_game(seed)
        assert state.to_dict() == config.new_game(random.Random(seed)).to_dict()
        assert len(state.empty_tiles()) == 15 and all(len(hand) == 8 for hand in state.to_dict()["hands"])
        with pytest.raises(_FirstState) as first:
            play_game((make("random"), make("random")), config, seed, on_state=_stop_at_first)
        assert first.value.args[0].to_dict() == state.to_dict()  # the arena's game with this seed starts here
    assert dealt_game(3).to_dict() != dealt_game(4).to_dict()


def test_late_games_are_seeded_and_have_the_empty_tiles_asked_for():
    for seed in range(6):
        state = LATE(seed)
        assert len(state.empty_tiles()) == 6 and not state.is_over
        assert state.to_dict() == LATE(seed).to_dict()
    for bad in (0, 15, 6.0, True):
        with pytest.raises(ArgumentError, match="empty must be an int"):
            LateGame(bad)


def test_solved_records_hold_the_solver_s_value_and_every_best_first_placement():
    outcomes = set()
    for seed in range(6):
        deal = LateGame(9)
        record = solve_deal(seed, BIG, BITS, deal, classify_nodes=BIG)
        state = deal(seed)
        solution = Solver(table_bits=BITS).solve(state)
        assert record["solved"] and record["all_best_moves"] and record["classify_nodes"] == BIG
        assert record["value"] == solution.value == Solver(table_bits=BITS).value(state)
        assert record["winner"] == solution.winner and record["first_player"] == state.to_move
        assert sorted(Move(m["card"], m["tile"]) for m in record["best_moves"]) == sorted(solution.best_moves)
        assert record["value_nodes"] <= record["nodes"] <= 2 * BIG and record["budget_nodes"] == BIG
        assert record["position"] == state.to_dict() and record["deal"] == "late-9" and record["seed"] == seed
        outcomes.add(record["value"])
    assert outcomes == {1, -1}  # both kinds of root: won, and lost (where every placement keeps the value)


def test_a_deal_past_its_budget_is_recorded_unsolved_with_the_nodes_spent():
    state = dealt_game(5)
    record = solve_deal(5, 20_000, BITS)
    with pytest.raises(SolverBudgetError) as stopped:
        Solver(table_bits=BITS).best_move(state, max_nodes=20_000)
    assert record["solved"] is False and "value" not in record and "best_moves" not in record
    assert record["nodes"] == stopped.value.nodes and 0 < record["nodes"] <= 20_000
    assert record["deal"] == "opening" and record["position"] == state.to_dict()
    assert without_time(record) == without_time(solve_deal(5, 20_000, BITS))  # the same on every run


def test_a_deal_s_placements_are_classified_only_with_their_own_budget():
    deal = LateGame(7)
    for seed in range(40):
        whole = solve_deal(seed, BIG, BITS, deal, classify_nodes=BIG)
        if whole["value"] == 1 and whole["nodes"] > whole["value_nodes"] + 1:
            break
    else:
        pytest.fail("no won position whose placements cost more than its value")
    # the value's budget alone, however large, classifies nothing: the one placement found is recorded
    alone = solve_deal(seed, BIG, BITS, deal)
    assert alone["solved"] and alone["value"] == whole["value"] and not alone["all_best_moves"]
    assert len(alone["best_moves"]) == 1 and alone["best_moves"][0] in whole["best_moves"]
    assert alone["nodes"] == alone["value_nodes"] == whole["value_nodes"] and alone["classify_nodes"] == 0
    # a classification budget too small to finish keeps the one found, and counts what it spent
    short = solve_deal(seed, whole["value_nodes"], BITS, deal, classify_nodes=1)
    assert short["solved"] and not short["all_best_moves"] and short["best_moves"] == alone["best_moves"]
    assert short["value_nodes"] == whole["value_nodes"] < short["nodes"] <= whole["value_nodes"] + 1


# ---------------------------------------------------------------------- the summary


def test_the_summary_counts_what_the_records_say(tmp_path):
    out = tmp_path / "deals.jsonl"
    solve_openings(range(12), BIG, out, table_bits=BITS, classify_nodes=BIG, deal=LateGame(9), progress=False)
    solve_openings(range(12, 15), 10, out, table_bits=BITS, deal=LateGame(9), progress=False)
    records = list(read_records(out).values())
    summary = summarise(records)
    solved = [r for r in records if r["solved"]]
    wins = sum(r["value"] == 1 for r in solved)
    assert (summary["deals"], summary["solved"], summary["unsolved"]) == (15, 12, 3)
    assert summary["unsolved_seeds"] == [12, 13, 14] and summary["budget_nodes"] == [10, BIG]
    assert 0 < wins < 12
    share = summary["first_player"]["wins"]
    assert share == {"hits": wins, "total": 12, "share": wins / 12, "low": ANY, "high": ANY}
    assert (share["low"], share["high"]) == wilson_interval(wins, 12)
    assert summary["first_player"]["losses"]["share"] == (12 - wins) / 12
    # over all 15 deals, the 3 unsolved counted as not won, then as won
    bounds = summary["wins_all_deals"]
    assert (bounds["low"], bounds["high"], bounds["n"]) == (wins / 15, (wins + 3) / 15, 15)
    assert bounds["interval"] == [wilson_interval(wins, 15)[0], wilson_interval(wins + 3, 15)[1]]
    assert "over all 15 deals, each unsolved one counted as not won, then as won: the first player wins " + (
        f"{wins / 15:.1%} to {(wins + 3) / 15:.1%}"
    ) in summary_text(summary)
    counts = {}
    for r in solved:
        for move in {(m["card"], m["tile"]) for m in r["best_moves"]}:
            counts[move] = counts.get(move, 0) + 1
    top = summary["placements"][0]
    assert top["deals"] == max(counts.values()) and counts[(top["card"], top["tile"])] == top["deals"]
    assert [p["deals"] for p in summary["placements"]] == sorted(
        (p["deals"] for p in summary["placements"]), reverse=True
    )
    assert summary["all_best_moves"] == 12
    assert file_summary(out) == {"file": str(out)} | summary
    assert summarise(reversed(records)) == summary  # the order of the file does not matter


def test_tiles_are_seen_from_the_first_player_s_tower():
    assert [mover_tile(t, 0) for t in range(15)] == list(range(15))
    assert [mover_tile(t, 1) for t in (0, 4, 7, 10, 14)] == [4, 0, 7, 14, 10]


def test_the_command_prints_and_writes_the_summary(tmp_path, monkeypatch):
    out, summary = tmp_path / "deals.jsonl", tmp_path / "summary.json"
    monkeypatch.setattr(openings, "dealt_game", LATE)  # what the command solves when it names no deal
    argv = ["solve-openings", "--seeds", "0-5", "--max-nodes", "1000000", "--records", str(out), "--quiet"]
    code, printed, err = run_cli([*argv, "--json", str(summary)])
    assert code == 0 and not [line for line in err.splitlines() if not line.startswith(("preparing the", "ready ("))]
    assert "seeds 0-5: 6 deals recorded now, 0 already in" in printed
    written = json.loads(summary.read_text())
    assert written == json.loads(json.dumps(file_summary(out)))
    wins = written["first_player"]["wins"]
    assert f"wins {wins['share']:.1%} [{wins['low']:.1%}, {wins['high']:.1%}]" in printed
    assert not any(r["all_best_moves"] for r in records_in(out))  # the value only, by default
    code, printed, _ = run_cli([*argv, "--seeds", "4-7", "--max-classify-nodes", "1000000"])
    assert code == 0 and "seeds 4-7: 2 deals recorded now, 2 already in" in printed
    assert "4 deals in" in printed  # the summary covers the seeds asked for
    classified = {r["seed"]: r["all_best_moves"] for r in records_in(out)}
    assert classified == {0: False, 1: False, 2: False, 3: False, 4: False, 5: False, 6: True, 7: True}


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seeds", "9-3"], "--seeds: expected a seed N or a range LOW-HIGH"),
        (["--seeds", "1.5"], "--seeds: expected a seed N or a range LOW-HIGH"),
        (["--seeds", "-4"], "--seeds: expected a seed N or a range LOW-HIGH"),
        (["--seeds", "0-"], "--seeds: expected a seed N or a range LOW-HIGH"),
        (["--seeds", "0-2000000"], "seeds: at most 1,000,000 deals a run"),
        (["--max-nodes", "1.5"], "--max-nodes: expected a whole number >= 1, got '1.5'"),
        (["--max-nodes", "1e6"], "--max-nodes: expected a whole number >= 1, got '1e6'"),
        (["--max-nodes", "true"], "--max-nodes: expected a whole number >= 1"),
        (["--max-nodes", "0"], "--max-nodes: expected a whole number >= 1"),
        (["--max-classify-nodes", "-1"], "--max-classify-nodes: expected a whole number >= 0, got '-1'"),
        (["--max-classify-nodes", "1e6"], "--max-classify-nodes: expected a whole number >= 0, got '1e6'"),
        (["--workers", "0"], "--workers: expected a whole number >= 1"),
        (["--table-bits", "40"], "--table-bits: expected a whole number 10-32"),
        (["--ray", "not an address"], "--ray 'not an address': not a cluster address"),
        (["--ray", "host:99999"], "not a cluster address (expected local, auto, HOST:PORT or ray://HOST:PORT)"),
        (["--ray", "10.0.0.1:6379", "--workers", "2"], "--workers: a cluster's own CPUs decide"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_work(tmp_path, argv, message):
    out = tmp_path / "deals.jsonl"
    base = {"--seeds": "0-3", "--max-nodes": "100", "--records": str(out)}
    given = dict(zip(argv[::2], argv[1::2], strict=True))
    flat = [x for option, value in (base | given).items() for x in (option, value)]
    code, printed, err = run_cli(["solve-openings", *flat])
    assert code == 2 and printed == "" and err.count("\n") == 1, err
    assert err.startswith("trinity solve-openings: ") and message in err, err
    assert not out.exists()


def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path):
    code, _, err = run_cli(["solve-openings", "--seeds", "0", "--max-nodes", "9", "--records", str(tmp_path)])
    assert code == 2 and "is a folder, not a file" in err and err.count("\n") == 1
    code, _, err = run_cli(["solve-openings", "--seeds", "0", "--max-nodes", "9"])
    assert code == 2 and "--records" in err and err.count("\n") == 1


def test_the_library_takes_whole_numbers_only(tmp_path):
    out = tmp_path / "deals.jsonl"
    for seeds, budget, threads, match in [
        (range(3), 1.5, 1, "budget_nodes must be a positive int"),
        (range(3), True, 1, "budget_nodes must be a positive int"),
        (range(3), "100", 1, "budget_nodes must be a positive int"),
        (range(3), 0, 1, "budget_nodes must be a positive int"),
        ([0, True], 100, 1, "seeds must be ints >= 0"),
        ([0, -1], 100, 1, "seeds must be ints >= 0"),
        ([0, 2.0], 100, 1, "seeds must be ints >= 0"),
        ("0-3", 100, 1, "seeds must be a range or a list of ints"),
        (range(0), 100, 1, "no deals to solve"),
        (range(0, 9, 2), 100, 1, "in steps of 1"),
        (range(3), 100, 1.0, "threads must be a positive int"),
    ]:
        with pytest.raises(ArgumentError, match=match):
            solve_openings(seeds, budget, out, threads=threads, deal=LATE, progress=False)
    for classify in (1.5, True, "100", -1):
        with pytest.raises(ArgumentError, match="classify_nodes must be an int >= 0"):
            solve_openings(range(3), 100, out, classify_nodes=classify, deal=LATE, progress=False)
    assert not out.exists()


@pytest.mark.parametrize("option", [["--ray", "local"], ["--ray"]])
def test_without_ray_the_ray_path_names_the_extra(tmp_path, option):
    try:
        import ray  # noqa: F401
    except ModuleNotFoundError:
        pass
    else:
        pytest.skip("Ray is installed")
    out = tmp_path / "deals.jsonl"
    code, _, err = run_cli(["solve-openings", "--seeds", "0", "--max-nodes", "9", "--records", str(out), *option])
    assert (
        code == 2
        and err == "trinity solve-openings: --ray needs Ray, the rllib extra: pip install 'trinity-towers[rllib]'\n"
    )
    assert not out.exists()


# ---------------------------------------------------------------------- the balance lab


def test_the_balance_lab_reports_perfect_play_beside_its_estimates(tmp_path):
    out = tmp_path / "deals.jsonl"
    solve_openings(range(8), BIG, out, table_bits=BITS, deal=LateGame(9), progress=False)
    summary = file_summary(out)
    lab = tmp_path / "lab"
    argv = ["balance", "--games", "2", "--agents", "greedy", "--a-limits", "3", "--workers", "1", "--quiet"]
    code, printed, _ = run_cli([*argv, "--out", str(lab), "--openings", str(out)])
    assert code == 0
    wins = summary["first_player"]["wins"]
    cell = f"{wins['share']:.1%} [{wins['low']:.1%}, {wins['high']:.1%}]"
    assert re.search(rf"perfect play \(solved openings\) +8  {re.escape(cell)}", printed)
    data = json.loads((lab / "balance.json").read_text())
    assert data["openings"] == json.loads(json.dumps(summary))
    assert f"the first mover wins {cell}" in (lab / "balance.md").read_text()
    (tmp_path / "bad.jsonl").write_text("nonsense\n")
    code, _, err = run_cli([*argv, "--out", str(tmp_path / "lab2"), "--openings", str(tmp_path / "bad.jsonl")])
    assert code == 2 and "bad.jsonl line 1: not a solved-openings record" in err and err.count("\n") == 1
    assert not (tmp_path / "lab2").exists()  # refused before any game

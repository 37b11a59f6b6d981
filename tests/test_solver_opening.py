"""The solver's opening benchmark (``benchmarks/solver_opening.py``): the position it deals, what it reports of a
search within its budget and of a solved one, its refusals, and the solver page quoting it."""

from __future__ import annotations

import json

import pytest

from trinity_env.core import Move
from trinity_env.search.solver import Solver


def test_the_opening_benchmark_deals_a_full_position_and_reports_within_its_budget(tmp_path, capsys):
    from benchmarks.solver_opening import main as opening_main
    from benchmarks.solver_opening import opening

    state = opening(0)
    assert len(state.empty_tiles()) == 15 and all(len(hand) == 8 for hand in state.to_dict()["hands"])
    assert opening(1).to_dict() != state.to_dict()
    out = tmp_path / "opening.json"
    opening_main(["--seed", "0", "1", "--max-seconds", "0.5", "--table-bits", "16", "--json", str(out)])
    printed = capsys.readouterr().out
    attempts = json.loads(out.read_text())
    assert [a["seed"] for a in attempts] == [0, 1] and attempts[0]["position"] == state.to_dict()
    for found in attempts:
        assert found["solved"] is False and found["nodes"] > 0
        assert f"not solved within 0.5 s: {found['nodes']:,} nodes searched" in printed
    assert "0 of 2 openings solved within 0.5 s each" in printed


def test_the_solver_page_quotes_its_benchmark_block_and_the_opening_attempts():
    """docs/agents.md: the prose figures are the benchmark block's, the opening's are the JSON's,
    and the earlier solvers' figures are their own blocks' and attempts'."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    text = " ".join((root / "docs" / "agents.md").read_text().split())
    solver_docs = root / "docs" / "solver"

    def ten_and_twelve(block: str) -> tuple[str, str]:
        ten = re.search(r" 10 9 \| [\d.]+ [\d.]+ \| ([\d.]+) ", block)
        twelve = re.search(r"12 9 \| solve with 2 threads: median ([\d.]+) s", block)
        return ten[1], twelve[1]

    ten, twelve = ten_and_twelve(text)
    worst = re.search(r"12 9 \| solve with 2 threads: median [\d.]+ s, worst ([\d.]+) s", text)[1]
    assert f"solved in {ten} s (median) with two threads" in text
    assert f"the median of nine positions is {twelve} s, and the slowest takes {worst} s" in text
    assert float(ten) <= 0.3 and float(twelve) <= 5 and "both targets, 0.3 s and 5 s, are met" in text
    growth = float(twelve) / float(ten)
    assert f"From 10 to 12 empty tiles the two-thread median grows {growth:.0f}-fold" in text
    # the nodes the hints save, from the block's own lines
    totals = re.search(r"all 9: ([\d,]+) -> ([\d,]+) \(", text)
    assert totals and f"from {totals[1]} nodes to {totals[2]}" in text
    rows = re.findall(r"position \d: (win|loss) ([\d,]+) -> ([\d,]+)", text)
    assert len(rows) == 9
    assert sum(int(b.replace(",", "")) for _, _, b in rows) == int(totals[2].replace(",", ""))
    # the solvers before: their own blocks
    hints_ten, hints_twelve = ten_and_twelve(" ".join((solver_docs / "benchmark-before-hints.txt").read_text().split()))
    assert (
        f"Before the move hints (at commit e9c893a) the same positions took {hints_ten} s and {hints_twelve} s" in text
    )
    old_ten, old_twelve = ten_and_twelve(" ".join((solver_docs / "benchmark-before-bitboard.txt").read_text().split()))
    assert f"before the bitboard (at commit 823876d), {old_ten} s and {old_twelve} s" in text
    # the openings: games 0 and 1 solved within 30 minutes each, and what they showed
    attempts = json.loads((solver_docs / "opening.json").read_text())
    long = [a for a in attempts if a["max_seconds"] == 1800]
    scan = [a for a in attempts if a["max_seconds"] == 60]
    assert len(long) + len(scan) == len(attempts) and [a["seed"] for a in long] == [0, 1]
    assert all(a["position"]["phase"] == "play" and len(a["position"]["board"]) == 3 for a in attempts)
    assert "is solved for dealt games 0 and 1 within 30 minutes each" in text
    for a in long:
        assert a["solved"] and a["seconds"] <= 1800 and a["value"] == 1 and a["winner"] == a["position"]["to_move"]
        move = a["move"]
        assert (
            f"game {a['seed']} in {a['seconds']:,.1f} s ({a['nodes']:,} nodes): player {a['winner']}, who places "
            f"first, wins, and one winning first placement is {move['card']} on tile {move['tile']}"
        ) in text
    first = long[0]
    assert [a["seed"] for a in scan] == list(range(1, 9)) and {a["max_seconds"] for a in scan} == {60}
    assert not any(a["solved"] for a in scan)
    nodes = sorted(a["nodes"] for a in scan)
    assert f"({nodes[0]:,} to {nodes[-1]:,} nodes each)" in text
    for name, commit in (("hints", "e9c893a"), ("bitboard", "823876d")):
        (old,) = [a for a in json.loads((solver_docs / f"opening-before-{name}.json").read_text()) if a["seed"] == 0]
        assert old["max_seconds"] == 1800 and not old["solved"] and old["position"] == first["position"]
        assert f"at commit {commit}, {old['nodes']:,}" in text
    from benchmarks.solver_opening import opening

    assert all(a["position"] == opening(a["seed"]).to_dict() for a in attempts)  # the games the script deals


def test_the_opening_benchmark_reports_what_a_solved_position_showed(monkeypatch, tmp_path, capsys):
    """A solved opening's report, on a position a test can afford: it stands in for game 7."""
    import benchmarks.solver_opening as opening_module
    from benchmarks.solver import positions as dealt_positions

    state = dealt_positions(9, 1, 9)[0]
    monkeypatch.setattr(opening_module, "opening", lambda seed: state)
    out = tmp_path / "solved.json"
    opening_module.main(["--seed", "7", "--max-seconds", "600", "--table-bits", "16", "--json", str(out)])
    (found,) = json.loads(out.read_text())
    value = Solver(table_bits=16).value(state)
    winner = state.to_move if value == 1 else 1 - state.to_move
    assert (found["solved"], found["value"], found["winner"]) == (True, value, winner)
    assert found["nodes"] > 0 and found["seed"] == 7
    move = Move(found["move"]["card"], found["move"]["tile"])
    assert move in Solver(table_bits=16).solve(state).best_moves  # a move that achieves the value
    printed = capsys.readouterr().out
    assert f"with perfect play player {winner} wins" in printed and "1 of 1 openings solved" in printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-seconds", "0"], "--max-seconds must be a finite number > 0"),
        (["--max-seconds", "nan"], "--max-seconds must be a finite number > 0"),
        (["--table-bits", "40"], "table_bits must be an int from 2 to 32"),
        (["--threads", "0"], "threads must be a positive int"),
    ],
)
def test_the_opening_benchmark_refuses_a_bad_budget_in_one_line(argv, message, capsys):
    from benchmarks.solver_opening import main as opening_main

    with pytest.raises(SystemExit) as stopped:
        opening_main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


# ---------------------------------------------------------------- move hints (a Monte Carlo search at the root)

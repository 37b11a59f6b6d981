"""Solved openings (``trinity solve-openings``, ``trinity_env.evaluation.openings``).

A dealt game's opening takes the solver billions of nodes, so most tests solve late-game
positions of the same deals (``LateGame``: a few empty tiles, milliseconds each) through the
very code the openings take, and check the records against the solver called directly; the
dealt openings themselves run under budgets too small to solve them, which tests the
unsolved records. The Ray tests (marked ``ray``) need the rllib extra: ``make test-rllib``
runs them on a local cluster of two CPUs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from unittest.mock import ANY

import pytest

from trinity_env.agents.spec import make
from trinity_env.cli import main
from trinity_env.core import ArgumentError, GameState
from trinity_env.evaluation import openings, openings_file
from trinity_env.evaluation.match import RunInterrupted, play_game
from trinity_env.evaluation.openings import (
    LateGame,
    OpeningsError,
    dealt_game,
    file_summary,
    mover_tile,
    read_records,
    solve_deal,
    solve_openings,
    summarise,
    summary_text,
)
from trinity_env.evaluation.ratings import wilson_interval
from trinity_env.integrations.ray_cluster import ray_cluster
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.config import make_config

BITS = 16  # a small table: the positions are small
LATE = LateGame(6)
BIG = 10**9  # nodes: far more than any late position needs


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _without_time(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "seconds"}


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


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
        assert sorted((m["card"], m["tile"]) for m in record["best_moves"]) == sorted(solution.best_moves)
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
    assert _without_time(record) == _without_time(solve_deal(5, 20_000, BITS))  # the same on every run


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


# ---------------------------------------------------------------------- the file


def test_records_are_appended_and_a_rerun_skips_the_seeds_it_holds(tmp_path):
    out = tmp_path / "deals.jsonl"
    first = solve_openings(range(4), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert first.new == [0, 1, 2, 3] and first.skipped == 0 and not first.partial
    more = solve_openings(range(2, 7), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert more.new == [4, 5, 6] and more.skipped == 2 and sorted(more.records) == [2, 3, 4, 5, 6]
    written = out.read_bytes()
    again = solve_openings(range(7), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert again.new == [] and again.skipped == 7 and out.read_bytes() == written  # idempotent
    records = _lines(out)
    assert [r["seed"] for r in records] == list(range(7))
    fresh = solve_openings(range(7), BIG, tmp_path / "fresh.jsonl", table_bits=BITS, deal=LATE, progress=False)
    assert [_without_time(r) for r in records] == [_without_time(fresh.records[s]) for s in range(7)]
    assert read_records(out) == {r["seed"]: r for r in records}


def test_unsolved_deals_are_solved_again_with_a_larger_budget_and_kept_once(tmp_path):
    out = tmp_path / "deals.jsonl"
    small = solve_openings(range(3), 5, out, table_bits=BITS, deal=LATE, progress=False)
    assert [r["solved"] for r in small.records.values()] == [False] * 3
    assert all(r["nodes"] <= 5 for r in small.records.values())
    same = solve_openings(range(3), 5, out, table_bits=BITS, deal=LATE, progress=False)
    assert same.new == [] and same.retried == 0
    larger = solve_openings(range(1, 5), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert larger.retried == 2 and larger.skipped == 0 and larger.new == [1, 2, 3, 4]
    records = _lines(out)
    assert sorted(r["seed"] for r in records) == [0, 1, 2, 3, 4]
    assert {r["seed"]: r["solved"] for r in records} == {0: False, 1: True, 2: True, 3: True, 4: True}
    smaller = solve_openings(range(5), 3, out, table_bits=BITS, deal=LATE, progress=False)
    assert smaller.new == [] and smaller.retried == 0  # a smaller budget never replaces a record


def test_a_last_line_cut_short_by_a_kill_is_dropped_and_that_deal_solved_again(tmp_path):
    out = tmp_path / "deals.jsonl"
    solve_openings(range(3), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    whole = out.read_text()
    lines = whole.splitlines(keepends=True)
    out.write_text("".join(lines[:2]) + lines[2][:40])  # killed while writing seed 2
    assert sorted(read_records(out)) == [0, 1]  # reading leaves the cut line out (and the file alone)
    run = solve_openings(range(4), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert run.cut and run.new == [2, 3]
    assert [r["seed"] for r in _lines(out)] == [0, 1, 2, 3]
    assert out.read_text().startswith("".join(lines[:2])) and out.read_text().endswith("\n")
    assert _without_time(_lines(out)[2]) == _without_time(json.loads(lines[2]))
    out.write_text(whole.rstrip("\n"))  # a whole last record without its newline is kept
    run = solve_openings(range(4), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert not run.cut and run.new == [3] and [r["seed"] for r in _lines(out)] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]\n", "line 1: not a solved-openings record (not a JSON object)"),
        ("{bad\n{}\n", "line 1: not a solved-openings record (not JSON)"),
        ('{"seed": "3"}\n', "line 1: not a solved-openings record (bad or missing seed,"),
        ("\n", "line 1: not a solved-openings record (not JSON)"),
    ],
)
def test_a_file_that_is_not_solved_openings_is_refused(tmp_path, content, message):
    out = tmp_path / "deals.jsonl"
    out.write_text(content)
    with pytest.raises(OpeningsError, match=re.escape(message)):
        solve_openings(range(2), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert out.read_text() == content  # nothing written
    code, printed, err = _cli(["solve-openings", "--seeds", "0-1", "--budget-nodes", "10", "--records", str(out)])
    assert code == 2 and printed == "" and err.count("\n") == 1 and message in err


def test_a_seed_twice_or_two_kinds_of_deal_are_refused(tmp_path):
    out = tmp_path / "deals.jsonl"
    solve_openings(range(2), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    line = out.read_text().splitlines()[0]
    (tmp_path / "twice.jsonl").write_text(out.read_text() + line + "\n")
    with pytest.raises(OpeningsError, match="line 3: seed 0 again"):
        read_records(tmp_path / "twice.jsonl")
    with pytest.raises(OpeningsError, match="holds records of deal 'late-6', not 'late-5'"):
        solve_openings(range(3), BIG, out, table_bits=BITS, deal=LateGame(5), progress=False)
    mixed = json.loads(line) | {"seed": 9, "deal": "opening"}
    (tmp_path / "mixed.jsonl").write_text(out.read_text() + json.dumps(mixed) + "\n")
    with pytest.raises(OpeningsError, match="mixes records of different deals"):
        read_records(tmp_path / "mixed.jsonl")


def test_a_second_job_on_the_same_file_is_refused_while_one_runs(tmp_path):
    pytest.importorskip("fcntl")
    out = tmp_path / "deals.jsonl"
    seen = []

    def nested(record: dict) -> None:
        with pytest.raises(OpeningsError, match="being written by another solve-openings job"):
            solve_openings(range(9, 10), BIG, out, table_bits=BITS, deal=LATE, progress=False)
        seen.append(record["seed"])

    solve_openings(range(2), BIG, out, table_bits=BITS, deal=LATE, progress=False, on_record=nested)
    assert seen == [0, 1] and [r["seed"] for r in _lines(out)] == [0, 1]


def test_a_rewritten_file_is_locked_before_the_old_one_is_let_go(tmp_path, monkeypatch):
    """Dropping a cut last line rewrites the file: the job locks the new file while it still holds the old one."""
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "deals.jsonl"
    solve_openings(range(2), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    out.write_text(out.read_text()[:-20])  # seed 1's line cut short: the job rewrites the file
    old = os.open(out, os.O_RDONLY)  # the file before the rewrite, on a descriptor of its own
    held = []
    real = openings_file._open_append

    def opener(path):
        if not _same_inode(old, path):  # the rewritten file: is the old one still locked?
            try:
                fcntl.flock(old, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held.append(False)
            except BlockingIOError:
                held.append(True)
        return real(path)

    monkeypatch.setattr(openings_file, "_open_append", opener)
    try:
        run = solve_openings(range(2), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    finally:
        os.close(old)
    assert run.cut and run.new == [1] and held == [True]


def _same_inode(descriptor: int, path: Path) -> bool:
    named, held = os.stat(path), os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def test_a_records_file_that_is_a_link_is_refused_in_one_line(tmp_path):
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    out = tmp_path / "deals.jsonl"
    out.symlink_to(target)
    with pytest.raises(OpeningsError, match=r"deals\.jsonl is a symbolic link: a solve-openings job never writes"):
        solve_openings(range(1), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    code, printed, err = _cli(["solve-openings", "--seeds", "0", "--budget-nodes", "10", "--records", str(out)])
    assert code == 2 and printed == "" and err.count("\n") == 1 and "is a symbolic link" in err, err
    assert target.read_text() == "" and out.is_symlink()


# ---------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_keeps_the_deals_finished(tmp_path, monkeypatch):
    out = tmp_path / "deals.jsonl"
    real = openings.solve_deal

    def solve(seed, budget, bits, deal, classify, progress=None):
        if seed == 3:
            raise KeyboardInterrupt  # Ctrl-C during the fourth deal
        return real(seed, budget, bits, deal, classify, progress)

    monkeypatch.setattr(openings, "solve_deal", solve)
    with pytest.raises(RunInterrupted) as stop:
        solve_openings(range(6), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    run = stop.value.partial
    assert run.partial and run.new == [0, 1, 2]
    assert [r["seed"] for r in _lines(out)] == [0, 1, 2]
    monkeypatch.setattr(openings, "solve_deal", real)
    rest = solve_openings(range(6), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert rest.new == [3, 4, 5] and rest.skipped == 3


def test_ctrl_c_in_a_pool_of_processes_keeps_the_deals_finished(tmp_path):
    out = tmp_path / "deals.jsonl"
    seen = []

    def interrupt_after_two(record: dict) -> None:
        seen.append(record["seed"])
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as stop:
        solve_openings(
            range(40), BIG, out, threads=2, table_bits=BITS, deal=LATE, progress=False, on_record=interrupt_after_two
        )
    assert stop.value.partial.new == seen and len(seen) == 2
    assert sorted(r["seed"] for r in _lines(out)) == sorted(seen)
    whole = solve_openings(range(6), BIG, tmp_path / "one.jsonl", table_bits=BITS, deal=LATE, progress=False)
    pooled = solve_openings(range(6), BIG, out, threads=2, table_bits=BITS, deal=LATE, progress=False)
    assert {s: _without_time(r) for s, r in pooled.records.items()} == {
        s: _without_time(r) for s, r in whole.records.items()
    }  # processes change nothing but the order


_RUN_CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
)  # the default handler even where the test runner ignores SIGINT (a background job)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_ctrl_c_stops_the_command_within_seconds_and_keeps_every_deal_finished(tmp_path, threads):
    out = tmp_path / "deals.jsonl"
    argv = [
        "solve-openings",
        "--seeds",
        "0-999",
        "--budget-nodes",
        "200000",
        "--records",
        str(out),
        "--threads",
        threads,
    ]
    proc = subprocess.Popen([sys.executable, "-c", _RUN_CLI, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        started = time.monotonic()
        while not (out.exists() and out.read_text().count("\n") >= 2):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() - started < 180, "no deal recorded in 3 minutes"
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        printed, err = proc.communicate(timeout=60)
        seconds = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    warming = ("openings:", "preparing the exact solver", "ready (")  # the progress bar; a busy machine's cache load
    lines = [line for line in re.split(r"[\r\n]", err.decode()) if line.strip() and not line.startswith(warming)]
    assert proc.returncode == 130 and seconds < 15, (proc.returncode, seconds, lines)
    recorded = _lines(out)  # every line whole
    said = f"trinity solve-openings: interrupted: {len(recorded)} deals recorded in {out}; run again to go on"
    assert lines == [said]
    assert len({r["seed"] for r in recorded}) == len(recorded) >= 2
    assert f"{len(recorded)} deals in {out}" in printed.decode()


def test_a_ctrl_c_between_writing_a_record_and_counting_it_still_counts_it(tmp_path, monkeypatch):
    out = tmp_path / "deals.jsonl"
    synced, fsync = [], os.fsync

    def fsync_then_ctrl_c(fd: int) -> None:  # the second record is on disk when Ctrl-C lands, before it is counted
        fsync(fd)
        synced.append(fd)
        if len(synced) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(openings_file.os, "fsync", fsync_then_ctrl_c)
    with pytest.raises(RunInterrupted) as stop:
        solve_openings(range(5), BIG, out, table_bits=BITS, deal=LateGame(9), progress=False)
    run = stop.value.partial
    assert run.new == [0, 1] and sorted(run.records) == [0, 1] == [r["seed"] for r in _lines(out)]
    assert run.summary()["deals"] == 2


# ---------------------------------------------------------------------- progress


def _check_reports(reports: list[tuple[dict[int, int], set[int]]], budget: int, seeds: range) -> None:
    """Each report: the running deals' nodes so far, and the seeds recorded when it came."""
    shown = [(seed, nodes) for running, _ in reports for seed, nodes in running.items()]
    assert shown, "no deal reported its progress"
    assert all(seed in seeds and 0 < nodes <= budget for seed, nodes in shown)
    assert all(not set(running) & recorded for running, recorded in reports)  # a finished deal is not running
    for seed in {seed for seed, _ in shown}:
        counts = [nodes for s, nodes in shown if s == seed]
        assert counts == sorted(counts)  # one search's nodes only grow


def test_each_running_deal_reports_its_nodes_here(tmp_path, monkeypatch):
    from trinity_env.search import solver_budget

    monkeypatch.setattr(solver_budget, "PROGRESS_EVERY", 0.05)
    reports, recorded = [], set()
    budget = 3_000_000  # out of budget: each deal searches a few tenths of a second
    solve_openings(
        range(2),
        budget,
        tmp_path / "deals.jsonl",
        table_bits=BITS,
        deal=LateGame(12),
        progress=False,
        on_record=lambda r: recorded.add(r["seed"]),
        on_progress=lambda running: reports.append((dict(running), set(recorded))),
    )
    _check_reports(reports, budget, range(2))
    assert {seed for running, _ in reports for seed in running} == {0, 1}


@pytest.mark.e2e  # seconds of solving in two processes: make test-e2e
def test_each_running_deal_reports_its_nodes_from_a_pool_of_processes(tmp_path):
    reports, recorded = [], set()
    budget = 16_000_000  # seconds a deal (out of budget): the workers' solvers report once a second
    run = solve_openings(
        range(4),
        budget,
        tmp_path / "deals.jsonl",
        threads=2,
        table_bits=BITS,
        deal=LateGame(13),
        progress=False,
        on_record=lambda r: recorded.add(r["seed"]),
        on_progress=lambda running: reports.append((dict(running), set(recorded))),
    )
    assert sorted(run.records) == [0, 1, 2, 3]
    _check_reports(reports, budget, range(4))
    assert any(seed >= 2 for running, _ in reports for seed in running)  # the deals after the first two show too


def test_the_bar_shows_node_counts_in_a_few_characters():
    assert [openings._count(n) for n in (0, 950, 12_345, 4_560_000, 7_891_000_000)] == [
        "0",
        "950",
        "12.3k",
        "4.56M",
        "7.89G",
    ]


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
    argv = ["solve-openings", "--seeds", "0-5", "--budget-nodes", "1000000", "--records", str(out), "--quiet"]
    code, printed, err = _cli([*argv, "--json", str(summary)])
    assert code == 0 and not [line for line in err.splitlines() if not line.startswith(("preparing the", "ready ("))]
    assert "seeds 0-5: 6 deals recorded now, 0 already in" in printed
    written = json.loads(summary.read_text())
    assert written == json.loads(json.dumps(file_summary(out)))
    wins = written["first_player"]["wins"]
    assert f"wins {wins['share']:.1%} [{wins['low']:.1%}, {wins['high']:.1%}]" in printed
    assert not any(r["all_best_moves"] for r in _lines(out))  # the value only, by default
    code, printed, _ = _cli([*argv, "--seeds", "4-7", "--classify-nodes", "1000000"])
    assert code == 0 and "seeds 4-7: 2 deals recorded now, 2 already in" in printed
    assert "4 deals in" in printed  # the summary covers the seeds asked for
    classified = {r["seed"]: r["all_best_moves"] for r in _lines(out)}
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
        (["--budget-nodes", "1.5"], "--budget-nodes: expected a whole number >= 1, got '1.5'"),
        (["--budget-nodes", "1e6"], "--budget-nodes: expected a whole number >= 1, got '1e6'"),
        (["--budget-nodes", "true"], "--budget-nodes: expected a whole number >= 1"),
        (["--budget-nodes", "0"], "--budget-nodes: expected a whole number >= 1"),
        (["--classify-nodes", "-1"], "--classify-nodes: expected a whole number >= 0, got '-1'"),
        (["--classify-nodes", "1e6"], "--classify-nodes: expected a whole number >= 0, got '1e6'"),
        (["--threads", "0"], "--threads: expected a whole number >= 1"),
        (["--table-bits", "40"], "--table-bits: expected a whole number 10-32"),
        (["--ray", "not an address"], "--ray 'not an address': not a cluster address"),
        (["--ray", "host:99999"], "not a cluster address (expected local, auto, HOST:PORT or ray://HOST:PORT)"),
        (["--ray", "10.0.0.1:6379", "--threads", "2"], "--threads: a cluster's own CPUs decide"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_any_work(tmp_path, argv, message):
    out = tmp_path / "deals.jsonl"
    base = {"--seeds": "0-3", "--budget-nodes": "100", "--records": str(out)}
    given = dict(zip(argv[::2], argv[1::2], strict=True))
    flat = [x for option, value in (base | given).items() for x in (option, value)]
    code, printed, err = _cli(["solve-openings", *flat])
    assert code == 2 and printed == "" and err.count("\n") == 1, err
    assert err.startswith("trinity solve-openings: ") and message in err, err
    assert not out.exists()


def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path):
    code, _, err = _cli(["solve-openings", "--seeds", "0", "--budget-nodes", "9", "--records", str(tmp_path)])
    assert code == 2 and "is a folder, not a file" in err and err.count("\n") == 1
    code, _, err = _cli(["solve-openings", "--seeds", "0", "--budget-nodes", "9"])
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
    code, _, err = _cli(["solve-openings", "--seeds", "0", "--budget-nodes", "9", "--records", str(out), *option])
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
    code, printed, _ = _cli([*argv, "--out", str(lab), "--openings", str(out)])
    assert code == 0
    wins = summary["first_player"]["wins"]
    cell = f"{wins['share']:.1%} [{wins['low']:.1%}, {wins['high']:.1%}]"
    assert re.search(rf"perfect play \(solved openings\) +8  {re.escape(cell)}", printed)
    data = json.loads((lab / "balance.json").read_text())
    assert data["openings"] == json.loads(json.dumps(summary))
    assert f"the first mover wins {cell}" in (lab / "balance.md").read_text()
    (tmp_path / "bad.jsonl").write_text("nonsense\n")
    code, _, err = _cli([*argv, "--out", str(tmp_path / "lab2"), "--openings", str(tmp_path / "bad.jsonl")])
    assert code == 2 and "bad.jsonl line 1: not a solved-openings record" in err and err.count("\n") == 1
    assert not (tmp_path / "lab2").exists()  # refused before any game


# ---------------------------------------------------------------------- Ray (the rllib extra)


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray cluster of two CPUs for the module's Ray tests; this module's deal sources travel by value."""
    ray = pytest.importorskip("ray", reason="the rllib extra (Ray) is not installed")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


class _KilledOnce:
    """A deal source whose worker process is killed (SIGKILL) the first time it deals ``seed``."""

    def __init__(self, folder: Path, seed: int):
        self.folder, self.seed, self.name = str(folder), seed, LATE.name

    def __call__(self, seed: int) -> GameState:
        marker = Path(self.folder) / f"killed-{seed}"
        if seed == self.seed and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return LATE(seed)


class _Broken:
    """A deal source that fails for one seed (a bug in a task: Ray does not retry it)."""

    name = LATE.name

    def __call__(self, seed: int) -> GameState:
        if seed == 2:
            raise RuntimeError("no deal for seed 2")
        return LATE(seed)


class _Slow:
    """Deals quickly up to ``fast`` seeds, then takes ``seconds`` per deal."""

    def __init__(self, fast: int, seconds: float):
        self.fast, self.seconds, self.name = fast, seconds, LATE.name

    def __call__(self, seed: int) -> GameState:
        if seed >= self.fast:
            time.sleep(self.seconds)
        return LATE(seed)


@pytest.mark.ray
def test_on_ray_the_records_are_the_local_ones_and_a_rerun_skips_them(ray_local, tmp_path):
    local = solve_openings(range(8), BIG, tmp_path / "local.jsonl", table_bits=BITS, deal=LATE, progress=False)
    out = tmp_path / "ray.jsonl"
    with ray_cluster("local") as cluster:
        run = solve_openings(range(5), BIG, out, table_bits=BITS, deal=LATE, cluster=cluster, progress=False)
        assert sorted(run.new) == [0, 1, 2, 3, 4] and not run.failed
        more = solve_openings(range(8), BIG, out, table_bits=BITS, deal=LATE, cluster=cluster, progress=False)
    assert sorted(more.new) == [5, 6, 7] and more.skipped == 5
    records = {r["seed"]: _without_time(r) for r in _lines(out)}
    assert len(records) == 8 and records == {s: _without_time(r) for s, r in local.records.items()}
    assert ray_local.is_initialized()  # a connection made by the caller is left open


@pytest.mark.ray
def test_on_ray_a_killed_task_is_retried_and_a_failed_one_reported_not_recorded(ray_local, tmp_path):
    out = tmp_path / "killed.jsonl"
    with ray_cluster("local") as cluster:
        run = solve_openings(
            range(4), BIG, out, table_bits=BITS, deal=_KilledOnce(tmp_path, 1), cluster=cluster, progress=False
        )
    assert (tmp_path / "killed-1").exists()  # the worker did die, mid-task
    assert sorted(run.new) == [0, 1, 2, 3] and not run.failed
    assert _without_time(run.records[1]) == _without_time(solve_deal(1, BIG, BITS, LATE))
    broken = tmp_path / "broken.jsonl"
    with ray_cluster("local") as cluster:
        run = solve_openings(range(4), BIG, broken, table_bits=BITS, deal=_Broken(), cluster=cluster, progress=False)
    assert sorted(run.new) == [0, 1, 3] and [seed for seed, _ in run.failed] == [2]
    assert "no deal for seed 2" in run.failed[0][1]
    assert sorted(r["seed"] for r in _lines(broken)) == [0, 1, 3]  # a rerun will try seed 2 again


@pytest.mark.ray
def test_on_ray_ctrl_c_cancels_the_outstanding_tasks_and_keeps_the_finished(ray_local, tmp_path):
    import _thread

    out = tmp_path / "deals.jsonl"

    sent: list[float] = []

    def interrupt() -> None:  # Ctrl-C once two deals are on disk (or after 5 minutes: the test then fails)
        waited = time.monotonic()  # a machine this busy may take long to start Ray's workers: not what is tested
        while not (out.exists() and out.read_text().count("\n") >= 2) and time.monotonic() - waited < 300:
            time.sleep(0.05)
        time.sleep(0.3)
        sent.append(time.monotonic())
        _thread.interrupt_main()

    # Python's own handler even where the runner ignores SIGINT (a background job), else interrupt_main does nothing
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with ray_cluster("local") as cluster, pytest.raises(RunInterrupted) as stop:
            solve_openings(range(8), BIG, out, table_bits=BITS, deal=_Slow(2, 600), cluster=cluster, progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - sent[0] < 60  # stopped at once, the sleeping tasks not waited for
    assert sorted(stop.value.partial.new) == [0, 1] and sorted(r["seed"] for r in _lines(out)) == [0, 1]
    quick = ray_local.remote(lambda: "free")  # both CPUs are free again: the sleeping tasks were cancelled
    assert ray_local.get(quick.remote(), timeout=60) == "free"


@pytest.mark.ray
def test_on_ray_the_command_runs_on_a_local_cluster(ray_local, tmp_path):
    out = tmp_path / "deals.jsonl"
    argv = ["solve-openings", "--seeds", "0-3", "--budget-nodes", "2000", "--records", str(out), "--quiet"]
    code, printed, err = _cli([*argv, "--ray"])  # alone: a local cluster (here, the one the test started)
    assert code == 0, err
    assert "4 deals in" in printed and "0 solved, 4 unsolved within 2,000 nodes" in printed
    assert [_without_time(r) for r in sorted(_lines(out), key=lambda r: r["seed"])] == [
        _without_time(solve_deal(seed, 2000)) for seed in range(4)
    ]


@pytest.mark.ray
@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_on_ray_a_bad_address_is_one_line_and_exit_2(tmp_path, address):
    pytest.importorskip("ray", reason="the rllib extra (Ray) is not installed")
    message = f"--ray {address}: cannot reach the cluster"
    out = tmp_path / "deals.jsonl"
    argv = ["solve-openings", "--seeds", "0-3", "--budget-nodes", "100", "--records", str(out), "--ray", address]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a fresh process, not connected yet
    done = subprocess.run([sys.executable, "-c", _RUN_CLI, *argv], capture_output=True, text=True, env=env, timeout=120)
    err = [line for line in done.stderr.splitlines() if not re.match(r"^\d{4}-\d\d-\d\d .* WARNING ", line)]
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert len(err) == 1 and err[0].startswith(f"trinity solve-openings: {message}"), done.stderr
    assert not out.exists()

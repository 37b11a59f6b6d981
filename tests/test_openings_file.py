"""Solved openings' records file across runs (``trinity_env.evaluation.openings``): records appended and a rerun
skipping what it holds, unsolved deals solved again with a larger budget, a line cut short by a kill, files that are
not records, one job per file (locks), Ctrl-C keeping every deal finished (in this process, a pool of processes and
the command), and the progress each running deal reports. Late-game deals (``LateGame``) keep each solve to
milliseconds.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openings_common import BIG, BITS, CLI_SCRIPT, LATE, records_in, run_cli, without_time

from trinity_env.evaluation import openings, openings_file
from trinity_env.evaluation.match import RunInterrupted
from trinity_env.evaluation.openings import LateGame, solve_openings
from trinity_env.evaluation.openings_file import OpeningsError, read_records

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
    records = records_in(out)
    assert [r["seed"] for r in records] == list(range(7))
    fresh = solve_openings(range(7), BIG, tmp_path / "fresh.jsonl", table_bits=BITS, deal=LATE, progress=False)
    assert [without_time(r) for r in records] == [without_time(fresh.records[s]) for s in range(7)]
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
    records = records_in(out)
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
    assert [r["seed"] for r in records_in(out)] == [0, 1, 2, 3]
    assert out.read_text().startswith("".join(lines[:2])) and out.read_text().endswith("\n")
    assert without_time(records_in(out)[2]) == without_time(json.loads(lines[2]))
    out.write_text(whole.rstrip("\n"))  # a whole last record without its newline is kept
    run = solve_openings(range(4), BIG, out, table_bits=BITS, deal=LATE, progress=False)
    assert not run.cut and run.new == [3] and [r["seed"] for r in records_in(out)] == [0, 1, 2, 3]


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
    code, printed, err = run_cli(["solve-openings", "--seeds", "0-1", "--max-nodes", "10", "--records", str(out)])
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
    assert seen == [0, 1] and [r["seed"] for r in records_in(out)] == [0, 1]


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
    code, printed, err = run_cli(["solve-openings", "--seeds", "0", "--max-nodes", "10", "--records", str(out)])
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
    assert [r["seed"] for r in records_in(out)] == [0, 1, 2]
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
    assert sorted(r["seed"] for r in records_in(out)) == sorted(seen)
    whole = solve_openings(range(6), BIG, tmp_path / "one.jsonl", table_bits=BITS, deal=LATE, progress=False)
    pooled = solve_openings(range(6), BIG, out, threads=2, table_bits=BITS, deal=LATE, progress=False)
    assert {s: without_time(r) for s, r in pooled.records.items()} == {
        s: without_time(r) for s, r in whole.records.items()
    }  # processes change nothing but the order


@pytest.mark.parametrize("threads", ["1", "2"])
def test_ctrl_c_stops_the_command_within_seconds_and_keeps_every_deal_finished(tmp_path, threads):
    out = tmp_path / "deals.jsonl"
    argv = [
        "solve-openings",
        "--seeds",
        "0-999",
        "--max-nodes",
        "200000",
        "--records",
        str(out),
        "--workers",
        threads,
    ]
    proc = subprocess.Popen([sys.executable, "-c", CLI_SCRIPT, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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
    recorded = records_in(out)  # every line whole
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
    assert run.new == [0, 1] and sorted(run.records) == [0, 1] == [r["seed"] for r in records_in(out)]
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

"""Accuracy against perfect play: the position set is what the solver says, builds resume, agents are scored,
networks' heads are measured; ``trinity accuracy`` and its bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from perfect import PerfectAgent

from trinity_env.agents import Agent
from trinity_env.cli import main
from trinity_env.core import GameState, Move, PositionError
from trinity_env.evaluation import accuracy
from trinity_env.evaluation.accuracy import (
    DEFAULT_EMPTY,
    DEFAULT_PER_COUNT,
    DEFAULT_SET,
    build_set,
    load_set,
    random_expectation,
    score_agent,
    score_agents,
)
from trinity_env.search.solver import Solver

SMALL = {"per_count": 3, "empty": (4, 6), "agent": "greedy", "max_nodes": 2_000_000}


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    path = tmp_path_factory.mktemp("accuracy") / "set.jsonl"
    build_set(path, **SMALL)
    return path


def move_values(position: GameState, solver: Solver) -> dict[Move, int]:
    """Every legal move's exact value for the mover, each child solved on its own."""
    mover = position.to_move
    values = {}
    for move in position.legal_moves():
        child = position.play(move)
        if child.is_over:
            values[move] = 0 if child.winner is None else (1 if child.winner == mover else -1)
        else:
            values[move] = solver.value(child) * (1 if child.to_move == mover else -1)
    return values


def test_each_record_holds_the_exact_value_and_exactly_the_moves_that_keep_it(small_set):
    solver = Solver(table_bits=16)
    positions = load_set(small_set)
    assert {p.empty for p in positions} == {4, 5, 6}
    for p in positions:
        values = move_values(p.position, solver)
        assert max(values.values()) == p.value == solver.value(p.position)
        assert p.best_moves == {move for move, value in values.items() if value == p.value}
        assert p.legal_moves == len(values)
    for count in (4, 5, 6):
        assert sum(p.empty == count and p.value >= 0 for p in positions) == SMALL["per_count"]


def test_a_build_in_two_parts_equals_one_build_and_keeps_its_records(small_set, tmp_path):
    path = tmp_path / "parts.jsonl"
    build_set(path, **(SMALL | {"per_count": 1}))
    first = path.read_text().splitlines()
    build_set(path, **SMALL)
    assert path.read_text().splitlines()[: len(first)] == first
    assert sorted(path.read_text().splitlines()) == sorted(small_set.read_text().splitlines())
    build_set(path, **SMALL)  # nothing left to do: the file is unchanged
    assert sorted(path.read_text().splitlines()) == sorted(small_set.read_text().splitlines())


def test_a_build_refuses_a_file_built_with_other_settings(small_set, tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(small_set.read_text())
    with pytest.raises(PositionError, match="agent greedy, seed 0"):
        build_set(path, **(SMALL | {"seed": 1}))
    assert path.read_text() == small_set.read_text()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda lines: lines[:1], "no solved positions"),
        (lambda lines: ['{"format": "other"}', *lines[1:]], "not an accuracy set"),
        (lambda lines: [lines[0], lines[1].replace('"value": ', '"value": 7, "old": ')], "value must be"),
        (lambda lines: [lines[0], "[1, 2]"], "line 2: not an accuracy record \\(not a JSON object"),
        (
            lambda lines: [
                lines[0],
                lines[1].replace('"best_moves": [', '"best_moves": [{"card": "9999", "tile": 0}, '),
            ],
            "legal moves",
        ),
    ],
)
def test_a_damaged_set_is_refused_with_the_line(small_set, tmp_path, change, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(change(small_set.read_text().splitlines())) + "\n")
    with pytest.raises(PositionError, match=problem):
        load_set(path)


def test_perfect_play_keeps_every_value_and_random_play_matches_its_expectation(small_set):
    positions = load_set(small_set)
    perfect = score_agent(PerfectAgent(), positions)
    assert all(c.moves.hits == c.moves.total == SMALL["per_count"] for c in perfect.counts)
    expected = random_expectation(positions)
    assert set(expected) == {4, 5, 6} and all(0 < share <= 1 for share in expected.values())
    # positions that a move cannot spoil (lost for the mover) are not scored for moves
    lost = [p for p in positions if p.value < 0]
    assert lost and all(p.best_moves == set(p.position.legal_moves()) for p in lost)


def test_a_network_agent_gets_its_value_head_and_raw_policy_scored(small_set):
    positions = load_set(small_set)

    class Network(Agent):
        """Plays the first legal action; its "network" says +1 for everything and prefers the last action."""

        name = "fake-network"

        def act(self, observation, state=None):
            return int(np.flatnonzero(observation["action_mask"])[0])

        def evaluate(self, observations, masks):
            return np.arange(256, dtype=np.float32)[None].repeat(len(observations), 0), np.ones(len(observations))

    result = score_agent(Network(), positions)
    for row in result.counts:
        group = [p for p in positions if p.empty == row.empty]
        decided = [p for p in group if p.value != 0]
        assert row.value_sign.total == len(decided)
        assert row.value_sign.hits == sum(p.value == 1 for p in decided)
        assert row.value_error == pytest.approx(np.mean([(1 - p.value) ** 2 for p in group]))
        top = []
        for p in group:
            if p.value >= 0:
                action = max(p.position.legal_actions())
                step = p.position.apply(action).last
                top.append(Move(step.card, step.tile) in p.best_moves)
        assert (row.policy.hits, row.policy.total) == (sum(top), len(top))


def test_the_shipped_az_agent_is_measured_through_its_network(small_set):
    pytest.importorskip("torch")
    positions = load_set(small_set)
    result = score_agent("az-standard:sims=0", positions)
    for row in result.counts:
        assert row.value_sign is not None and 0 <= row.value_error <= 4
        # the raw agent plays its policy's first choice: the two figures are one
        assert row.policy.hits == row.moves.hits


def test_scores_are_the_same_for_the_same_seed(small_set):
    positions = load_set(small_set)
    first, second = (score_agents(["mcts:25"], positions, seed=3)[0] for _ in range(2))
    assert first == second


def test_the_shipped_set_holds_its_default_counts_each_with_enough_positions_that_count():
    positions = load_set(DEFAULT_SET)
    low, high = DEFAULT_EMPTY
    assert {p.empty for p in positions} == set(range(low, high + 1))
    for empty in range(low, high + 1):  # not lost for the mover: the positions that count for moves
        assert sum(1 for p in positions if p.empty == empty and p.value >= 0) >= DEFAULT_PER_COUNT
    assert all(p.position.phase == "play" and not p.position.is_over for p in positions)


def test_the_command_scores_agents_and_writes_json_table_and_plot(small_set, tmp_path, capsys):
    out, png = tmp_path / "scores.json", tmp_path / "scores.png"
    code = main(
        [
            "accuracy",
            "score",
            "--agents",
            "greedy",
            "mcts:25",
            "--set",
            str(small_set),
            "--json",
            str(out),
            "--png",
            str(png),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "| empty | positions | greedy | mcts:25 | random mover |" in text
    summary = json.loads(out.read_text())
    assert [a["agent"] for a in summary["agents"]] == ["greedy", "mcts:25"]
    assert summary["positions"] == {str(e): sum(p.empty == e for p in load_set(small_set)) for e in (4, 5, 6)}
    assert png.stat().st_size > 1000


def test_the_command_builds_a_set(tmp_path, capsys):
    out = tmp_path / "built.jsonl"
    assert (
        main(["accuracy", "build", str(out), "--per-count", "2", "--empty", "4-5", "--agent", "greedy", "--quiet"]) == 0
    )
    assert "4 empty: 2" in capsys.readouterr().out
    assert len(load_set(out)) >= 4


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["accuracy"], "the following arguments are required: {build,score}"),
        (["accuracy", "score", "--agents", "nonsense-agent"], "nonsense-agent"),
        (["accuracy", "score", "--agents", "greedy", "--set", "/nonexistent/set.jsonl"], "set.jsonl"),
        (["accuracy", "score", "--agents", "greedy", "--per-count", "3"], "--per-count"),
        (["accuracy", "build", "x.jsonl", "--agents", "greedy"], "--agents"),
        (["accuracy", "build", "x.jsonl", "--per-count", "0"], "per-count"),
        (["accuracy", "score", "--agents", "greedy", "--empty", "0-3"], "empty"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, problem, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert problem in err and "\n" not in err and err.startswith("trinity accuracy")
    assert not (tmp_path / "x.jsonl").exists()


def test_an_interrupted_build_keeps_every_finished_record(tmp_path, monkeypatch):
    path = tmp_path / "set.jsonl"
    calls = {"n": 0}
    original = accuracy._solve_record

    def interrupt_on_the_fifth(*args):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return original(*args)

    monkeypatch.setattr(accuracy, "_solve_record", interrupt_on_the_fifth)
    with pytest.raises(accuracy.RunInterrupted) as stop:
        build_set(path, **SMALL)
    assert len(stop.value.partial.records) == 4
    assert len(path.read_text().splitlines()) == 1 + 4
    monkeypatch.setattr(accuracy, "_solve_record", original)
    build_set(path, **SMALL)
    assert sum(p.value >= 0 for p in load_set(path)) == 3 * SMALL["per_count"]


# ---------------------------------------------------------------------- the file through a full disk and damage


def test_a_full_disk_during_a_build_is_one_line_naming_the_file_and_the_build_then_resumes(
    small_set, tmp_path, monkeypatch
):
    import errno
    import os

    from trinity_env.core import records
    from trinity_env.core.errors import WriteError

    path = tmp_path / "set.jsonl"
    calls = {"n": 0}
    original = records.write

    def fills_up(descriptor, data):  # the header and three records fit; the fourth is written in part
        calls["n"] += 1
        if calls["n"] == 5:
            original(descriptor, data[: len(data) // 3])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return original(descriptor, data)

    monkeypatch.setattr(records, "write", fills_up)
    with pytest.raises(WriteError) as full:
        build_set(path, **SMALL)
    assert str(full.value).startswith(f"cannot write {path}: No space left on device") and "\n" not in str(full.value)
    assert len(path.read_text().splitlines()) == 1 + 3 and path.read_text().endswith("\n")
    monkeypatch.undo()
    build_set(path, **SMALL)  # room again: it goes on after the third record
    assert sorted(path.read_text().splitlines()) == sorted(small_set.read_text().splitlines())


def test_a_build_resumes_after_a_last_line_cut_short_and_says_so_in_one_line(small_set, tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    kept = small_set.read_text().splitlines()[:4]
    path.write_text("\n".join(kept) + "\n" + small_set.read_text().splitlines()[4][:50])  # killed mid-line
    build_set(path, **SMALL)
    assert path.read_text().splitlines()[:4] == kept
    assert sorted(path.read_text().splitlines()) == sorted(small_set.read_text().splitlines())
    assert (
        capsys.readouterr().err
        == f"warning: {path}: its last line was cut short (written in part when a job stopped): dropped\n"
    )


def test_a_string_where_a_number_belongs_is_one_line_not_a_traceback(small_set, tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    lines = small_set.read_text().splitlines()
    lines[3] = lines[3].replace('"value": ', '"value": "', 1).replace(', "best_moves"', '", "best_moves"', 1)
    assert '"value": "' in lines[3]
    path.write_text("\n".join(lines) + "\n")
    message = rf"^{path}, line 4: not an accuracy record \(value must be one of -1, 0, 1, got '-?[01]'\)$"
    with pytest.raises(PositionError, match=message):
        build_set(path, **SMALL)
    with pytest.raises(PositionError, match=message):
        load_set(path)
    argv = ["accuracy", "build", str(path), "--per-count", "3", "--empty", "4-6", "--agent", "greedy", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 4: not an accuracy record (value must be one of -1, 0, 1" in err
    assert path.read_text() == "\n".join(lines) + "\n"


RUN_CLI = "import sys; from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.e2e  # two fresh processes: make test-e2e; the same full disk in-process is tested above
def test_the_command_survives_a_real_full_disk_and_resumes(tmp_path):
    """A file size limit (``RLIMIT_FSIZE``: writes past it fail with EFBIG, after writing what fits) stands in
    for a full disk, in a real ``trinity accuracy build`` process; a second run without it finishes the set."""
    resource = pytest.importorskip("resource")
    import signal
    import subprocess
    import sys

    path = tmp_path / "set.jsonl"
    argv = ["accuracy", "build", str(path), "--per-count", "1", "--empty", "4-5", "--agent", "greedy", "--quiet"]

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))  # the header and part of the first record

    full = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *argv], capture_output=True, text=True, timeout=300, preexec_fn=limited
    )
    assert full.returncode == 1, full.stderr  # a write that failed, not bad input (docs/guide.md)
    assert full.stderr.strip().count("\n") == 0 and f"cannot write {path}: File too large" in full.stderr
    again = subprocess.run([sys.executable, "-c", RUN_CLI, *argv], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert sorted({p.empty for p in load_set(path)}) == [4, 5]

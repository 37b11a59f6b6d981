"""Puzzles: built from self-play, re-solved, saved and loaded, agents scored; ``trinity puzzles`` and its bad input."""

from __future__ import annotations

import json
import re

import pytest
from perfect import PerfectAgent

from trinity_env.agents import make
from trinity_env.cli import main
from trinity_env.core import ArgumentError, GameState, PositionError
from trinity_env.evaluation.endgames import DEFAULT_SUITE
from trinity_env.evaluation.match import RunInterrupted
from trinity_env.evaluation.puzzles import (
    DEFAULT_SET,
    FORMAT,
    Puzzle,
    PuzzleBuild,
    agent_move,
    build_puzzles,
    describe_set,
    load_puzzles,
    save_puzzles,
    score_agent,
    score_agents,
)
from trinity_env.evaluation.ratings import wilson_interval
from trinity_env.search.solver import Solver

SMALL = {"empty": (5, 7), "agent": "greedy", "max_nodes": 2_000_000}


def winning_moves(position: GameState, solver: Solver) -> set[tuple[str, int]]:
    """Every legal move after which the mover wins, each child solved on its own (not by ``Solution.best_moves``)."""
    mover = position.to_move
    won = set()
    for move in position.legal_moves():
        child = position.play(move)
        if child.is_over:
            value = 0 if child.winner is None else (1 if child.winner == mover else -1)
        else:
            value = solver.value(child) * (1 if child.to_move == mover else -1)
        if value == 1:
            won.add(move)
    return won


def assert_sound(puzzle: Puzzle, solver: Solver) -> None:
    position = puzzle.position
    assert position.phase == "play" and not position.is_over
    winning = winning_moves(position, solver)
    assert winning == set(puzzle.solution), "the stored solution is not exactly the winning moves"
    assert 1 <= len(winning) <= len(position.legal_moves()) / 3


def test_built_puzzles_are_re_solved_and_sound(tmp_path):
    found = []
    report = build_puzzles(PuzzleBuild(3, seed=1, **SMALL), on_puzzle=found.append)
    assert len(report.puzzles) == 3 and found == report.puzzles and not report.partial
    solver = Solver(table_bits=18)
    for puzzle in report.puzzles:
        assert 5 <= puzzle.empty <= 7
        assert_sound(puzzle, solver)
    path = tmp_path / "p.jsonl"
    save_puzzles(report.puzzles, path)
    loaded = load_puzzles(path)
    assert [(p.position, p.solution) for p in loaded] == [(p.position, p.solution) for p in report.puzzles]
    header, record = (json.loads(line) for line in path.read_text().splitlines()[:2])
    assert header == {"format": FORMAT}  # saved by hand: the format alone
    assert record["value"] == 1 and record["source"] == {"agent": "greedy", "seed": 1, "game": record["source"]["game"]}
    assert record["legal_moves"] == len(loaded[0].position.legal_moves())
    # a build is reproducible, and a longer one starts with the shorter one's puzzles
    again = build_puzzles(PuzzleBuild(4, seed=1, **SMALL))
    assert [p.to_json() for p in again.puzzles[:3]] == [p.to_json() for p in report.puzzles]


def test_a_build_is_checked_once_when_made_and_names_itself_in_the_header():
    with pytest.raises(ArgumentError, match="count must be a whole number >= 1, got 0"):
        PuzzleBuild(0)
    with pytest.raises(ArgumentError, match="empty tiles must be a range within 1-14"):
        PuzzleBuild(3, empty=(9, 4))
    build = PuzzleBuild(3, seed=7, **SMALL)
    assert build.header() == {"format": FORMAT, "agent": "greedy", "seed": 7, "empty": [5, 7], "max_nodes": 2_000_000}
    assert (build.game_limit, PuzzleBuild(3, max_games=10).game_limit) == (150, 10)


def test_the_shipped_set_is_sound():
    puzzles = load_puzzles(DEFAULT_SET)
    assert len(puzzles) >= 100
    assert all(8 <= p.empty <= 10 and 1 <= len(p.solution) <= p.legal_moves / 3 for p in puzzles)
    assert len({json.dumps(p.position.to_dict(), sort_keys=True) for p in puzzles}) == len(puzzles)
    solver = Solver(table_bits=20)
    for puzzle in sorted(puzzles, key=lambda p: p.empty)[:2]:  # spot-check: re-solved move by move
        assert_sound(puzzle, solver)


@pytest.mark.slow
def test_every_shipped_puzzle_re_solves():
    solver = Solver()
    for puzzle in load_puzzles(DEFAULT_SET):
        assert_sound(puzzle, solver)


def test_scores_are_shares_with_wilson_intervals(tmp_path):
    puzzles = build_puzzles(PuzzleBuild(3, seed=2, **SMALL)).puzzles
    perfect = score_agent(PerfectAgent(), puzzles)
    assert (perfect.share.hits, perfect.share.total, perfect.share.value) == (3, 3, 1.0)
    assert perfect.share.interval == wilson_interval(3, 3)
    low = wilson_interval(3, 3)[0]
    assert perfect.to_json() == {
        "agent": perfect.agent,
        "solved": 3,
        "puzzles": 3,
        "share": 1.0,
        "low": low,
        "high": 1.0,
    }
    greedy = score_agent("greedy", puzzles)
    moves = [agent_move(make("greedy"), p.position, k) for k, p in enumerate(puzzles)]
    assert greedy.share.hits == sum(m in p.solution for m, p in zip(moves, puzzles))
    scores = score_agents(["random", "greedy"], puzzles)
    assert [s.agent for s in scores] == ["random", "greedy"] and scores[1] == greedy


def test_the_endgame_suite_can_be_scored_as_puzzles():
    puzzles = load_puzzles(DEFAULT_SUITE)
    assert len(puzzles) >= 50 and all(p.solution for p in puzzles)


@pytest.mark.parametrize("shipped", [DEFAULT_SET, DEFAULT_SUITE], ids=["puzzles", "endgames"])
def test_a_file_from_before_the_header_is_refused_in_one_line(tmp_path, shipped):
    """The shipped files start with their header; the same records without it (the old format) are refused."""
    first, rest = shipped.read_text(encoding="utf-8").split("\n", 1)
    assert json.loads(first)["format"] in (FORMAT, "trinity-towers-endgames")
    old = tmp_path / "old.jsonl"
    old.write_text(rest, encoding="utf-8")
    with pytest.raises(PositionError) as refused:
        load_puzzles(old)
    expected = "line 1: not a puzzle file (its first line must be a header with format 'trinity-towers-puzzles' or"
    assert str(refused.value).startswith(f"{old}, {expected}") and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "not valid JSON"),
        ('{"solution": []}', "a 'position'"),
        ('["a list"]', "a 'position'"),
    ],
)
def test_a_bad_record_names_its_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"format": FORMAT}) + "\n" + line + "\n")
    with pytest.raises(PositionError, match=f"line 2: not a puzzle record.*{re.escape(message)}"):
        load_puzzles(path)


def test_records_that_cannot_be_puzzles_are_refused(tmp_path):
    puzzle = build_puzzles(PuzzleBuild(1, seed=3, **SMALL)).puzzles[0]
    record = puzzle.to_json()
    cases = {
        "empty": {**record, "solution": []},
        "not legal": {**record, "solution": [{"card": "1111", "tile": 0}]},
        "position": {k: v for k, v in record.items() if k != "solution"},
    }
    for expected, bad in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps({"format": FORMAT}) + "\n" + json.dumps(bad) + "\n")
        with pytest.raises(PositionError, match=expected if expected != "position" else "needs 'solution'"):
            load_puzzles(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(PositionError, match="no puzzles"):
        load_puzzles(tmp_path / "empty.jsonl")


def test_the_command_builds_and_scores(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    argv = ["puzzles", "build", str(out), "--count", "2", "--empty", "5-7", "--agent", "greedy", "--quiet"]
    assert main(argv) == 0
    assert "2 puzzles from" in capsys.readouterr().out
    assert len(load_puzzles(out)) == 2
    scores = tmp_path / "scores.json"
    assert main(["puzzles", "score", str(out), "--agents", "random", "greedy", "--json", str(scores)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"\| greedy \| \d / 2 \| \d+\.\d% \[\d+\.\d%, \d+\.\d%\] \|", printed), printed
    data = json.loads(scores.read_text())
    assert [s["agent"] for s in data["scores"]] == ["random", "greedy"] and data["count"] == 2


def test_a_bare_score_scores_the_shipped_set_from_any_working_directory(tmp_path, monkeypatch, capsys):
    """``--score`` needed a file, and the documented path exists only inside a checkout (issue 51)."""
    monkeypatch.chdir(tmp_path)  # no trinity_env/evaluation/data/ here
    scores = tmp_path / "scores.json"
    assert main(["puzzles", "score", "--agents", "greedy", "--json", str(scores)]) == 0
    count = len(load_puzzles())
    assert count == len(load_puzzles(DEFAULT_SET)) and count > 0
    assert f"{count} puzzles from trinity_env/evaluation/data/puzzles.jsonl:" in capsys.readouterr().out
    data = json.loads(scores.read_text())
    assert data["puzzles"] == "trinity_env/evaluation/data/puzzles.jsonl" and data["count"] == count


def test_a_set_says_what_a_random_mover_expects_and_the_scores_json_holds_it(tmp_path, capsys):
    first = load_puzzles(DEFAULT_SET)[0]  # 8 empty tiles, two winning moves among 40 legal ones
    assert (first.empty, len(first.solution), first.legal_moves) == (8, 2, 40)
    assert describe_set([first]) == {"by_empty": {"8": 1}, "single_winning_move": 0, "random_expected": 2 / 40}
    single = Puzzle(first.position, frozenset(sorted(first.solution)[:1]))
    assert describe_set([first, single]) == {
        "by_empty": {"8": 2},
        "single_winning_move": 1,
        "random_expected": (2 / 40 + 1 / 40) / 2,
    }
    source = tmp_path / "two.jsonl"
    save_puzzles([first, single], source)
    scores = tmp_path / "scores.json"
    assert main(["puzzles", "score", str(source), "--agents", "random", "--json", str(scores)]) == 0
    expected = "2 with 8 empty; 1 with a single winning move; a uniformly random mover expects 3.8%"
    assert expected in capsys.readouterr().out
    assert json.loads(scores.read_text())["set"]["random_expected"] == pytest.approx(3 / 80)


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "the following arguments are required: {build,score}"),
        (["build", "x.jsonl", "score", "y.jsonl"], "unrecognized arguments: score y.jsonl"),
        (["score", "{suite}"], "the following arguments are required: --agents"),
        (["score", "{suite}", "--agents", "nobody"], "no agent named 'nobody'"),
        (["score", "{suite}", "--agents", "greedy", "--count", "3"], "unrecognized arguments: --count 3"),
        (["score", "{replay}", "--agents", "greedy"], "line 1: not a puzzle record"),
        (["score", "{missing}", "--agents", "greedy"], "cannot read"),
        (["build", "{out}", "--agents", "greedy"], "unrecognized arguments: --agents greedy"),
        (["build", "{out}", "--agent", "nobody"], "no agent named 'nobody'"),
        (["build", "{out}", "--empty", "10-8"], "expected empty tiles"),
        (["build", "{out}", "--empty", "0"], "expected empty tiles"),
        (["build", "{out}", "--empty", "x"], "expected empty tiles"),
        (["build", "{out}", "--count", "0"], "expected a whole number >= 1"),
        (["build", "{out}", "--max-nodes", "-1"], "expected"),
        (["build", "{folder}"], "is a folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    replay = tmp_path / "replay.json"
    replay.write_text('{\n "format": "trinity-towers-replay"\n}\n')
    paths = {
        "suite": str(DEFAULT_SUITE),
        "replay": str(replay),
        "missing": str(tmp_path / "none.jsonl"),
        "out": str(tmp_path / "out.jsonl"),
        "folder": str(tmp_path),
    }
    assert main(["puzzles", *(a.format(**paths) for a in argv)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("trinity puzzles") and message in captured.err, captured.err
    assert not (tmp_path / "out.jsonl").exists()


def test_ctrl_c_keeps_the_puzzles_found(tmp_path, capsys, monkeypatch):
    from trinity_env.evaluation import puzzles as module

    original = module.classify
    found = {"n": 0}

    def interrupted_after_two(position, solver, max_nodes, *rest):
        solution = original(position, solver, max_nodes, *rest)
        found["n"] += solution is not None
        if found["n"] == 3:
            raise KeyboardInterrupt
        return solution

    monkeypatch.setattr(module, "classify", interrupted_after_two)
    with pytest.raises(RunInterrupted) as stop:
        build_puzzles(PuzzleBuild(5, seed=1, **SMALL))
    assert stop.value.partial.partial and len(stop.value.partial.puzzles) == 2

    found["n"] = 0
    out = tmp_path / "p.jsonl"
    argv = ["puzzles", "build", str(out), "--count", "5", "--empty", "5-7", "--agent", "greedy", "--seed", "1"]
    argv.append("--quiet")
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert captured.err == f"trinity puzzles: interrupted: 2 puzzles written to {out}\n"
    assert len(load_puzzles(out)) == 2


def test_ctrl_c_while_scoring_prints_the_finished_scores(tmp_path, capsys, monkeypatch):
    from trinity_env.evaluation import puzzles as module

    original = module.score_agent

    def interrupted_on_the_second(agent, puzzles, seed=0, **keywords):
        if agent.name == "greedy":
            raise KeyboardInterrupt
        return original(agent, puzzles, seed, **keywords)

    monkeypatch.setattr(module, "score_agent", interrupted_on_the_second)
    assert main(["puzzles", "score", str(DEFAULT_SUITE), "--agents", "random", "greedy"]) == 130
    captured = capsys.readouterr()
    assert "| random |" in captured.out and "| greedy |" not in captured.out
    assert captured.err == "trinity puzzles: interrupted: scores of 1 of 2 agents written\n"


def test_a_record_larger_than_a_json_document_is_refused_unparsed(tmp_path):
    """A puzzle file may be large (many records) but each line is one document, bounded like a position."""
    from trinity_env.core import PositionError
    from trinity_env.core.files import MAX_DOCUMENT_BYTES
    from trinity_env.evaluation.puzzles import load_puzzles

    path = tmp_path / "big.jsonl"
    path.write_text("[" + "[]," * (MAX_DOCUMENT_BYTES // 3) + "[]]\n")
    with pytest.raises(PositionError, match=rf"big\.jsonl, line 1: a record over {MAX_DOCUMENT_BYTES >> 20} MiB"):
        load_puzzles(path)


_RUN_CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
)  # the default handler even where the test runner ignores SIGINT (a background job)


def test_ctrl_c_during_a_rebuild_over_the_shipped_set_leaves_it_whole(tmp_path):
    """``trinity puzzles build`` over a copy of the shipped 200-puzzle set, stopped with SIGINT once it builds: the
    old file is byte for byte what it was (the new puzzles are written beside it and would replace it only whole)."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    out = tmp_path / "puzzles.jsonl"
    out.write_bytes(DEFAULT_SET.read_bytes())
    process = subprocess.Popen(
        [sys.executable, "-c", _RUN_CLI, "puzzles", "build", str(out)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(process.stderr.fileno(), 65536), b"")))
    reader.start()
    try:
        while b"puzzles:" not in b"".join(chunks):  # its progress bar: the games are being played
            assert process.poll() is None, b"".join(chunks).decode(errors="replace")
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=120)  # (not communicate: the reader thread alone reads stderr)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(30)
    err = b"".join(chunks).decode(errors="replace")
    assert process.returncode == 130, err
    assert out.read_bytes() == DEFAULT_SET.read_bytes()
    assert f"written to {out}.partial ({out} is left as it was)" in err
    assert len(load_puzzles(out)) == 200

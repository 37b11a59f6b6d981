"""Every result goes through the one write door (``trinity_env.core.writes``), each writer with a temporary file of
its own, and each output folder is one job's at a time (issue 50, classes 5 and 6).

The breaks: ``ArenaResult.write`` (csv, md, json, the heatmap), ``ScoreCard.plot``, review's and accuracy's
``--png`` and balance's outputs followed a link planted in ``--out`` during a run and overwrote a file outside it;
every writer of ``NAME`` used one ``NAME.tmp`` and deleted another's as a crash leftover (two processes writing one
file failed 34-47 of 80 writes, concurrent ``trinity dataset build``s failed on a shard); two ``trinity
benchmark`` runs on one ``--out`` both exited 0 and one card was lost.

The walks: ``test_no_result_is_written_outside_the_write_door`` reads every module of the package and of
``training/`` for a write outside the door, and ``test_every_output_folder_is_one_job_s_at_a_time`` finds every
folder option in the parser, so a new surface cannot skip either.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trinity_env.cli import build_parser
from trinity_env.cli import main as trinity
from trinity_env.core import ArgumentError, GameState, Replay
from trinity_env.core.errors import WriteError
from trinity_env.core.locks import locked
from trinity_env.core.writes import atomic_file, remove_leftovers, temporary_name, write_bytes
from trinity_env.evaluation import solved_positions as sp

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------- the door, read from the code

DOORS = {
    "trinity_env/core/writes.py": "the write door itself",
    "trinity_env/core/paths.py": "proves an output writable before work starts (O_EXCL probe, opened without blocking)",
    "trinity_env/core/records.py": "record files, appended under their lock, links refused",
    "trinity_env/evaluation/openings_file.py": "the solved-openings records, appended under their lock",
    "training/run_folder.py": "the run lock file, written in place under its flock",
    "trinity_env/cli/__init__.py": "standard output pointed at os.devnull once its reader has gone",
}
"""Modules that open files for writing by themselves, and why that is their job (every other write goes through
``core.writes``)."""

WRITE_MODES = set("wax+")
SAVERS = {("torch", "save"), ("np", "save"), ("np", "savez"), ("np", "savez_compressed"), ("json", "dump")}


def _mode(call: ast.Call, position: int) -> str:
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return str(call.args[position].value)
    return "r"


def _writes_outside_the_door(tree: ast.AST) -> list[tuple[int, str]]:
    """Each write of ``tree`` that is not through ``core.writes``: an ``open`` or ``Path.open`` in a writing mode,
    ``Path.write_text``/``write_bytes``, ``os.open`` with writing flags, and a ``savefig``, ``torch.save``,
    ``np.save*`` or ``json.dump`` into anything but a handle of ``atomic_file``."""
    handles = {
        item.optional_vars.id
        for node in ast.walk(tree)
        if isinstance(node, ast.With)
        for item in node.items
        if isinstance(item.context_expr, ast.Call)
        and isinstance(item.optional_vars, ast.Name)
        and getattr(item.context_expr.func, "id", getattr(item.context_expr.func, "attr", None)) == "atomic_file"
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "open" and WRITE_MODES & set(_mode(node, 1)):
            found.append((node.lineno, "open() to write"))
        if not isinstance(function, ast.Attribute):
            continue
        owner = function.value.id if isinstance(function.value, ast.Name) else None
        into_handle = any(isinstance(a, ast.Name) and a.id in handles for a in node.args)
        if function.attr in ("write_text", "write_bytes") and owner != "writes":
            found.append((node.lineno, f".{function.attr}()"))
        elif function.attr == "open" and owner != "os" and WRITE_MODES & set(_mode(node, 0)):
            found.append((node.lineno, ".open() to write"))
        elif function.attr == "savefig" and not into_handle:
            found.append((node.lineno, ".savefig() outside atomic_file"))
        elif (owner, function.attr) in SAVERS and not into_handle:
            found.append((node.lineno, f"{owner}.{function.attr}() outside atomic_file"))
        elif owner == "os" and function.attr == "open" and len(node.args) > 1:
            flags = node.args[1]
            named = {n.attr for n in ast.walk(flags) if isinstance(n, ast.Attribute)}
            unknown = [n.id for n in ast.walk(flags) if isinstance(n, ast.Name) and n.id not in ("os", "getattr")]
            if named & {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND"} or unknown:
                found.append((node.lineno, "os.open() to write"))
    return found


def test_no_result_is_written_outside_the_write_door():
    modules = sorted([*(ROOT / "trinity_env").rglob("*.py"), *(ROOT / "training").rglob("*.py")])
    outside = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in modules
        if str(path.relative_to(ROOT)) not in DOORS
        for line, what in _writes_outside_the_door(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert outside == [], "write these through trinity_env.core.writes (write_text, write_bytes, write_figure)"
    assert all((ROOT / door).exists() for door in DOORS), "DOORS names a module that is gone"


def test_the_scan_finds_each_kind_of_write():
    """The walk above can fail: each construct it looks for is found in a snippet."""
    snippet = """
open(p, "w"); p.open("a"); p.write_text("x"); p.write_bytes(b""); fig.savefig(p); torch.save(x, p)
os.open(p, os.O_WRONLY | os.O_CREAT); json.dump(x, f); np.savez(p, a=1)
with atomic_file(p) as handle:
    fig.savefig(handle); torch.save(x, handle); writes.write_text(p, "x"); open(p).read(); os.open(p, os.O_RDONLY)
"""
    assert len(_writes_outside_the_door(ast.parse(snippet))) == 9


# ---------------------------------------------------------------------- a link planted in --out during a run


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """One real result of each writer: an arena, a balance report, a score card, a review, an accuracy plot, a
    replay (each small)."""
    from trinity_env import scorecard
    from trinity_env.agents.spec import make
    from trinity_env.evaluation import accuracy, accuracy_report
    from trinity_env.evaluation.arena import round_robin
    from trinity_env.evaluation.balance import run_balance
    from trinity_env.evaluation.ratings import Share
    from trinity_env.evaluation.review import review_replay

    arena = round_robin(["random", "greedy"], 2, workers=1, progress=False)
    balance = run_balance(["greedy"], 2, a_limits=(), workers=1, progress=False)
    positions = accuracy.first_per_count(accuracy.load_set(), 2)
    scored = accuracy.score_agent(make("greedy"), positions, 0, label="greedy")
    share = Share(1, 2).to_json()
    card = scorecard.ScoreCard(
        "greedy",
        scorecard.PROTOCOLS["quick"],
        0,
        {"elo": 0.0, "low": -1.0, "high": 1.0, "games": 2, "pool_name": "reference_pool"},
        {"elo": 0.0, "low": -1.0, "high": 1.0, "games": 2, "pool_name": "reference_pool_draft"},
        {str(row.empty): row.moves.to_json() for row in scored.counts},
        None,
        share,
        share,
    )
    state = GameState.new_game()
    states = [state]
    while not state.is_over:
        state = state.apply(state.legal_actions()[0])
        states.append(state)
    replay = Replay.from_states(states)
    review = review_replay(replay, max_nodes=2_000, agent="greedy")
    return {
        "arena": lambda out: arena.write(out),
        "balance": lambda out: balance.write(out),
        "benchmark": lambda out: card.write(out),
        "review --json": lambda out: review.write_json(out / "review.json"),
        "review --png": lambda out: review.plot(out / "review.png"),
        "accuracy --png": lambda out: accuracy_report.plot([scored], out / "accuracy.png"),
        "play --save": lambda out: replay.save(out / "game.json"),
    }


SURFACES = {
    "arena": ["arena.csv", "arena.md", "arena.json", "arena_heatmap.png"],
    "balance": ["balance.json", "balance.md", "balance_overview.png", "balance_cards.png"],
    "benchmark": ["scorecard.json", "scorecard.md", "scorecard.png"],
    "review --json": ["review.json"],
    "review --png": ["review.png"],
    "accuracy --png": ["accuracy.png"],
    "play --save": ["game.json"],
}
"""Every writer of results and the files it writes."""


@pytest.mark.parametrize("surface, name", [(s, n) for s, names in SURFACES.items() for n in names])
def test_a_link_planted_in_out_during_a_run_is_never_followed(results, tmp_path, surface, name):
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.write_text("precious")
    (out / name).symlink_to(victim)
    with pytest.raises(WriteError, match=rf"{name} is a symbolic link: refusing to write through it"):
        results[surface](out)
    assert victim.read_text() == "precious" and (out / name).is_symlink()
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_the_surfaces_write_the_files_named_and_nothing_else(results, tmp_path):
    for surface, names in SURFACES.items():
        out = tmp_path / surface.replace(" ", "")
        out.mkdir()
        results[surface](out)
        assert sorted(p.name for p in out.iterdir()) == sorted(names), surface


# ---------------------------------------------------------------------- two writers of one file


def test_a_second_writer_of_one_file_leaves_the_first_one_s_temporary_file_alone(tmp_path):
    """Both writes succeed, the later rename winning (the shared ``NAME.tmp`` made the first one fail)."""
    path = tmp_path / "card.json"
    with atomic_file(path) as first:
        first.write(b"first")
        write_bytes(path, b"second")
        assert path.read_bytes() == b"second"
    assert path.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["card.json"]


WRITER = """
import sys
from trinity_env.core.writes import write_text
failed = 0
for k in range(80):
    try:
        write_text(sys.argv[1], f"{sys.argv[2]} {k}\\n" * 2000)
    except OSError as err:
        failed += 1
        print(err, file=sys.stderr)
print(failed)
"""


def test_two_processes_writing_one_file_80_times_each_all_succeed(tmp_path):
    path = tmp_path / "result.json"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for n in range(2)
    ]
    failed = [int(w.communicate(timeout=120)[0]) for w in writers]
    assert failed == [0, 0] and [w.returncode for w in writers] == [0, 0]
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
    assert len(set(path.read_text().splitlines())) == 1  # one writer's content, whole


def test_two_dataset_builds_on_one_folder_both_finish(tmp_path):
    directory = tmp_path / "dataset"
    argv = [sys.executable, "-m", "trinity_env.cli", "dataset", "build", str(directory), "--shards", "0-3"]
    argv += ["--agent", "mcts:16", "--empty", "4-8", "--games-per-shard", "1", "--quiet"]
    builds = [subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [b.communicate(timeout=300)[1] for b in builds]
    assert [b.returncode for b in builds] == [0, 0], errors
    assert len(sp.read_manifest(directory)["shards"]) == 4 and len(sp.load(directory)) > 0
    assert not [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_only_a_dead_writer_s_leftover_is_removed(tmp_path):
    held = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        tag = temporary_name(tmp_path / "x").name.split(".")[-2].split("-")[0]  # this host's, as a writer names it
        dead = tmp_path / f"card.json.{tag}-{int(gone.stdout)}-0123abcd.tmp"
        live = tmp_path / f"card.json.{tag}-{held.pid}-0123abcd.tmp"
        other = tmp_path / f"card.json.{'f' * 6 if tag != 'f' * 6 else '0' * 6}-{int(gone.stdout)}-0123abcd.tmp"
        for file in (dead, live, other):
            file.write_text("half")
        assert remove_leftovers(tmp_path) == [dead]
        assert live.exists() and other.exists()
    finally:
        held.kill()
        held.wait()


def _dead_leftover(folder: Path, name: str) -> Path:
    """A temporary file of ``name`` as a writer of this host that has since died would have left it."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    tag = temporary_name(folder / name).name.split(".")[-2].split("-")[0]
    leftover = folder / f"{name}.{tag}-{int(gone.stdout)}-0123abcd.tmp"
    leftover.write_text("half")
    return leftover


def test_every_job_that_takes_a_folder_removes_its_dead_writers_leftovers(tmp_path):
    """A command's output folder, a trainer's run folder, a dataset build's folder."""
    from trainer_runs import PPO_ONE_UPDATE

    from training.config import TrainConfig
    from training.run_folder import claim
    from trinity_env.cli import common
    from trinity_env.evaluation import solved_build as sb

    out, run, dataset = tmp_path / "out", tmp_path / "run", tmp_path / "dataset"
    for folder in (out, run, dataset):
        folder.mkdir()
    leftovers = [_dead_leftover(out, "arena.json"), _dead_leftover(run, "latest.pt"), _dead_leftover(dataset, "x")]
    with common.folders_held():
        common.check_folder("--out", str(out), ())
    with claim(run, TrainConfig.from_dict(PPO_ONE_UPDATE), "fast_ppo"):
        pass
    sb.build(dataset, 1, agent="mcts:16", empty=(4, 6), games_per_shard=1)
    assert not any(leftover.exists() for leftover in leftovers)


# ---------------------------------------------------------------------- one job per output folder


def _folder_options() -> list[tuple[str, str]]:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for name, parser in commands.choices.items():
        for action in parser._actions:
            if getattr(action.type, "path_kind", None) == "folder path":
                found.append((name, action.option_strings[0] if action.option_strings else action.dest))
    return sorted(found)


FOLDERS = {
    ("arena", "--out"): (["arena", "--agents", "random", "greedy", "--games", "2", "--quiet"], "round_robin"),
    ("arena", "--replays"): (["arena", "--agents", "random", "greedy", "--games", "2", "--quiet"], "round_robin"),
    ("balance", "--out"): (["balance", "--agents", "greedy", "--games", "2", "--quiet"], "run_balance"),
    ("benchmark", "--out"): (["benchmark", "--agent", "greedy", "--quiet"], "benchmark"),
}
"""The output folders a command writes for the length of a run: its argv and the function that starts the work."""
OWN_LOCKS = {
    ("train", "--run"): "the run folder's run.lock (tests/test_run_folder.py)",
}
"""Folder options held another way, and how."""
HINT = "wait for it to finish or choose another folder"
WORK = {
    "round_robin": "trinity_env.evaluation.arena.round_robin",
    "run_balance": "trinity_env.evaluation.balance.run_balance",
    "benchmark": "trinity_env.scorecard.benchmark",
}


def test_every_folder_option_is_listed():
    assert sorted([*FOLDERS, *OWN_LOCKS]) == _folder_options(), "list the new folder option in FOLDERS or OWN_LOCKS"


@pytest.mark.parametrize("command, option", sorted(FOLDERS))
def test_every_output_folder_is_one_job_s_at_a_time(command, option, tmp_path, monkeypatch, capsys):
    """A second job on a folder another job is writing is refused in one line (exit 2) before any work."""
    argv, work = FOLDERS[command, option]
    monkeypatch.setattr(WORK[work], lambda *a, **k: pytest.fail("the work started"))
    folder = tmp_path / "out"
    folder.mkdir()
    others = [] if option == "--out" else ["--out", str(tmp_path / "elsewhere")]
    with locked(folder, ArgumentError):  # the other job
        assert trinity([*argv, *others, option, str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"trinity {command}: {option} {folder} is being written by another job: " + HINT


def test_a_folder_named_twice_by_one_job_is_held_once(tmp_path):
    """``arena --out D --replays D``: one job, one hold (a second ``flock`` of its own would refuse it)."""
    from trinity_env.cli import common

    with common.folders_held():
        common.check_folder("--out", str(tmp_path), ())
        common.check_folder("--replays", str(tmp_path), ())
        with pytest.raises(ArgumentError, match="is locked by another job"), locked(tmp_path, ArgumentError):
            pass
    with locked(tmp_path, ArgumentError):  # released when the job ends
        pass


def test_two_benchmarks_on_one_out_never_both_exit_0(tmp_path):
    """The break itself: a second ``trinity benchmark`` on the ``--out`` of one that runs is refused at once."""
    out = tmp_path / "benchmark"
    argv = [sys.executable, "-m", "trinity_env.cli", "benchmark", "--agent", "greedy", "--out", str(out), "--quiet"]
    first = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(out.glob("rating-games-*")):
            time.sleep(0.2)
        second = subprocess.run([*argv[:5], "random", *argv[6:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert first.poll() is None, "the first run ended before the second started"
    finally:
        first.kill()
        first.wait()
    assert second.returncode == 2, second.stderr
    assert second.stderr.strip().endswith("is being written by another job: " + HINT)
    assert not (out / "scorecard.json").exists()

"""Run folders: one trainer at a time, fresh starts need an empty folder, resumes a matching config;
the trainers' command lines refuse bad input in one line with exit status 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from training.config import TrainConfig, TrainConfigError
from training.rllib_selfplay import RLlibConfig
from training.run_folder import LOCK, RunFolderError, claim, resume_conflicts

TINY = {
    "total_steps": 256,
    "num_games": 16,
    "rollout_steps": 16,
    "hidden": 16,
    "eval_games": 2,
    "eval_endgames": False,
    "tensorboard": False,
    "env": {"draft": "dealt"},
}
CONFIG = TrainConfig.from_dict(TINY)


def refused(message: str, *args, **kwargs) -> None:
    """``claim(*args, **kwargs)`` raises a ``RunFolderError`` matching ``message``."""
    with pytest.raises(RunFolderError, match=message), claim(*args, **kwargs):
        pass


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_fresh_start_writes_the_config_and_locks_while_it_runs(tmp_path):
    run = tmp_path / "new" / "run"
    with claim(run, CONFIG, "fast_ppo") as folder:
        assert folder.path == run and not folder.resuming
        owner = json.loads((run / LOCK).read_text())
        assert owner["pid"] == os.getpid() and owner["host"] == socket.gethostname()
        assert json.loads((run / "config.json").read_text()) == CONFIG.to_dict()
        with claim(run, CONFIG, "fast_ppo") as again:  # the same thread nests: train() inside the CLI's claim
            assert again is folder
    assert not (run / LOCK).exists()


def test_a_fresh_start_in_a_run_refuses_and_overwrite_deletes_only_run_files(tmp_path):
    with claim(tmp_path, CONFIG, "fast_ppo"):
        (tmp_path / "metrics.csv").write_text("1,2\n")
        (tmp_path / "tb").mkdir()
        (tmp_path / "tb" / "events").write_text("x")
    refused("already holds a run .*--resume continues it, --overwrite", tmp_path, CONFIG, "fast_ppo")
    with claim(tmp_path, CONFIG, "fast_ppo", overwrite=True):
        assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", LOCK]
    (tmp_path / "notes.txt").write_text("mine")
    refused(r"files no trainer wrote \(notes.txt\)", tmp_path, CONFIG, "fast_ppo", overwrite=True)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (tmp_path / "config.json").is_file()


def test_a_resume_needs_a_run_and_a_matching_config(tmp_path):
    refused("nothing to resume: .* does not exist", tmp_path / "missing", CONFIG, "fast_ppo", resume=True)
    assert not (tmp_path / "missing").exists()
    refused("nothing to resume: .* holds no latest.pt", tmp_path, CONFIG, "fast_ppo", resume=True)
    with claim(tmp_path, CONFIG, "fast_ppo"):
        (tmp_path / "latest.pt").write_bytes(b"a checkpoint")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    wider = TrainConfig.from_dict(TINY | {"hidden": 32, "learning_rate": 1e-3})
    refused(r"hidden: 16 -> 32; learning_rate: 0.0003 -> 0.001 \(only ", tmp_path, wider, "fast_ppo", resume=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing touched
    longer = TrainConfig.from_dict(TINY | {"total_steps": 512, "max_minutes": 3.0, "eval_games": 8})
    with claim(tmp_path, longer, "fast_ppo", resume=True) as folder:
        assert folder.resuming
    assert json.loads((tmp_path / "config.json").read_text())["total_steps"] == 512  # config.json follows the run


def test_which_fields_may_change_on_resume():
    assert TrainConfig.resume_may_change == {
        "total_steps",
        "max_minutes",
        "eval_every_steps",
        "eval_games",
        "eval_opponents",
        "eval_endgames",
        "tensorboard",
    }
    saved = CONFIG.to_dict()
    assert resume_conflicts(TrainConfig.from_dict(TINY | {"eval_opponents": ["greedy"]}), saved) == []
    assert resume_conflicts(TrainConfig.from_dict(TINY | {"seed": 1, "env": {"draft": "pick"}}), saved) == [
        "env: {'draft': 'dealt'} -> {}",
        "seed: 0 -> 1",
    ]
    older = {k: v for k, v in saved.items() if k != "draft_share"}  # a field the run predates: its default
    assert resume_conflicts(CONFIG, older) == []
    assert resume_conflicts(CONFIG, saved | {"colour": 1}) == ["colour: unknown field 1"]


def _held_elsewhere(run: Path, entered: threading.Event, leave: threading.Event) -> None:
    """Another trainer (a thread of its own: the lock is on its own open file) holds ``run`` until ``leave``."""
    with claim(run, CONFIG, "selfplay_ppo"):
        entered.set()
        leave.wait(30)


def test_a_second_trainer_is_refused_while_the_first_holds_the_folder(tmp_path):
    run = tmp_path / "run"
    entered, leave = threading.Event(), threading.Event()
    first = threading.Thread(target=_held_elsewhere, args=(run, entered, leave))
    first.start()
    try:
        assert entered.wait(30)
        refused(rf"in use by selfplay_ppo \(pid {os.getpid()} on .*one trainer per run folder", run, CONFIG, "fast_ppo")
    finally:
        leave.set()
        first.join()
    with claim(run, CONFIG, "fast_ppo", overwrite=True):  # released: the next trainer takes the folder
        assert json.loads((run / LOCK).read_text())["trainer"] == "fast_ppo"


def test_a_lock_file_no_one_holds_is_taken_over_and_one_from_another_host_never(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    me = {"pid": os.getpid(), "host": socket.gethostname(), "trainer": "fast_ppo", "since": "now"}
    (run / LOCK).write_text(json.dumps(me | {"host": "elsewhere"}))
    refused("another host: if nothing runs there, delete", run, CONFIG, "fast_ppo")
    assert (run / LOCK).exists()  # left for its owner
    for left in (me | {"pid": dead_pid()}, me, "{not json"):  # a killed trainer's, even one naming this pid
        (run / LOCK).write_text(left if isinstance(left, str) else json.dumps(left))
        with claim(run, CONFIG, "fast_ppo", overwrite=True):
            assert json.loads((run / LOCK).read_text())["pid"] == os.getpid()
        assert not (run / LOCK).exists()
    err = capsys.readouterr().err
    assert err.count("taking over the lock of fast_ppo") == 2 and "taking over an unreadable lock" in err


def test_an_empty_lock_file_of_a_claimant_that_died_is_taken_at_once(tmp_path, capsys):
    (tmp_path / LOCK).write_text("")  # a claimant that died between creating and writing its lock
    with claim(tmp_path, CONFIG, "fast_ppo"):
        pass
    assert "taking over" not in capsys.readouterr().err and not (tmp_path / LOCK).exists()


def test_a_claim_never_locks_a_lock_file_its_holder_removed(tmp_path, monkeypatch):
    """The holder removes the lock file while it still holds it; a claimant that opened the old file before
    then and locks it after must lock the new one instead, or two trainers would hold the folder."""
    import training.run_folder as run_folder

    real, opened = run_folder._open_lock, []

    def opener(lock: Path) -> int:
        descriptor = real(lock)
        if not opened:  # the first file it opened goes away before it is locked: a new one takes its name
            lock.unlink()
            lock.write_text("")
        opened.append(os.fstat(descriptor).st_ino)
        return descriptor

    monkeypatch.setattr(run_folder, "_open_lock", opener)
    with claim(tmp_path, CONFIG, "fast_ppo"):
        assert len(opened) == 2 and os.stat(tmp_path / LOCK).st_ino == opened[1]
        assert json.loads((tmp_path / LOCK).read_text())["pid"] == os.getpid()


def test_bad_run_paths_are_refused(tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    refused("is a file, not a folder", file, CONFIG, "fast_ppo")
    refused("cannot create run folder", file / "run", CONFIG, "fast_ppo")
    refused("choose one", tmp_path, CONFIG, "fast_ppo", resume=True, overwrite=True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_an_unwritable_run_folder_is_refused(tmp_path):
    tmp_path.chmod(0o500)
    try:
        refused("cannot write to run folder", tmp_path, CONFIG, "fast_ppo")
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"max_minutes": -5}, "'max_minutes' must be at least 0"),
        ({"clip": float("nan")}, "'clip' must be a finite number"),
        ({"learning_rate": float("inf")}, "'learning_rate' must be a finite number"),
        ({"learning_rate": -1e-4}, "'learning_rate' must be above 0"),
        ({"learning_rate": 0}, "'learning_rate' must be above 0"),
        ({"entropy": -0.1}, "'entropy' must be at least 0"),
        ({"max_grad_norm": 0.0}, "'max_grad_norm' must be above 0"),
        ({"total_steps": 1.5}, "'total_steps' must be int, got 1.5"),
        ({"total_steps": 1e6}, "'total_steps' must be int"),
        ({"total_steps": "1e6"}, "'total_steps' must be int"),
        ({"num_games": True}, "'num_games' must be int, got True"),
        ({"clip": True}, "'clip' must be float, got True"),
        ({"clip": "0.2"}, "'clip' must be float"),
        ({"seed": -1}, "'seed' must be at least 0"),
        ({"eval_opponents": ["nobody"]}, "'eval_opponents': no agent named 'nobody'"),
        ({"eval_opponents": ["greedy", "greedy"]}, "names an agent twice"),
        ({"eval_opponents": [1]}, "'eval_opponents' must be a list of strings"),
        ({"eval_opponents": ["missing/run.pt"]}, "'eval_opponents': no checkpoint at missing/run.pt"),
        ({"env": {"draft": "sometimes"}}, "field 'env': "),
        ({"env": {"colour": 1}}, "field 'env': unknown config field"),
    ],
)
def test_bad_values_are_refused_at_load_time(change, message):
    with pytest.raises(TrainConfigError, match=message):
        TrainConfig.from_dict(TINY | change)


def test_rllib_configs_are_as_strict():
    with pytest.raises(TrainConfigError, match="'learning_rate' must be a finite number"):
        RLlibConfig.from_dict({"learning_rate": float("nan")})
    with pytest.raises(TrainConfigError, match="'eval_opponents': no agent named"):
        RLlibConfig.from_dict({"eval_opponents": ["nobody"]})
    with pytest.raises(TrainConfigError, match="'iterations' must be int"):
        RLlibConfig.from_dict({"iterations": 2.0})


def test_a_config_name_that_names_nothing_lists_the_configs():
    with pytest.raises(TrainConfigError, match=r"no training config named 'quik' \(configs/train holds .*\bquick\b"):
        TrainConfig.load("quik")


def cli(module: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd or root, capture_output=True, text=True, timeout=300
    )


@pytest.mark.e2e  # a fresh interpreter a refusal: make test-e2e
def test_the_command_lines_refuse_in_one_line_with_status_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(TINY) + "clip: .nan\n")
    file = tmp_path / "file"
    file.write_text("x")
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(TINY))
    cases = [
        ("training.fast_ppo", ["--config", str(bad)], "'clip' must be a finite number"),
        ("training.fast_ppo", ["--config", "quik"], "no training config named 'quik'"),
        ("training.fast_ppo", ["--config", str(good), "--run", str(file)], "is a file, not a folder"),
        ("training.fast_ppo", ["--config", str(good), "--run", str(tmp_path / "no"), "--resume"], "nothing to resume"),
        ("training.selfplay_ppo", ["--config", str(bad)], "'clip' must be a finite number"),
        ("training.selfplay_ppo", ["--config", str(good), "--run", str(file)], "is a file, not a folder"),
        ("training.rllib_selfplay", ["--config", str(tmp_path / "none.yaml")], "cannot read training config"),
        ("training.rllib_selfplay", ["--run", str(file)], "is a file, not a folder"),
    ]
    for module, args, message in cases:
        done = cli(module, *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (module, args, done.stderr)
        assert len(lines) == 1 and "error: " in lines[0] and message in lines[0], (module, args, done.stderr)
    done = cli("training.fast_ppo", "--resume", "--overwrite")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def finished_run(run: Path, **files: bytes) -> dict[str, bytes]:
    """A run folder as a finished (or stopped) run leaves it, without ``latest.pt``; its files by relative path."""
    with claim(run, CONFIG, "fast_ppo"):
        for name, content in files.items():
            (run / name).parent.mkdir(parents=True, exist_ok=True)
            (run / name).write_bytes(content)
    return {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "files, named",
    [
        (
            {"best.pt": b"the best weights", "metrics.csv": b"steps,a\n1,2\n", "tb/events.out.tfevents.1": b"e"},
            "best.pt, metrics.csv, TensorBoard events in tb/",
        ),
        ({"best.pt": b"the best weights"}, "best.pt"),
        ({"metrics.csv": b"steps,seconds\n256,1.0\n"}, "metrics.csv"),
        ({"tb/events.out.tfevents.1": b"events"}, "TensorBoard events in tb/"),
        ({"latest.zip": b"an sb3 checkpoint"}, "latest.zip"),
    ],
)
def test_a_resume_without_latest_never_starts_a_run_with_results_again(tmp_path, capsys, files, named):
    run = tmp_path / "run"
    before = finished_run(run, **files)
    message = rf"cannot resume .*holds no latest\.pt to continue from, but it holds {named}; .*--overwrite deletes"
    refused(message, run, CONFIG, "fast_ppo", resume=True)
    assert {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
    assert "starting it again" not in capsys.readouterr().err
    with claim(run, CONFIG, "fast_ppo", overwrite=True):  # what the message says works
        assert sorted(p.name for p in run.iterdir()) == ["config.json", LOCK]


def test_a_resume_still_starts_again_a_run_that_left_nothing_of_value(tmp_path, capsys):
    run = tmp_path / "run"
    finished_run(run, **{"metrics.csv": b"steps,seconds,measure\n", "tb/placeholder": b""})  # a header, no events
    with claim(run, CONFIG, "fast_ppo", resume=True) as folder:
        assert not folder.resuming and sorted(p.name for p in run.iterdir()) == ["config.json", LOCK]
    assert "starting it again" in capsys.readouterr().err


@pytest.mark.e2e  # a fresh trainer process (torch): make test-e2e; the claim itself is tested above
def test_the_trainer_command_refuses_to_resume_a_finished_run_without_latest(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(TINY))
    run = tmp_path / "run"
    before = finished_run(run, **{"best.pt": b"the best weights", "metrics.csv": b"steps,a\n1,2\n"})
    done = cli("training.fast_ppo", "--config", str(good), "--run", str(run), "--resume")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "holds no latest.pt to continue from, but it holds best.pt, metrics.csv" in lines[0]
    assert {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()} == before

"""Run-folder writes never go through a link, never leave a partial file, and fail in one line.

Each case here once did harm: ``*.tmp`` files planted as links were written through on
``--resume`` (a file outside the folder overwritten, ``config.json`` left a link pointing out);
a full disk during ``torch.save`` was a traceback that left a truncated ``latest.pt.tmp``; a full
disk while claiming left an empty ``run.lock`` that blocked the next start for 30 s; a lock naming
pid 2**70 was an ``OverflowError``; SIGTERM killed a trainer without a snapshot and without
releasing its lock; after a kill before the first checkpoint a plain start said "use --resume" and
``--resume`` said "start without it".
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from processes import reaped
from trainer_runs import PPO_ONE_UPDATE, saved_when_interrupted

from training.config import TrainConfig
from training.run_folder import LOCK, RunFolderError, claim
from trinity_env.agents.networks.ppo_network import PolicyNetwork, load_checkpoint, save_checkpoint
from trinity_env.core import writes
from trinity_env.core.errors import WriteError
from trinity_env.core.stops import signals_held, stops_handled_by

ROOT = Path(__file__).resolve().parent.parent
TINY = PPO_ONE_UPDATE
CONFIG = TrainConfig.from_dict(TINY)


def network(seed: int) -> PolicyNetwork:
    torch.manual_seed(seed)
    return PolicyNetwork(16, 1)


def same_weights(a: PolicyNetwork, b: PolicyNetwork) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


# ---------------------------------------------------------------- links


def test_a_planted_tmp_link_is_never_written_through(tmp_path, monkeypatch):
    """A link where the writer's temporary file goes is refused (``O_EXCL | O_NOFOLLOW``); one planted under the
    old shared name ``NAME.tmp`` is no writer's file and is left alone."""
    run, victim = tmp_path / "run", tmp_path / "victim.txt"
    run.mkdir()
    victim.write_text("precious")
    (run / "latest.pt.tmp").symlink_to(victim)
    save_checkpoint(run / "latest.pt", network(0))
    assert victim.read_text() == "precious" and (run / "latest.pt.tmp").is_symlink()
    planted = run / "best.pt.planted.tmp"
    planted.symlink_to(victim)
    monkeypatch.setattr(writes, "temporary_name", lambda path: planted)
    with pytest.raises(WriteError, match=r"best\.pt\.planted\.tmp is a symbolic link: refusing to write through it"):
        save_checkpoint(run / "best.pt", network(0))
    assert victim.read_text() == "precious" and not (run / "best.pt").exists()


def test_a_checkpoint_that_is_a_link_is_refused(tmp_path):
    victim = tmp_path / "victim.pt"
    save_checkpoint(victim, network(0))
    before = victim.read_bytes()
    (tmp_path / "latest.pt").symlink_to(victim)
    with pytest.raises(WriteError, match=r"latest\.pt is a symbolic link"):
        save_checkpoint(tmp_path / "latest.pt", network(1))
    assert victim.read_bytes() == before


@pytest.mark.parametrize("name", ["config.json.tmp", "config.json", "latest.pt.tmp", "metrics.csv", "tb", LOCK])
def test_a_resume_refuses_links_where_the_trainer_writes(tmp_path, name):
    run, victim = tmp_path / "run", tmp_path / "victim"
    with claim(run, CONFIG, "fast_ppo"):
        save_checkpoint(run / "latest.pt", network(0))
    victim.write_text("precious")
    (run / name).unlink(missing_ok=True)
    (run / name).symlink_to(victim)
    for resume in (True, False):
        with (
            pytest.raises(RunFolderError, match=rf"{re.escape(name)} is a symbolic link: a trainer never"),
            claim(run, CONFIG, "fast_ppo", resume=resume, overwrite=not resume),
        ):
            pass
    assert victim.read_text() == "precious" and (run / name).is_symlink()
    assert not (run / LOCK).exists() or (run / LOCK).is_symlink()


def test_a_leftover_of_a_dead_writer_is_removed_and_a_live_one_s_kept(tmp_path):
    """Crash leftovers are removed when their writer is dead, never while it lives (issue 50, class 6)."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    host = writes.temporary_name(tmp_path / "x").name.split(".")[-2].split("-")[0]
    leftover = tmp_path / f"latest.pt.{host}-{pid}-0123abcd.tmp"
    live = tmp_path / f"latest.pt.{host}-{os.getpid()}-0123abcd.tmp"
    for file in (leftover, live):
        file.write_bytes(b"half a checkpoint")
    save_checkpoint(tmp_path / "latest.pt", network(0))
    assert same_weights(load_checkpoint(tmp_path / "latest.pt")[0], network(0))
    assert writes.remove_leftovers(tmp_path) == [leftover]
    assert not leftover.exists() and live.exists()


# ---------------------------------------------------------------- a full disk


class FullDisk(io.RawIOBase):
    """A file that takes ``room`` bytes, then fails every write with ENOSPC."""

    def __init__(self, handle, room: int):
        self.handle, self.room = handle, room

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.handle.write(data)

    def fileno(self) -> int:
        return self.handle.fileno()

    def flush(self) -> None:
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()
        super().close()


def test_a_full_disk_leaves_the_last_good_checkpoint_loadable(tmp_path, monkeypatch):
    path = tmp_path / "latest.pt"
    save_checkpoint(path, network(0))
    real = os.fdopen
    monkeypatch.setattr(writes.os, "fdopen", lambda d, mode="r", *a, **k: FullDisk(real(d, mode, *a, **k), 4096))
    with pytest.raises(WriteError) as caught:
        save_checkpoint(path, network(1))
    assert str(caught.value) == f"cannot write {path}: No space left on device"  # torch's RuntimeError unwrapped
    monkeypatch.undo()
    assert same_weights(load_checkpoint(path)[0], network(0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.pt"]


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A real 64 KiB filesystem (root only): a genuine ENOSPC, not an injected one."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()[:80]}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_real_full_disk_during_a_save(tiny_tmpfs):
    path = tiny_tmpfs / "latest.pt"
    save_checkpoint(path, network(0))
    torch.manual_seed(1)
    with pytest.raises(WriteError, match=r"cannot write .*latest\.pt: No space left on device"):
        save_checkpoint(path, PolicyNetwork(64, 2))  # ~150 KB: does not fit
    assert sorted(p.name for p in tiny_tmpfs.iterdir()) == ["latest.pt"]
    assert same_weights(load_checkpoint(path)[0], network(0))


def test_a_full_disk_while_claiming_leaves_no_lock(tmp_path, monkeypatch):
    import training.run_folder as run_folder

    real = os.fdopen

    def fdopen(descriptor, mode="r", *args, **kwargs):
        handle = real(descriptor, mode, *args, **kwargs)
        if "w" in mode:
            handle.close()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return handle

    monkeypatch.setattr(run_folder.os, "fdopen", fdopen)
    with (
        pytest.raises(WriteError, match=rf"cannot write {tmp_path / LOCK}: No space left on device"),
        claim(tmp_path, CONFIG, "fast_ppo"),
    ):
        pass
    assert not (tmp_path / LOCK).exists()
    monkeypatch.undo()
    started = time.monotonic()
    with claim(tmp_path, CONFIG, "fast_ppo"):  # at once, not after the 30 s an abandoned empty lock waits
        pass
    assert time.monotonic() - started < 10


def test_a_config_json_not_written_is_a_write_error_and_status_1(tmp_path, monkeypatch, capsys):
    """A failed write is status 1 (docs/guide.md's table), not the 2 of bad input; the lock goes with it."""
    import argparse

    from training.session import run_command

    def full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writes.os, "fsync", full)
    with pytest.raises(WriteError, match=r"cannot write .*config\.json: No space left"), claim(tmp_path, CONFIG, "a"):
        pass

    def body(args: argparse.Namespace) -> None:
        with claim(tmp_path, CONFIG, "fast_ppo"):
            pass

    with pytest.raises(SystemExit) as stopped:
        run_command(argparse.ArgumentParser(prog="python -m training.fast_ppo"), body, [])
    assert stopped.value.code == 1
    assert "config.json: No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ---------------------------------------------------------------- locks and stops


@pytest.mark.parametrize("pid", [2**70, 2**31, -5, True, "12", 1.5])
def test_a_lock_naming_an_impossible_pid_is_stale(tmp_path, capsys, pid):
    import socket

    (tmp_path / LOCK).write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "trainer": "fast_ppo"}))
    with claim(tmp_path, CONFIG, "fast_ppo"):
        assert json.loads((tmp_path / LOCK).read_text())["pid"] == os.getpid()
    assert "taking over the lock of fast_ppo" in capsys.readouterr().err


def test_a_run_killed_before_its_first_checkpoint_starts_again_either_way(tmp_path, capsys):
    run = tmp_path / "run"
    with claim(run, CONFIG, "fast_ppo"):  # killed here: config.json, a stale metrics file, no checkpoint
        (run / "metrics.csv").write_text("")
    with pytest.raises(RunFolderError, match=r"already holds a run .*--resume continues it"), claim(run, CONFIG, "a"):
        pass
    with claim(run, CONFIG, "fast_ppo", resume=True) as folder:  # what the message says works
        assert not folder.resuming and sorted(p.name for p in run.iterdir()) == ["config.json", LOCK]
    assert "stopped before its first checkpoint: starting it again" in capsys.readouterr().err
    other = TrainConfig.from_dict(TINY | {"hidden": 32})  # still no checkpoint: a resume still checks the config
    with pytest.raises(RunFolderError, match=r"hidden: 16 -> 32"), claim(run, other, "fast_ppo", resume=True):
        pass
    empty = tmp_path / "empty"
    empty.mkdir()
    message = r"nothing to resume: .* holds no latest\.pt and no config\.json \(start the run without --resume\)"
    with pytest.raises(RunFolderError, match=message), claim(empty, CONFIG, "fast_ppo", resume=True):
        pass


def trainer(tmp_path: Path, config: dict, *extra: str) -> list[str]:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(TINY | config))
    return [
        sys.executable,
        "-m",
        "training.fast_ppo",
        "--config",
        str(config_file),
        "--run",
        str(tmp_path / "run"),
        *extra,
    ]


@pytest.mark.e2e  # a trainer process stopped by SIGTERM: make test-e2e
def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    """SIGTERM: a snapshot, the lock released, one line, exit 143; the run resumes."""
    command = trainer(tmp_path, {"total_steps": 10**8, "snapshot_every_steps": 256, "eval_every_steps": 10**7})
    run = tmp_path / "run"
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with reaped(process):
        deadline = time.monotonic() + 240
        while not (run / "latest.pt").is_file():
            assert time.monotonic() < deadline and process.poll() is None, "no checkpoint"
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, stderr
    saved_when_interrupted(run, stderr)


def test_signals_held_delivers_each_stop_after_the_block_to_the_handler_before_it():
    seen = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(("handler", signum)))
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            seen.append("block ends")
        assert seen == ["block ends", ("handler", signal.SIGTERM)]
        seen.clear()
        with signals_held():
            pass
        assert seen == []
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_handler_set_outside_python_is_left_in_place(monkeypatch):
    """``getsignal`` gives ``None`` for a handler set from C: it could not be put back, so none is installed (putting
    ``None`` back was a TypeError at the end of the block) and the block is told so."""
    real = signal.getsignal
    monkeypatch.setattr(signal, "getsignal", lambda signum: None if signum == signal.SIGTERM else real(signum))
    installed = []
    monkeypatch.setattr(signal, "signal", lambda signum, handler: installed.append(signum))
    with stops_handled_by(lambda signum, frame: None) as handled, signals_held():
        pass
    assert handled is False and installed == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_inside_an_sb3_save_waits_for_a_whole_file(tmp_path, monkeypatch, signum):
    """SB3 writes its zip with ``zipfile``: a stop that landed as a member was closed left that member open, and the
    zip's own close raised "Can't close the ZIP file while there is an open writing handle" in place of the stop
    (a CI run saw it in the dataset builder). Now the file is written whole, the old one replaced, then it stops."""
    import zipfile

    from sb3_contrib import MaskablePPO

    from training.selfplay_ppo import save_model
    from trinity_env.agents.loaders.sb3 import load_policy
    from trinity_env.cli.common import stop_on_signals
    from trinity_env.envs.single_agent import TrinityTowersEnv

    model = MaskablePPO("MlpPolicy", TrinityTowersEnv(), n_steps=16, batch_size=16, seed=0, device="cpu")
    path = tmp_path / "latest.zip"
    path.write_bytes(b"the previous checkpoint")
    real, signalled = zipfile._ZipWriteFile.close, []

    def close(handle):
        if not signalled:
            signalled.append(signum)
            os.kill(os.getpid(), signum)  # the stop's handler runs here, with the member still open
        return real(handle)

    monkeypatch.setattr(zipfile._ZipWriteFile, "close", close)
    with stop_on_signals() as stopped, pytest.raises(KeyboardInterrupt):
        save_model(model, path)
    monkeypatch.setattr(zipfile._ZipWriteFile, "close", real)
    assert stopped == [signum] and signalled == [signum]
    assert not list(tmp_path.glob("latest.zip.*tmp"))
    loaded = load_policy(path).state_dict()  # the weights-only reader: every member whole
    for name, tensor in model.policy.state_dict().items():
        assert torch.equal(loaded[name], tensor)


def test_a_write_error_in_a_run_is_one_line_and_exit_1(tmp_path):
    """A run whose checkpoint cannot be written (a link planted in its way) stops with one line, status 1."""
    victim = tmp_path / "victim"
    victim.write_text("precious")
    command = trainer(tmp_path, {"total_steps": 256, "snapshot_every_steps": 256, "eval_every_steps": 256})
    run = tmp_path / "run"
    script = (
        "import os, sys, runpy, training.fast_ppo as m\n"
        "real = m.save_checkpoint\n"
        f"def planted(path, *a, **k):\n    os.symlink({str(victim)!r}, str(path))\n    real(path, *a, **k)\n"
        "m.save_checkpoint = planted\n"
        "sys.argv = ['python -m training.fast_ppo'] + sys.argv[1:]\nm.main(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *command[3:]], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line or "Traceback" in line]
    assert len(errors) == 1 and "python -m training.fast_ppo: error: " in errors[0], done.stderr
    assert errors[0].endswith("a symbolic link: refusing to write through it (remove it) (the last checkpoint is kept)")
    assert victim.read_text() == "precious" and not (run / LOCK).exists()

"""``trinity --version``, and ``trinity train``'s errors named after it (issue 40)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from trinity_env.cli import main


def _one_line(capsys, command: str) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith(f"trinity {command}: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "usage:" not in err
    return err


# ---------------------------------------------------------------------- --version


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"trinity {importlib.metadata.version('trinity-towers')}\n"


def test_python_m_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "trinity_env.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("trinity "), done.stderr


def test_a_bad_training_config_name_lists_the_shipped_ones_before_any_trainer_loads(capsys):
    """It used to be ``python -m training.fast_ppo: error: ...``, and only once torch had loaded."""
    assert main(["train", "nope"]) == 2
    err = _one_line(capsys, "train")
    assert "no training config named 'nope'" in err and "az-quick, az-standard, quick, rllib, standard" in err


def test_the_trainer_s_own_errors_start_with_trinity_train(tmp_path, capsys):
    """The trainer's command line names itself after ``trinity train`` (it said ``python -m training.fast_ppo``)."""
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as stop:
        main(["train", "quick", "--run", str(tmp_path / "none"), "--resume"])
    assert stop.value.code == 2
    err = _one_line(capsys, "train")
    assert "nothing to resume" in err
    assert not (tmp_path / "none").exists()

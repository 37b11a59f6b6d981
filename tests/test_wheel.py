"""An installed user can train: the wheel carries the trainers and their configs, and they run from it.

The wheel is built from this checkout and unpacked into a folder that goes first on
``PYTHONPATH``, so the subprocess imports ``trinity_env`` and ``training`` (the trainers' one
import name, in a checkout and an install alike) from the wheel's files, not from the
checkout; it runs from a folder without ``training/`` or ``configs/`` in reach.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e  # builds the wheel and trains from it: make test-e2e

ROOT = Path(__file__).resolve().parent.parent
TINY = {
    "total_steps": 512,
    "num_games": 16,
    "rollout_steps": 16,
    "snapshot_every": 256,
    "eval_every_steps": 512,
    "eval_games": 2,
    "eval_opponents": ["random"],
    "eval_endgames": False,
    "tensorboard": False,
    "hidden": 16,
    "layers": 1,
}


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(out.glob("trinity_towers-*.whl"))
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def _run_from_wheel(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(site)}
    code = "import sys; from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_wheel_carries_the_trainers_and_their_configs(unpacked_wheel):
    package = unpacked_wheel / "trinity_env"
    trainers = ("fast_ppo", "alphazero", "az_config", "az_selfplay", "az_learner", "replay_buffer", "selfplay_ppo")
    for name in (*trainers, "config", "evaluation", "run_folder", "session", "skeleton"):
        assert (unpacked_wheel / "training" / f"{name}.py").is_file(), name
    for config in ("quick", "standard", "az-quick", "az-standard"):
        assert (package / "configs" / "train" / f"{config}.yaml").is_file(), config
    assert not (package / "training").exists(), "one import name for the trainers: training"


def test_trinity_train_runs_a_config_from_the_wheel(unpacked_wheel, tmp_path):
    check = _run_from_wheel(unpacked_wheel, tmp_path, "train", "quick", "--help")
    assert check.returncode == 0, check.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import training.fast_ppo as m; print(m.__file__)"],
        cwd=tmp_path,
        env=os.environ | {"PYTHONPATH": str(unpacked_wheel)},
        capture_output=True,
        text=True,
    )
    assert probe.returncode == 0 and str(unpacked_wheel) in probe.stdout, probe.stderr
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    result = _run_from_wheel(unpacked_wheel, tmp_path, "train", str(config), "--run", "runs/tiny")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "runs" / "tiny" / "best.pt").is_file()
    assert "after 512 learner steps" in result.stdout
    again = _run_from_wheel(unpacked_wheel, tmp_path, "train", str(config), "--run", "runs/tiny")
    assert again.returncode == 2 and "--overwrite" in again.stderr and again.stderr.count("\n") == 1

"""An installed user can train: the wheel carries the trainers and their configs, and they run from it; and it adds
no top-level name a lab's own code could have.

The wheel is built from this checkout and unpacked into a folder that goes first on
``PYTHONPATH``, so the subprocess imports ``trinity_env`` and ``trinity_training`` (the trainers, a checkout's
``training/``) from the wheel's files, not from the checkout; it runs from a folder without the checkout's
``training/`` or ``configs/`` in reach, or from a lab's folder holding a ``training/`` package of its own.
"""

from __future__ import annotations

import json
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
    "snapshot_every_steps": 256,
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
        assert (unpacked_wheel / "trinity_training" / f"{name}.py").is_file(), name
    for config in ("quick", "standard", "az-quick", "az-standard"):
        assert (package / "configs" / "train" / f"{config}.yaml").is_file(), config
    assert (package / "evaluation" / "exploit.py").is_file(), "the exploitability tool is the package's"
    assert not (package / "training").exists(), "one import name for the trainers: trinity_training"


def test_the_wheel_adds_no_top_level_name_a_lab_could_have(unpacked_wheel):
    names = {path.name for path in unpacked_wheel.iterdir() if not path.name.endswith(".dist-info")}
    assert names == {"trinity_env", "trinity_training"}, "no training, benchmarks or scripts"


def test_the_wheel_beside_a_lab_s_own_training_package_computes_an_exploitability(unpacked_wheel, tmp_path):
    from pools import small_pools

    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "__init__.py").write_text("LAB = True\n", encoding="utf-8")
    files = {draft: str(path) for draft, path in small_pools(tmp_path).items()}
    code = f"""
import json
from pathlib import Path

import training
from trinity_env import scorecard
from trinity_env.evaluation import anchored

assert training.LAB, "the lab's own package"
anchored.POOL_FILES = {{draft: Path(path) for draft, path in {files!r}.items()}}
tiny = scorecard.Protocol("tiny", rating_games=2, accuracy_per_count=1, puzzles=1)
card = scorecard.benchmark("greedy", tiny, workers=1, exploit_steps=1)
print(json.dumps(card.to_json()["exploitability"]))
"""
    env = os.environ | {"PYTHONPATH": str(unpacked_wheel)}
    ran = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr[-2000:]
    found = json.loads(ran.stdout.splitlines()[-1])
    assert found["steps"] >= 1 and found["games"] == 400, found
    probe = "from trinity_env.cli.common import trainers; print(trainers().__name__)"
    trainers = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert trainers.stdout.split() == ["trinity_training"], trainers.stderr  # the wheel's, not the lab's training


def test_trinity_train_runs_a_config_from_the_wheel(unpacked_wheel, tmp_path):
    check = _run_from_wheel(unpacked_wheel, tmp_path, "train", "quick", "--help")
    assert check.returncode == 0, check.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import trinity_training.fast_ppo as m; print(m.__file__)"],
        cwd=tmp_path,
        env=os.environ | {"PYTHONPATH": str(unpacked_wheel)},
        capture_output=True,
        text=True,
    )
    assert probe.returncode == 0 and str(unpacked_wheel) in probe.stdout, probe.stderr
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({"trainer": "ppo"} | TINY))
    result = _run_from_wheel(unpacked_wheel, tmp_path, "train", str(config), "--run", "runs/tiny")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "runs" / "tiny" / "best.pt").is_file()
    assert "after 512 learner steps" in result.stdout
    again = _run_from_wheel(unpacked_wheel, tmp_path, "train", str(config), "--run", "runs/tiny")
    assert again.returncode == 2 and "--overwrite" in again.stderr and again.stderr.count("\n") == 1

"""How often a trainer evaluates is named with its unit: ``eval_every_steps`` (PPO: learner steps), ``eval_every_games``
(AlphaZero: self-play games), ``eval_every_iterations`` (RLlib). The old key ``eval_every`` (one name, three units) is
refused in one line naming the new key: in a YAML file, a mapping, a keyword, and a run's ``config.json`` on resume.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from training.az_config import AZConfig
from training.config import TrainConfig, TrainConfigError
from training.evaluation import RunLog
from training.rllib_selfplay import RLlibConfig
from training.run_folder import RunFolderError, claim

ROOT = Path(__file__).resolve().parent.parent
NEW = {TrainConfig: "eval_every_steps", AZConfig: "eval_every_games", RLlibConfig: "eval_every_iterations"}
SHIPPED = {TrainConfig: "quick", AZConfig: "az-quick", RLlibConfig: "rllib"}


@pytest.mark.parametrize("config", NEW, ids=lambda c: c.__name__)
def test_each_trainer_names_its_evaluation_interval_with_its_unit(config):
    names = set(config().to_dict())
    assert NEW[config] in names and "eval_every" not in names
    assert NEW[config] in config.resume_may_change  # what is measured may change on resume, as before
    assert config.from_dict({NEW[config]: 7}).to_dict()[NEW[config]] == 7


@pytest.mark.parametrize("config", NEW, ids=lambda c: c.__name__)
def test_the_old_key_eval_every_is_refused_in_one_line_naming_the_new_one(config, tmp_path):
    old = tmp_path / "old.yaml"
    old.write_text("seed: 0\neval_every: 8\n")
    hint = rf"field 'eval_every' is an older version's name: rename it '{NEW[config]}'"
    loads = (
        lambda: config.load(old),
        lambda: config.load(old, **{NEW[config]: 8}),
        lambda: config.from_dict({"eval_every": 8}),
        lambda: config.from_dict({NEW[config]: 8, "eval_every": 8}),
        lambda: config.load(SHIPPED[config], eval_every=8),
    )
    for load in loads:
        with pytest.raises(TrainConfigError, match=hint) as error:
            load()
        assert "\n" not in str(error.value)


@pytest.mark.parametrize(("config", "trainer"), [(TrainConfig, "fast_ppo"), (AZConfig, "alphazero")])
def test_resuming_a_run_whose_config_json_says_eval_every_is_refused_in_one_line(config, trainer, tmp_path):
    """A run folder written before the rename (0.x: no silent translation) is refused before anything is read."""
    run = tmp_path / "run"
    run.mkdir()
    saved = {("eval_every" if name == NEW[config] else name): value for name, value in config().to_dict().items()}
    (run / "config.json").write_text(json.dumps(saved, indent=1) + "\n")
    with pytest.raises(RunFolderError) as error, claim(run, config(), trainer, resume=True):
        pass
    message = str(error.value)
    assert "\n" not in message and f"cannot resume {run}: config.json: field 'eval_every'" in message
    assert f"rename it '{NEW[config]}'" in message
    assert json.loads((run / "config.json").read_text()) == saved  # untouched


def test_the_alphazero_command_line_refuses_an_old_run_with_one_line_and_status_2(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    saved = {
        ("eval_every" if name == "eval_every_games" else name): value for name, value in AZConfig().to_dict().items()
    }
    (run / "config.json").write_text(json.dumps(saved))
    command = [sys.executable, "-m", "training.alphazero", "--config", "az-quick", "--run", str(run), "--resume"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "rename it 'eval_every_games'" in done.stderr


def test_metrics_csv_is_rewritten_on_resume_from_the_history_s_own_unit(tmp_path):
    """An AlphaZero history row holds ``games`` (no ``steps`` copy of it): resuming rewrites ``metrics.csv`` from it."""
    history = [{"games": 8, "learner_steps": 3, "seconds": 1.25, "results": {"random": (0.5, 0.25, 0.75)}}]
    RunLog(tmp_path, tensorboard=False, resume_from=(8, history), unit="games").close()
    lines = (tmp_path / "metrics.csv").read_text().splitlines()
    assert lines == ["games,seconds,measure,rate,low,high", "8,1.2,random,0.5,0.25,0.75"]


UNITS = ("_steps", "_games", "_iterations", "_updates")


@pytest.mark.parametrize("config", NEW, ids=lambda c: c.__name__)
def test_every_interval_field_names_its_unit(config):
    intervals = [name for name in config().to_dict() if "_every" in name]
    assert intervals and all(name.endswith(UNITS) for name in intervals), intervals


@pytest.mark.parametrize(
    ("config", "old", "new"),
    [
        (TrainConfig, "snapshot_every", "snapshot_every_steps"),
        (RLlibConfig, "snapshot_every", "snapshot_every_iterations"),
        (RLlibConfig, "max_league", "pool_size"),
        (AZConfig, "checkpoint_every", "checkpoint_every_iterations"),
        (AZConfig, "search", "mode"),
    ],
)
def test_a_renamed_field_is_refused_in_one_line_naming_its_name_now(config, old, new, tmp_path):
    """``snapshot_every`` counted steps in PPO and iterations in RLlib; RLlib's ``max_league`` is PPO's
    ``pool_size``; AlphaZero's ``checkpoint_every`` counted iterations, and its ``search`` is the az spec's ``mode``."""
    assert new in config().to_dict() and old not in config().to_dict()
    written = tmp_path / "old.yaml"
    written.write_text(f"seed: 0\n{old}: 8\n")
    for load in (lambda: config.load(written), lambda: config.from_dict({old: 8})):
        with pytest.raises(TrainConfigError, match=rf"field '{old}' is an older version's name: rename it '{new}'"):
            load()

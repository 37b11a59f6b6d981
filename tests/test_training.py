"""Training smoke tests: train, checkpoint, resume, evaluate; reproducible; bad files refused."""

from __future__ import annotations

import pytest
import torch

from training.config import TrainConfig, TrainConfigError
from training.fast_ppo import train
from training.report import write_report
from trinity_env.agents import make
from trinity_env.agents.policy import CheckpointError, PolicyNetwork, load_checkpoint
from trinity_env.envs import make_config
from trinity_env.evaluation.match import play_game

TINY = {
    "total_steps": 1024,
    "num_games": 16,
    "rollout_steps": 16,
    "snapshot_every": 256,
    "eval_every": 512,
    "eval_games": 4,
    "hidden": 32,
    "env": {"draft": "random"},
}


def test_train_checkpoints_evaluates_and_reports(tmp_path):
    config = TrainConfig.from_dict(TINY)
    history = train(config, tmp_path, progress=False)
    assert [h["steps"] for h in history] == [512, 1024]
    assert set(history[-1]["results"]) == {"random", "greedy", "endgames"}
    assert list((tmp_path / "tb").glob("events.out.tfevents.*"))
    for name in ("best.pt", "latest.pt", "metrics.csv", "config.json"):
        assert (tmp_path / name).is_file()
    report = write_report(tmp_path, history, "tiny")
    assert "| vs random |" in report.read_text() and "| endgame suite |" in report.read_text() and (tmp_path / "win_rate.png").is_file()
    agent = make(str(tmp_path))  # a run folder names its best policy
    assert make(str(tmp_path / "best")).network is not None  # so does RUN/best, as in `trinity play --opponent`
    final = play_game((agent, make("random")), make_config(draft="random"), seed=1)
    assert final.is_over


def test_runs_are_reproducible_and_resumable(tmp_path):
    config = TrainConfig.from_dict(TINY)
    first = train(config, tmp_path / "a", progress=False)
    second = train(config, tmp_path / "b", progress=False)
    weights_a, _ = load_checkpoint(tmp_path / "a" / "latest.pt")
    weights_b, _ = load_checkpoint(tmp_path / "b" / "latest.pt")
    assert [(h["steps"], h["results"]) for h in first] == [(h["steps"], h["results"]) for h in second]
    assert all(torch.equal(x, y) for x, y in zip(weights_a.state_dict().values(), weights_b.state_dict().values()))
    # stop half way, then resume to the end
    half = TrainConfig.from_dict(TINY | {"total_steps": 512})
    train(half, tmp_path / "c", progress=False)
    resumed = train(config, tmp_path / "c", resume=True, progress=False)
    assert [h["steps"] for h in resumed] == [512, 1024]
    _, payload = load_checkpoint(tmp_path / "c" / "latest.pt")
    assert payload["steps"] == 1024 and payload["optimizer"]["state"]


def test_corrupt_or_mismatched_checkpoints_are_refused(tmp_path):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match=r"garbage\.pt"):
        load_checkpoint(garbage)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        make(str(tmp_path / "missing.pt"))
    other = tmp_path / "other.pt"
    torch.save({"format": "trinity-towers-policy", "hidden": 64, "layers": 2,
                "model": PolicyNetwork(32, 2).state_dict()}, other)  # fmt: skip
    with pytest.raises(CheckpointError, match="does not match"):
        load_checkpoint(other)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(CheckpointError, match="not a trinity-towers policy"):
        load_checkpoint(foreign)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": 1}, "unknown field"),
        ({"num_games": "many"}, "'num_games' must be int"),
        ({"p_latest": 1.5}, "'p_latest'"),
        ({"p_latest": 0.7, "p_random": 0.5}, "at most 1"),
        ({"total_steps": 0}, "'total_steps' must be at least 1"),
    ],
)
def test_bad_training_configs_name_the_field(change, message):
    with pytest.raises(TrainConfigError, match=message):
        TrainConfig.from_dict(TINY | change)


def test_the_shipped_configs_load():
    assert TrainConfig.load("quick").max_minutes > 0


def test_the_command_line_trains_and_reports_the_kept_checkpoint(tmp_path, capsys):
    import yaml

    from training.fast_ppo import main

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    main(["--config", str(config), "--run", str(tmp_path / "run")])
    printed = capsys.readouterr().out
    assert "best.pt (from step" in printed and "vs greedy" in printed
    report = (tmp_path / "run" / "report.md").read_text()
    assert "The kept checkpoint, `best.pt`" in report


def test_selfplay_ppo_trains_checkpoints_resumes_and_evaluates(tmp_path):
    from sb3_contrib import MaskablePPO

    from training import selfplay_ppo

    config = TrainConfig.from_dict(TINY | {"total_steps": 1024, "snapshot_every": 256, "eval_every": 512})
    history = selfplay_ppo.train(config, tmp_path, progress=False)
    assert [h["steps"] for h in history] == [512, 1024]
    assert {"random", "greedy", "endgames"} == set(history[-1]["results"])
    assert list((tmp_path / "tb").glob("*/events.out.tfevents.*"))
    for name in ("best.zip", "latest.zip", "metrics.csv"):
        assert (tmp_path / name).is_file()
    longer = TrainConfig.from_dict(TINY | {"total_steps": 1536, "snapshot_every": 256, "eval_every": 512})
    resumed = selfplay_ppo.train(longer, tmp_path, resume=True, progress=False)
    assert resumed[-1]["steps"] >= 1536
    assert MaskablePPO.load(tmp_path / "latest.zip").num_timesteps >= 1536

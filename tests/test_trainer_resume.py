"""A resumed fast_ppo run is the uninterrupted run: same weights bit for bit, same metrics.csv rows.

Stopped at a snapshot (``stop_at``, as ``max_minutes`` stops) or by Ctrl-C at any moment, then
resumed; and a second trainer on a running run's folder is refused.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from processes import reaped
from trainer_runs import PPO_FOUR_UPDATES, saved_when_interrupted

from training.config import TrainConfig
from training.env_state import env_state, load_env_state
from training.fast_ppo import train
from trinity_env.agents.networks.ppo_network import CheckpointError, load_checkpoint
from trinity_env.fast.vector_env import TrinityTowersVectorEnv

ROOT = Path(__file__).resolve().parent.parent
TINY = PPO_FOUR_UPDATES | {
    "total_steps": 1536,
    "eval_endgames": False,
    "anneal_lr": True,
    "p_latest": 0.3,  # the rest of the pool: past snapshots
    "env": {"draft": "dealt", "reward": "margin"},
}


def rows(run: Path) -> list[list[str]]:
    """``metrics.csv`` without its wall-clock column."""
    with (run / "metrics.csv").open() as handle:
        return [row[:1] + row[2:] for row in csv.reader(handle)]


def assert_same_run(a: Path, b: Path) -> None:
    network_a, latest_a = load_checkpoint(a / "latest.pt")
    network_b, latest_b = load_checkpoint(b / "latest.pt")
    assert latest_a["steps"] == latest_b["steps"]
    for x, y in zip(network_a.state_dict().values(), network_b.state_dict().values(), strict=True):
        assert torch.equal(x, y)
    moments_a, moments_b = latest_a["optimizer"]["state"], latest_b["optimizer"]["state"]
    assert all(torch.equal(moments_a[k]["exp_avg_sq"], moments_b[k]["exp_avg_sq"]) for k in moments_a)
    assert latest_a["pool"]["rng"] == latest_b["pool"]["rng"] and len(latest_a["pool"]["snapshots"]) > 2
    assert torch.equal(latest_a["torch_rng"], latest_b["torch_rng"])
    best_a, best_b = load_checkpoint(a / "best.pt"), load_checkpoint(b / "best.pt")
    assert best_a[1]["steps"] == best_b[1]["steps"]
    assert all(torch.equal(x, y) for x, y in zip(best_a[0].state_dict().values(), best_b[0].state_dict().values()))
    assert rows(a) == rows(b)


def test_a_run_stopped_at_a_snapshot_and_resumed_is_the_uninterrupted_run(tmp_path):
    config = TrainConfig.from_dict(TINY)
    started = time.perf_counter()
    whole = train(config, tmp_path / "whole", progress=False)
    assert whole[-1]["seconds"] <= time.perf_counter() - started  # the time column is training time
    started = time.perf_counter()
    stopped = train(config, tmp_path / "parts", progress=False, stop_at=768)  # a snapshot, between evaluations
    assert [h["steps"] for h in stopped] == [512, 768]  # measured where it stopped, for its report
    _, payload = load_checkpoint(tmp_path / "parts" / "latest.pt")
    assert payload["steps"] == 768 and payload["seconds"] > 0
    resumed = train(config, tmp_path / "parts", resume=True, progress=False)
    assert [(h["steps"], h["results"]) for h in resumed] == [(h["steps"], h["results"]) for h in whole]
    assert [h["steps"] for h in whole] == [512, 1024, 1536]
    assert_same_run(tmp_path / "whole", tmp_path / "parts")  # the stop's extra row is gone from metrics.csv
    seconds = [h["seconds"] for h in resumed]
    assert seconds == sorted(seconds) and seconds[1] >= payload["seconds"]  # the clock carries on
    assert seconds[-1] <= time.perf_counter() - started  # counted once: both sessions, no more


def test_the_env_state_round_trips_and_refuses_a_changed_engine():
    a = TrinityTowersVectorEnv(8, opponent="random", autoreset_mode="same_step", draft="dealt", reward="margin")
    a.reset(seed=3)
    moves = np.random.default_rng(0)

    def play(env, steps):
        out = []
        for _ in range(steps):
            masks = env.action_masks()
            actions = (moves.random(masks.shape) * masks).argmax(1)
            observations, rewards, done, _, _ = env.step(actions)
            out.append((observations.copy(), rewards.copy(), done.copy()))
        return out

    play(a, 5)
    saved = env_state(a)
    b = TrinityTowersVectorEnv(8, opponent="random", autoreset_mode="same_step", draft="dealt", reward="margin")
    load_env_state(b, saved)
    state = moves.bit_generator.state
    after_a = play(a, 20)
    moves.bit_generator.state = state
    after_b = play(b, 20)
    assert all(np.array_equal(x, y) for s, t in zip(after_a, after_b) for x, y in zip(s, t))
    saved["games"]["extra_rng"] = saved["games"][next(iter(saved["games"]))]
    with pytest.raises(CheckpointError, match=r"the games changed since this checkpoint \(attributes \['extra_rng'"):
        load_env_state(b, saved)


@pytest.mark.e2e  # a long resume: make test-e2e
def test_ctrl_c_saves_and_the_resumed_run_is_the_uninterrupted_run(tmp_path):
    """Ctrl-C at whatever moment it lands: exit 130 with one line; a second trainer is refused meanwhile."""
    long = TINY | {"total_steps": 10**8, "anneal_lr": False, "eval_games": 2}
    config_file = tmp_path / "long.yaml"
    config_file.write_text(yaml.safe_dump(long))
    run = tmp_path / "run"
    command = [sys.executable, "-m", "training.fast_ppo", "--config", str(config_file), "--run", str(run)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with reaped(process):
        deadline = time.monotonic() + 240
        while not ((run / "latest.pt").is_file() and load_checkpoint(run / "latest.pt")[1]["steps"] >= 512):
            assert time.monotonic() < deadline and process.poll() is None, "no checkpoint past 512 steps"
            time.sleep(0.2)
        for extra in ([], ["--resume"]):
            second = subprocess.run(command + extra, cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert second.returncode == 2 and len(second.stderr.strip().splitlines()) == 1
            assert f"is in use by fast_ppo (pid {process.pid}" in second.stderr
        asked = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert time.monotonic() - asked < 60  # an update or less (a few seconds), on a loaded machine
    saved = saved_when_interrupted(run, stderr)
    end = TrainConfig.from_dict(long | {"total_steps": saved + 512})
    train(end, run, resume=True, progress=False)
    train(end, tmp_path / "whole", progress=False)
    assert_same_run(run, tmp_path / "whole")
    assert os.path.getsize(run / "metrics.csv") > 0


def test_a_checkpoint_from_before_exact_resumes_is_refused_in_one_line(tmp_path):
    """Its games were not saved, so the run cannot go on as it would have: refused, not continued on new games."""
    from trinity_env.agents.networks.ppo_network import CheckpointError, save_checkpoint

    config = TrainConfig.from_dict(TINY | {"total_steps": 768})
    train(config, tmp_path, progress=False, stop_at=512)
    network, payload = load_checkpoint(tmp_path / "latest.pt")
    legacy = {key: payload[key] for key in ("steps", "optimizer", "torch_rng", "history", "best")}
    legacy |= {"pool": payload["pool"]["snapshots"], "rng": payload["pool"]["rng"]}  # the old layout
    save_checkpoint(tmp_path / "latest.pt", network, legacy)
    with pytest.raises(CheckpointError, match=r"predates exact resumes .*: start the run again") as error:
        train(config, tmp_path, resume=True, progress=False)
    assert "\n" not in str(error.value)

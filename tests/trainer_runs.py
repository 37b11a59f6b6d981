"""Trainer runs in tests: tiny configs, as the dicts ``from_dict`` takes (each run takes seconds; a test file that
needs other values merges its own over one, ``PPO_FOUR_UPDATES | {...}``), and what an interrupted run leaves."""

from __future__ import annotations

from pathlib import Path

from training.run_folder import LOCK
from trinity_env.agents.networks.ppo_network import load_checkpoint

_PPO = {"num_games": 16, "rollout_steps": 16, "tensorboard": False, "env": {"draft": "dealt"}}  # 256 steps an update

PPO_ONE_UPDATE = _PPO | {"total_steps": 256, "hidden": 16, "eval_games": 2, "eval_endgames": False}
"""PPO (``training.config.TrainConfig``): one update, one evaluation of two games at the end."""

PPO_FOUR_UPDATES = _PPO | {
    "total_steps": 1024,
    "snapshot_every_steps": 256,
    "eval_every_steps": 512,
    "eval_games": 4,
    "hidden": 32,
}
"""PPO: four updates, a snapshot after each and an evaluation of four games after every second one."""

AZ_TWO_ITERATIONS = {
    "seed": 3,
    "total_games": 16,
    "games_per_iteration": 8,
    "simulations": 4,
    "max_considered": 4,
    "hidden": 16,
    "layers": 1,
    "batch_size": 16,
    "replay_size": 400,
    "solver_empty": 4,
    "checkpoint_every_iterations": 1,
    "eval_every_games": 8,
    "eval_games": 2,
    "eval_simulations": 2,
    "eval_opponents": ["random"],
    "eval_endgames": False,
    "tensorboard": False,
}
"""AlphaZero (``training.az_config.AZConfig``): two iterations of eight self-play games, each evaluated."""


def saved_when_interrupted(run: Path, stderr: str) -> int:
    """The step an interrupted ``python -m training.fast_ppo`` run saved at, after checking that its last line says
    so with how to resume, and that the run folder is no longer locked."""
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("python -m training.fast_ppo: interrupted: saved ") and "--resume continues" in last
    assert not (run / LOCK).exists()
    steps = int(load_checkpoint(run / "latest.pt")[1]["steps"])
    assert f"at step {steps:,};" in last
    return steps

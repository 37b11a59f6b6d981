"""sb3-contrib MaskablePPO self-play on the single-agent env, with an opponent pool.

Read it top to bottom: the agents that wrap SB3 policies, the pool, the callback that
snapshots, evaluates and checkpoints, then ``train``. The learner's seat is random each
episode and the opponent moves inside the env (``TrinityTowersEnv``), drawn per episode
from the pool: the latest snapshot, a past one, greedy or random — the same mix and the
same evaluation as ``fast_ppo``, from the same configs. Checkpoints are SB3 zip files.

Usage: python -m training.selfplay_ppo --config quick --run runs/sb3 [--resume]
"""

from __future__ import annotations

import argparse
import copy
import time
import warnings
from pathlib import Path

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from training.config import TrainConfig
from training.evaluation import RunLog, evaluate_agent, selection_score
from training.report import format_results, write_report
from trinity_env.agents.base import Agent, Observation, RandomAgent
from trinity_env.agents.baselines import GreedyAgent
from trinity_env.agents.sb3 import SB3PolicyAgent
from trinity_env.core import GameState
from trinity_env.envs.single_agent import TrinityTowersEnv


class PoolOpponent(Agent):
    """The env's opponent: a new one drawn from the pool at every episode (``reset``)."""

    name = "pool"

    def __init__(self, config: TrainConfig, seed: int):
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.latest: SB3PolicyAgent | None = None
        self.past: list[SB3PolicyAgent] = []
        self.random, self.greedy = RandomAgent(seed), GreedyAgent()
        self.current: Agent = self.random

    def add_snapshot(self, policy) -> None:
        if self.latest is not None:
            self.past = [*self.past, self.latest][-self.config.pool_size :]
        self.latest = SB3PolicyAgent(copy.deepcopy(policy), sample=True)

    def reset(self, seed: int | None = None) -> None:
        c, draw = self.config, self.rng.random()
        if draw < c.p_random or self.latest is None:
            self.current = self.random
        elif draw < c.p_random + c.p_greedy:
            self.current = self.greedy
        elif draw < c.p_random + c.p_greedy + c.p_latest or not self.past:
            self.current = self.latest
        else:
            self.current = self.past[int(self.rng.integers(len(self.past)))]
        self.current.reset(seed)

    def act(self, observation: Observation, state: GameState | None = None) -> int:
        return self.current.act(observation, state)


class SelfPlayCallback(BaseCallback):
    """Snapshots into the pool, evaluations to ``metrics.csv``, ``latest.zip`` and ``best.zip``."""

    def __init__(self, config: TrainConfig, pool: PoolOpponent, run: Path, started: float, progress: bool):
        super().__init__()
        self.config, self.pool, self.run, self.started = config, pool, run, started
        self.log = RunLog(run, tensorboard=False)  # SB3 writes its own TensorBoard events (tensorboard_log)
        self.history: list[dict] = []
        self.best = -1.0
        self.bar = tqdm(total=config.total_steps, disable=not progress, desc="selfplay_ppo", unit="step")

    def _on_training_start(self) -> None:
        self.next_snapshot = (self.num_timesteps // self.config.snapshot_every + 1) * self.config.snapshot_every
        self.next_eval = (self.num_timesteps // self.config.eval_every + 1) * self.config.eval_every

    def _on_training_end(self) -> None:
        self.bar.close()

    def close(self) -> None:
        self.log.close()

    def _on_step(self) -> bool:
        self.bar.update(self.num_timesteps - self.bar.n)
        if self.num_timesteps >= self.next_snapshot:
            self.pool.add_snapshot(self.model.policy)
            self.model.save(self.run / "latest.zip")
            self.next_snapshot += self.config.snapshot_every
        if self.num_timesteps >= self.next_eval:
            self.evaluate()
            self.next_eval += self.config.eval_every
        limit = self.config.max_minutes
        return not (limit and time.perf_counter() - self.started > 60 * limit)

    def evaluate(self) -> None:
        results = evaluate_agent(SB3PolicyAgent(self.model.policy), self.config, seed=10_000_000 + self.num_timesteps)
        seconds = time.perf_counter() - self.started
        self.log.results(self.num_timesteps, seconds, results)
        for spec, (rate, _, _) in results.items():
            self.logger.record(f"eval/{spec}", rate)
        self.history.append({"steps": self.num_timesteps, "seconds": seconds, "results": results})
        score = selection_score(results, self.config)
        if score > self.best:
            self.best = score
            self.model.save(self.run / "best.zip")


def train(config: TrainConfig, run: Path, resume: bool = False, progress: bool = True) -> list[dict]:
    """Train MaskablePPO; returns the evaluation history."""
    if config.tactics:
        warnings.warn("selfplay_ppo trains SB3's MlpPolicy: the config's `tactics: true` is ignored", stacklevel=2)
    run.mkdir(parents=True, exist_ok=True)
    pool = PoolOpponent(config, config.seed)
    env = TrinityTowersEnv(opponent=pool, **config.env)
    env.reset(seed=config.seed)
    if resume and (run / "latest.zip").is_file():
        model = MaskablePPO.load(run / "latest.zip", env=env)
    else:
        model = MaskablePPO(
            "MlpPolicy", env, learning_rate=config.learning_rate, n_steps=config.rollout_steps * 64,
            batch_size=config.rollout_steps * 64 // config.minibatches, n_epochs=config.epochs, gamma=config.gamma,
            gae_lambda=config.gae_lambda, clip_range=config.clip, ent_coef=config.entropy, vf_coef=config.value_coef,
            max_grad_norm=config.max_grad_norm, seed=config.seed, verbose=0,
            tensorboard_log=str(run / "tb") if config.tensorboard else None,
            policy_kwargs={"net_arch": [config.hidden] * config.layers},
        )  # fmt: skip
    pool.add_snapshot(model.policy)
    callback = SelfPlayCallback(config, pool, run, time.perf_counter(), progress)
    remaining = max(0, config.total_steps - model.num_timesteps)
    model.learn(remaining, callback=callback, reset_num_timesteps=not resume)
    if not callback.history or callback.history[-1]["steps"] != model.num_timesteps:
        callback.evaluate()
    callback.close()
    model.save(run / "latest.zip")
    return callback.history


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="quick", help="a name in configs/train/ or a YAML path")
    parser.add_argument("--run", default="runs/sb3", help="the run folder")
    parser.add_argument("--resume", action="store_true", help="continue from RUN/latest.zip")
    args = parser.parse_args(argv)
    run = Path(args.run)
    history = train(TrainConfig.load(args.config), run, resume=args.resume)
    print(format_results(history[-1]["results"]))
    print(f"report: {write_report(run, history, f'selfplay_ppo (MaskablePPO), config {args.config}')}")


if __name__ == "__main__":
    main()

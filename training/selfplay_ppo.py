"""sb3-contrib MaskablePPO self-play on the single-agent env, with an opponent pool.

Read it top to bottom: the agents that wrap SB3 policies, the pool, the callback that
snapshots, evaluates and checkpoints, then ``train``. The learner's seat is random each
episode and the opponent moves inside the env (``TrinityTowersEnv``), drawn per episode
from the pool: the latest snapshot, a past one, greedy or random — the same mix and the
same evaluation as ``fast_ppo``, from the same configs. Checkpoints are SB3 zip files,
written atomically; ``latest.zip`` also carries the evaluation history, the best score so
far and the training time (an attribute SB3 saves with the model), so ``--resume`` keeps
``best.zip`` the best. A resume continues the weights, optimiser and step count but not
the opponent pool's past snapshots or the env's games: unlike ``fast_ppo``'s it is not
exact. Run-folder rules, Ctrl-C and exit statuses are ``fast_ppo``'s (``training.run_folder``,
``training.session``).

Usage: python -m training.selfplay_ppo --config quick --run runs/sb3 [--resume | --overwrite]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from trinity_env.agents.baselines import GreedyAgent
from trinity_env.agents.loaders.sb3 import SB3PolicyAgent
from trinity_env.agents.ppo import torch_threads
from trinity_env.core import GameState
from trinity_env.core.writes import atomic_file
from trinity_env.envs.single_agent import TrinityTowersEnv
from trinity_env.spec.agent import Agent, Observation, RandomAgent

from .config import TrainConfig
from .evaluation import RunLog, evaluate_agent, history_from_json, selection_score
from .report import format_results, write_report
from .run_folder import claim
from .session import (
    GracefulStop,
    TrainingInterrupted,
    command_line_budget,
    run_command,
    trainer_parser,
)
from .skeleton import EVAL_SEED


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
    """Snapshots into the pool, evaluations to ``metrics.csv``, ``latest.zip`` and ``best.zip``.

    ``state``: what ``latest.zip`` carries besides the model (``history``, ``best``, ``seconds``,
    ``next_eval``), restored on resume; ``stop``: Ctrl-C ends ``learn`` at the next step."""

    def __init__(
        self, config: TrainConfig, pool: PoolOpponent, run: Path, state: dict, stop: GracefulStop, progress: bool
    ):
        super().__init__()
        self.config, self.pool, self.run, self.stop = config, pool, run, stop
        self.history: list[dict] = state["history"]
        self.best: float = state["best"]
        self.seconds_before: float = state["seconds"]
        self.pending_eval: int | None = state.get("next_eval")
        self.started = time.perf_counter()
        resumed = (state["steps"], self.history) if state["steps"] else None
        # SB3 writes its own TensorBoard events (tensorboard_log)
        self.log = RunLog(run, tensorboard=False, resume_from=resumed)
        self.bar = tqdm(total=config.total_steps, disable=not progress, desc="selfplay_ppo", unit="step")
        self.stopped: str | None = None
        self.next_snapshot = self.next_eval = None  # set when training starts

    def seconds(self) -> float:
        return self.seconds_before + time.perf_counter() - self.started

    def _on_training_start(self) -> None:
        c, steps = self.config, self.num_timesteps
        self.next_snapshot = (steps // c.snapshot_every_steps + 1) * c.snapshot_every_steps
        self.next_eval = (steps // c.eval_every_steps + 1) * c.eval_every_steps
        if self.pending_eval is not None and self.pending_eval <= steps:  # interrupted during an evaluation
            self.next_eval = self.pending_eval
        self.bar.update(steps - self.bar.n)

    def _on_training_end(self) -> None:
        self.bar.close()

    def close(self) -> None:
        self.log.close()

    def _on_step(self) -> bool:
        self.bar.update(self.num_timesteps - self.bar.n)
        due = False
        if self.num_timesteps >= self.next_snapshot:
            self.pool.add_snapshot(self.model.policy)
            self.next_snapshot = (
                self.num_timesteps // self.config.snapshot_every_steps + 1
            ) * self.config.snapshot_every_steps
            due = True
        if self.num_timesteps >= self.next_eval:
            try:
                with self.stop.interruptible():
                    self.evaluate()
            except KeyboardInterrupt:
                if not self.stop.graceful:
                    raise
            else:
                every = self.config.eval_every_steps
                self.next_eval = (self.num_timesteps // every + 1) * every
            due = True
        if due:
            self.save_latest()
        limit = self.config.max_minutes
        if self.stop.requested:
            self.stopped = "interrupted"
        elif limit and time.perf_counter() - self.started > 60 * limit:
            self.stopped = "max_minutes"
        return self.stopped is None

    def evaluate(self) -> None:
        results = evaluate_agent(SB3PolicyAgent(self.model.policy), self.config, seed=EVAL_SEED + self.num_timesteps)
        seconds = self.seconds()
        self.log.results(self.num_timesteps, seconds, results)
        for spec, (rate, _, _) in results.items():
            self.logger.record(f"eval/{spec}", rate)
        self.history.append({"steps": self.num_timesteps, "seconds": seconds, "results": results})
        score = selection_score(results)
        if score > self.best:
            self.best = score
            save_model(self.model, self.run / "best.zip")

    def save_latest(self) -> None:
        """``latest.zip``, with the history, best score, training time and a pending evaluation."""
        self.model.trinity_state = json.dumps(
            {"history": self.history, "best": self.best, "seconds": self.seconds(), "next_eval": self.next_eval}
        )
        save_model(self.model, self.run / "latest.zip")


def save_model(model: MaskablePPO, path: Path) -> None:
    """``model.save`` to ``path`` atomically, never through a link: a crash or a full disk leaves the old file."""
    with atomic_file(path) as handle:
        model.save(handle)


def train(
    config: TrainConfig, run: Path, resume: bool = False, progress: bool = True, *, overwrite: bool = False
) -> list[dict]:
    """Train MaskablePPO in the run folder ``run`` (rules: ``training.run_folder``); returns the evaluation history.

    Ctrl-C saves ``latest.zip`` and raises ``TrainingInterrupted``.
    """
    if config.tactics:
        warnings.warn("selfplay_ppo trains SB3's MlpPolicy: the config's `tactics: true` is ignored", stacklevel=2)
    with claim(run, config, "selfplay_ppo", resume=resume, overwrite=overwrite, checkpoint="latest.zip") as folder:
        run = folder.path
        pool = PoolOpponent(config, config.seed)
        env = TrinityTowersEnv(opponent=pool, config=config.env)
        env.reset(seed=config.seed)
        state = {"steps": 0, "history": [], "best": -1.0, "seconds": 0.0}
        if folder.resuming:
            model = MaskablePPO.load(run / "latest.zip", env=env)
            saved = json.loads(getattr(model, "trinity_state", "{}"))
            state = {
                "steps": model.num_timesteps,
                "history": history_from_json(saved.get("history", [])),
                "best": float(saved.get("best", -1.0)),
                "seconds": float(saved.get("seconds", 0.0)),
                "next_eval": saved.get("next_eval"),
            }
        else:
            model = MaskablePPO(
                "MlpPolicy",
                env,
                learning_rate=config.learning_rate,
                n_steps=config.rollout_steps * 64,
                batch_size=config.rollout_steps * 64 // config.minibatches,
                n_epochs=config.epochs,
                gamma=config.gamma,
                gae_lambda=config.gae_lambda,
                clip_range=config.clip,
                ent_coef=config.entropy,
                vf_coef=config.value_coef,
                max_grad_norm=config.max_grad_norm,
                seed=config.seed,
                verbose=0,
                tensorboard_log=str(run / "tb") if config.tensorboard else None,
                policy_kwargs={"net_arch": [config.hidden] * config.layers},
            )
        pool.add_snapshot(model.policy)
        stop = GracefulStop()
        callback = SelfPlayCallback(config, pool, run, state, stop, progress)
        try:
            remaining = max(0, config.total_steps - model.num_timesteps)
            # learn(0) too: it sets up the logger and the callback
            with stop.installed(), torch_threads(config.torch_threads):
                model.learn(remaining, callback=callback, reset_num_timesteps=not folder.resuming)
            if callback.stopped == "interrupted":
                callback.save_latest()
                raise TrainingInterrupted(
                    f"saved {run / 'latest.zip'} at step {model.num_timesteps:,}; --resume continues the run"
                )
            if not callback.history or callback.history[-1]["steps"] != model.num_timesteps:
                callback.evaluate()
            callback.save_latest()
        finally:
            callback.close()
        return callback.history


def main(argv: list[str] | None = None) -> None:
    parser = trainer_parser("selfplay_ppo", __doc__, default_config="quick", default_run="runs/sb3")
    run_command(parser, _command, argv)


def _command(args: argparse.Namespace) -> None:
    config = TrainConfig.load(args.config, budget=command_line_budget(args))
    with claim(
        args.run, config, "selfplay_ppo", resume=args.resume, overwrite=args.overwrite, checkpoint="latest.zip"
    ) as folder:
        history = train(config, folder.path, resume=args.resume, overwrite=args.overwrite)
        print(format_results(history[-1]["results"]))
        print(f"report: {write_report(folder.path, history, f'selfplay_ppo (MaskablePPO), config {args.config}')}")


if __name__ == "__main__":
    main()

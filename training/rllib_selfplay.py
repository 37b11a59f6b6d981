"""Distributed self-play on Ray RLlib: a ``main`` PPO policy against a league of its past selves.

Read it top to bottom: the config, the league (who plays ``main`` in each episode), the
callback that freezes ``main`` into the league when it wins often enough, then ``train``.
``main`` takes a random seat in every episode; its opponent is the masked random module
until the first frozen copy exists, then a frozen copy (uniformly) or, with ``p_random``,
still the random module. Only ``main`` trains. Evaluation plays ``main``'s best moves
against the same baselines as the other trainers (and scores the endgame suite), into
``metrics.csv`` and TensorBoard; checkpoints are RLlib's (``algo.save_to_path``).

The run folder is claimed as ``fast_ppo``'s is (``training.run_folder``: one trainer at a
time, a fresh start needs an empty folder or ``--overwrite``); there is no ``--resume``.
Ctrl-C stops after the current iteration (at once during an evaluation), saves
``RUN/checkpoint`` and exits with status 130; a bad config or run folder prints one line
and exits with status 2.

The same command runs on a laptop and on a cluster:

    python -m training.rllib_selfplay --config rllib --run runs/rllib                 # a local Ray
    python -m training.rllib_selfplay --config rllib --run runs/rllib --address auto  # join a cluster
"""

from __future__ import annotations

import argparse
import functools
import json
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .config import TrainConfigError, YAMLConfig
from .evaluation import RunLog, evaluate_agent, selection_score
from .report import format_results, write_report
from .run_folder import claim
from .session import GracefulStop, TrainingInterrupted, add_run_arguments, run_command


@dataclass(frozen=True)
class RLlibConfig(YAMLConfig):
    """The config of ``rllib_selfplay`` (``configs/train/rllib.yaml``)."""

    seed: int = 0
    """Seeds RLlib (``.debugging(seed=...)``) and the evaluation games."""
    iterations: int = 20
    """Training iterations: each samples ``train_batch`` env steps, then updates ``main``."""
    num_env_runners: int = 2
    """Ray actors that play games; the scaling knob (0: sample in the driver)."""
    envs_per_runner: int = 1
    """Games each env runner plays side by side."""
    train_batch: int = 4000
    """Env steps (both seats' decisions) per iteration."""
    minibatch: int = 500
    """Env steps per SGD minibatch (at most ``train_batch``)."""
    epochs: int = 6
    """Passes over each iteration's batch."""
    learning_rate: float = 3e-4
    """The learner's step size (above 0)."""
    entropy: float = 0.01
    """Weight of the entropy bonus (at least 0)."""
    hidden: int = 256
    """Width of ``main``'s hidden layers."""
    layers: int = 2
    """Hidden layers of ``main``."""
    league_threshold: float = 0.75
    """``main``'s recent win rate against its opponents at which a frozen copy joins the league."""
    max_league: int = 8
    """Frozen copies kept at most (the league stops growing there)."""
    p_random: float = 0.2
    """Chance that an episode's opponent is the random module once the league has frozen copies."""
    eval_every: int = 5
    """Iterations between evaluations (and checkpoints)."""
    eval_games: int = 100
    """Seat-swapped games against each evaluation opponent."""
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    """Agent specs to evaluate against; checked with ``agents.make``."""
    eval_endgames: bool = True
    """Also score the endgame suite."""
    tensorboard: bool = True
    """Log to TensorBoard in ``RUN/tb`` (``metrics.csv`` and ``iterations.jsonl`` are always written)."""
    env: dict[str, Any] = field(default_factory=lambda: {"draft": "random"})
    """Environment config for training and evaluation."""

    def check(self, source: str = "config") -> None:
        self._check_common(source)
        self._check_above_zero(source, ("learning_rate",))
        self._check_not_negative(source, ("entropy",))
        self._check_positive(source, ("iterations", "envs_per_runner", "train_batch", "minibatch", "epochs",
                                      "hidden", "layers", "max_league", "eval_every", "eval_games"))  # fmt: skip
        self._check_unit(source, ("league_threshold", "p_random"))
        self._check_evaluation(source)
        if self.num_env_runners < 0:
            raise TrainConfigError(f"{source}: field 'num_env_runners' must be at least 0")
        if self.minibatch > self.train_batch:
            raise TrainConfigError(f"{source}: field 'minibatch' must not exceed 'train_batch'")


def _episode_draw(episode: Any) -> int:
    """A number fixed for the episode, the same in every process (``hash`` of a str is not)."""
    return zlib.crc32(str(episode.id_).encode())


def league_mapping(agent_id: str, episode: Any, *, versions: int, p_random: float, **kwargs: Any) -> str:
    """Which module plays ``agent_id`` in ``episode``: ``main`` in one seat, an opponent in the other."""
    draw = _episode_draw(episode)
    if int(agent_id[-1]) == draw % 2:
        return "main"
    if versions == 0 or (draw // 2 % 1000) / 1000 < p_random:
        return "random"
    return f"main_v{draw // 2000 % versions + 1}"


def _league_callback_class():
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    class LeagueCallback(RLlibCallback):
        """Logs ``main``'s win rate per episode; freezes a copy of ``main`` into the league when it is high."""

        def __init__(self, threshold: float, max_league: int, p_random: float):
            super().__init__()
            self.threshold, self.max_league, self.p_random = threshold, max_league, p_random
            self.versions = 0

        def on_episode_end(self, *, episode, metrics_logger, **kwargs) -> None:
            rewards = episode.get_rewards()
            for agent in rewards:
                if episode.module_for(agent) == "main":
                    opponent = episode.module_for("player_1" if agent == "player_0" else "player_0")
                    won = float(rewards[agent][-1] > 0)
                    metrics_logger.log_value("main_win_rate", won, reduce="mean", window=200)
                    kind = "random" if opponent == "random" else "league"
                    metrics_logger.log_value(f"main_win_rate_vs_{kind}", won, reduce="mean", window=200)

        def on_train_result(self, *, algorithm, result, **kwargs) -> None:
            from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

            win_rate = result.get(ENV_RUNNER_RESULTS, {}).get("main_win_rate")
            if win_rate is not None and win_rate >= self.threshold and self.versions < self.max_league:
                self.versions += 1
                main = algorithm.get_module("main")
                algorithm.add_module(
                    module_id=f"main_v{self.versions}",
                    module_spec=RLModuleSpec.from_module(main),
                    new_agent_to_module_mapping_fn=functools.partial(
                        league_mapping, versions=self.versions, p_random=self.p_random
                    ),
                )
                algorithm.set_state(
                    {"learner_group": {"learner": {"rl_module": {f"main_v{self.versions}": main.get_state()}}}}
                )
            result["league_size"] = self.versions

    return LeagueCallback


def build_algorithm(config: RLlibConfig):
    """The PPO algorithm: ``main`` (trained), ``random``, and the league callback."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from trinity_env.integrations.rllib import MaskedPPOModule, MaskedRandomModule, register

    hidden = [config.hidden] * config.layers
    ppo = (
        PPOConfig()
        # RLlib's env pre-check steps random, unmasked actions, which our env refuses as illegal
        .environment(register(), env_config=dict(config.env), disable_env_checking=True)
        .env_runners(num_env_runners=config.num_env_runners, num_envs_per_env_runner=config.envs_per_runner)
        .multi_agent(
            policies={"main", "random"},
            policy_mapping_fn=functools.partial(league_mapping, versions=0, p_random=config.p_random),
            policies_to_train=["main"],
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "main": RLModuleSpec(
                        module_class=MaskedPPOModule, model_config={"fcnet_hiddens": hidden, "head_fcnet_hiddens": []}
                    ),
                    "random": RLModuleSpec(module_class=MaskedRandomModule),
                }
            )
        )
        .training(
            lr=config.learning_rate,
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch,
            num_epochs=config.epochs,
            entropy_coeff=config.entropy,
            gamma=1.0,
            lambda_=0.95,
        )
        .callbacks(
            functools.partial(_league_callback_class(), config.league_threshold, config.max_league, config.p_random)
        )
        .debugging(seed=config.seed, log_level="ERROR")
    )
    return ppo.build_algo()


def train(
    config: RLlibConfig, run: Path, address: str | None = None, progress: bool = True, iterations: int | None = None,
    *, overwrite: bool = False,
) -> list[dict]:  # fmt: skip
    """Train for ``config.iterations`` (or ``iterations``) in the run folder ``run``; returns the evaluation history.

    ``overwrite``: delete the run already in ``run`` first. Ctrl-C saves ``RUN/checkpoint`` after the
    current iteration and raises ``TrainingInterrupted``.
    """
    with claim(run, config, "rllib_selfplay", overwrite=overwrite, checkpoint="checkpoint") as folder:
        return _train(config, folder.path, address, progress, iterations)


def _train(config: RLlibConfig, run: Path, address: str | None, progress: bool, iterations: int | None):
    import ray
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    from trinity_env.integrations.rllib import RLlibModuleAgent

    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    algorithm = build_algorithm(config)
    log = RunLog(run, config.tensorboard)
    (run / "iterations.jsonl").write_text("", encoding="utf-8")  # this run's iterations only (no resume)
    history, best, steps_before = [], -1.0, 0
    total = iterations or config.iterations
    started = time.perf_counter()
    stop = GracefulStop()
    try:
        with stop.installed():
            for iteration in tqdm(range(1, total + 1), disable=not progress, desc="rllib_selfplay", unit="iter"):
                if stop.requested:
                    algorithm.save_to_path(str((run / "checkpoint").resolve()))
                    raise TrainingInterrupted(f"saved {run / 'checkpoint'} after iteration {iteration - 1}")
                tick = time.perf_counter()
                result = algorithm.train()
                runners = result.get(ENV_RUNNER_RESULTS, {})
                steps = int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))
                speed = (steps - steps_before) / (time.perf_counter() - tick)
                steps_before = steps
                record = {
                    "iteration": iteration,
                    "steps": steps,
                    "steps_per_second": speed,
                    "main_win_rate": runners.get("main_win_rate"),
                    "league_size": result.get("league_size", 0),
                }
                with (run / "iterations.jsonl").open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
                for name in ("steps_per_second", "main_win_rate", "league_size"):
                    if record[name] is not None:
                        log.scalar(f"train/{name}", float(record[name]), steps)
                if iteration % config.eval_every == 0 or iteration == total:
                    agent = RLlibModuleAgent(algorithm.get_module("main"), name="main")
                    try:
                        with stop.interruptible():
                            results = evaluate_agent(agent, config, seed=10_000_000 + steps)
                    except KeyboardInterrupt:
                        if not stop.graceful:
                            raise
                        algorithm.save_to_path(str((run / "checkpoint").resolve()))
                        raise TrainingInterrupted(f"saved {run / 'checkpoint'} after iteration {iteration}") from None
                    seconds = time.perf_counter() - started
                    log.results(steps, seconds, results)
                    history.append({"steps": steps, "seconds": seconds, "results": results})
                    algorithm.save_to_path(str((run / "checkpoint").resolve()))
                    score = selection_score(results)
                    if score > best:
                        best = score
                        algorithm.save_to_path(str((run / "best").resolve()))
    finally:
        log.close()
        algorithm.stop()
        if started_ray:
            ray.shutdown()
    return history


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.rllib_selfplay", description=__doc__.splitlines()[0])
    add_run_arguments(parser, default_config="rllib", default_run="runs/rllib", resume=False)
    parser.add_argument("--address", default=None, help="a Ray cluster to join ('auto': the one on this node)")
    parser.add_argument("--env-runners", type=int, default=None, help="override num_env_runners")
    parser.add_argument("--iterations", type=int, default=None, help="override iterations")
    run_command(parser, _command, argv)


def _command(args: argparse.Namespace) -> None:
    overrides = {} if args.env_runners is None else {"num_env_runners": args.env_runners}
    if args.iterations is not None:
        overrides["iterations"] = args.iterations
    config = RLlibConfig.load(args.config, **overrides)
    with claim(args.run, config, "rllib_selfplay", overwrite=args.overwrite, checkpoint="checkpoint") as folder:
        run = folder.path
        history = train(config, run, address=args.address, overwrite=args.overwrite)
        speeds = [json.loads(line)["steps_per_second"] for line in (run / "iterations.jsonl").open(encoding="utf-8")]
        print(f"{history[-1]['steps']:,} env steps, median {np.median(speeds):,.0f} steps/s "
              f"with {config.num_env_runners} env runner(s)")  # fmt: skip
        print(format_results(history[-1]["results"]))
        print(f"report: {write_report(run, history, f'rllib_selfplay, config {args.config}')}")


if __name__ == "__main__":
    main()

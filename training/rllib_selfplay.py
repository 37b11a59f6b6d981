"""Distributed self-play on Ray RLlib: a ``main`` PPO policy against a league of opponents.

Read it top to bottom: the config, the league (who plays ``main`` in each episode), the
callback that logs ``main``'s games, then ``train``. ``main`` is the batched trainer's own
network (``trinity_env.integrations.rllib.TrinityPPOModule``: the same MLP and tactical
features) and takes a random seat in every episode. Its opponent is drawn per episode as
``fast_ppo`` draws it: the random agent (``p_random``), the greedy baseline (``p_greedy``),
``main`` itself (``p_latest``; both seats then train), otherwise a frozen copy of ``main``
(``main`` itself until the first copy exists). Every ``snapshot_every_iterations`` iterations a copy
joins the league; past ``pool_size`` copies the newest replaces the oldest.
Evaluation plays ``main``'s best moves against the same baselines as the other trainers
(and scores the endgame suite), into ``metrics.csv`` and TensorBoard.

The run folder is claimed as ``fast_ppo``'s is (``training.run_folder``: one trainer at a
time, a fresh start needs an empty folder or ``--overwrite``). After every evaluation the
run saves RLlib's checkpoint (``RUN/checkpoint``, with the league), ``RUN/latest.pt`` and,
when it is the best so far, ``RUN/best.pt`` (``main``'s network as a checkpoint every agent
tool reads: ``trinity arena --agents RUN ...``) and ``RUN/progress.json`` (iterations,
steps, league, evaluation history). ``--resume`` continues from there: the league's copies
are rebuilt, the weights and optimiser restored, and the run goes on to ``iterations``.
Ctrl-C stops after the current iteration (at once during an evaluation), saves the
checkpoint and exits with status 130; a bad config or run folder prints one line and
exits with status 2.

The same command runs on a laptop and on a cluster:

    python -m training.rllib_selfplay --config rllib --run runs/rllib                 # a local Ray
    python -m training.rllib_selfplay --config rllib --run runs/rllib --resume        # continue it
    python -m training.rllib_selfplay --config rllib --run runs/rllib --address auto  # join a cluster
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from tqdm import tqdm

from trinity_env.arguments import non_negative_int, positive_int
from trinity_env.core.writes import open_append, write_text
from trinity_env.spec.config import EnvConfig, make_config

from .config import EVALUATION_FIELDS, PPOFields, TrainConfigError
from .evaluation import RunLog, evaluate_agent, history_from_json, selection_score
from .report import format_results, write_report
from .run_folder import claim
from .session import GracefulStop, RunRequest, TrainingInterrupted, command_line_budget, run_command, trainer_parser
from .skeleton import EVAL_SEED

PROGRESS = "progress.json"
"""What ``--resume`` needs beside RLlib's checkpoint: iterations done, steps, league size, history."""


@dataclass(frozen=True)
class RLlibConfig(PPOFields):
    """The config of ``rllib_selfplay`` (``configs/train/rllib.yaml``): the fields of ``PPOFields`` (``main`` is the
    learner; ``seed`` also seeds RLlib, ``.debugging(seed=...)``; ``iterations.jsonl`` is written beside
    ``metrics.csv`` whatever ``tensorboard`` says) and these."""

    trainer: ClassVar[str] = "rllib"

    resume_may_change: ClassVar[frozenset[str]] = EVALUATION_FIELDS | {
        "eval_every_iterations",
        "iterations",
        "num_env_runners",
    }
    """How long to train, how many samplers, what is measured and where it is logged."""

    retired: ClassVar[dict[str, str]] = {
        "eval_every": "eval_every_iterations",
        "snapshot_every": "snapshot_every_iterations",
        "max_league": "pool_size",
    }

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
    # this trainer's defaults for fields that PPOFields declares: the tactical features and the opponent draw
    tactics: bool = True
    p_random: float = 0.25
    p_greedy: float = 0.25
    p_latest: float = 0.3
    snapshot_every_iterations: int = 25
    """Iterations between frozen copies of ``main`` joining the league."""
    pool_size: int = 8
    """Frozen copies kept at most in the league (the newest replaces the oldest): PPO's opponent pool, one name."""
    eval_every_iterations: int = 5
    """Iterations between evaluations (and checkpoints)."""
    env: EnvConfig = field(default_factory=lambda: make_config(draft="dealt"))
    """Environment config for training and evaluation: a YAML mapping parsed once into an ``EnvConfig``."""

    def check(self, source: str = "config") -> None:
        super().check(source)
        self._check_bound(
            source,
            "at least 1",
            (
                "iterations",
                "envs_per_runner",
                "train_batch",
                "minibatch",
                "snapshot_every_iterations",
                "pool_size",
                "eval_every_iterations",
            ),
        )
        if self.num_env_runners < 0:
            raise TrainConfigError(f"{source}: field 'num_env_runners' must be at least 0")
        if self.minibatch > self.train_batch:
            raise TrainConfigError(f"{source}: field 'minibatch' must not exceed 'train_batch'")


def _episode_draw(episode: Any) -> int:
    """A number fixed for the episode, the same in every process (``hash`` of a str is not)."""
    return zlib.crc32(str(episode.id_).encode())


def league_mapping(
    agent_id: str, episode: Any, *, versions: int, p_random: float, p_greedy: float, p_latest: float, **kwargs: Any
) -> str:
    """Which module plays ``agent_id`` in ``episode``: ``main`` in one seat, an opponent in the other.

    ``versions``: frozen copies in the league (``main_v1`` ...).
    """
    draw = _episode_draw(episode)
    if int(agent_id[-1]) == draw % 2:
        return "main"
    u = (draw // 2 % 1000) / 1000
    if u < p_random:
        return "random"
    if u < p_random + p_greedy:
        return "greedy"
    if versions == 0 or u < p_random + p_greedy + p_latest:
        return "main"
    return f"main_v{draw // 2000 % versions + 1}"


def _mapping(config: RLlibConfig, versions: int):
    return functools.partial(
        league_mapping,
        versions=min(versions, config.pool_size),
        p_random=config.p_random,
        p_greedy=config.p_greedy,
        p_latest=config.p_latest,
    )


def _callback_class():
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class LeagueCallback(RLlibCallback):
        """Logs ``main``'s results per episode, against all opponents and per kind."""

        def on_episode_end(self, *, episode, metrics_logger, **kwargs) -> None:
            rewards = episode.get_rewards()
            for agent in rewards:
                if episode.module_for(agent) != "main":
                    continue
                opponent = episode.module_for("player_1" if agent == "player_0" else "player_0")
                won = float(rewards[agent][-1] > 0)
                kind = opponent if opponent in ("random", "greedy", "main") else "league"
                metrics_logger.log_value("main_win_rate", won, reduce="mean", window=200)
                metrics_logger.log_value(f"main_win_rate_vs_{kind}", won, reduce="mean", window=200)

    return LeagueCallback


def build_algorithm(config: RLlibConfig, versions: int = 0):
    """The PPO algorithm: ``main`` (trained), ``random``, ``greedy``, ``versions`` frozen copies, the callback."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from trinity_env.integrations.rllib import AgentModule, TrinityPPOModule, register

    network = {"hidden": config.hidden, "layers": config.layers, "tactics": config.tactics}
    copies = [f"main_v{k}" for k in range(1, min(versions, config.pool_size) + 1)]
    specs = {name: RLModuleSpec(module_class=TrinityPPOModule, model_config=network) for name in ["main", *copies]} | {
        name: RLModuleSpec(module_class=AgentModule, model_config={"agent": name, "seed": config.seed})
        for name in ("random", "greedy")
    }
    ppo = (
        PPOConfig()
        # a dict, not the EnvConfig: RLlib deep-updates env_config into a dict (EnvContext), which the env parses once
        .environment(register(), env_config=config.env.to_dict())
        # no sample timeout: on a busy machine RLlib's 60 s default drops whole iterations' samples
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=config.envs_per_runner,
            sample_timeout_s=None,
        )
        .multi_agent(policies=set(specs), policy_mapping_fn=_mapping(config, versions), policies_to_train=["main"])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            lr=config.learning_rate,
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch,
            num_epochs=config.epochs,
            entropy_coeff=config.entropy,
            clip_param=config.clip,
            vf_loss_coeff=config.value_coef,
            grad_clip=config.max_grad_norm,
            grad_clip_by="global_norm",
            use_kl_loss=False,
            gamma=1.0,
            lambda_=0.95,
        )
        .callbacks(_callback_class())
        .debugging(seed=config.seed, log_level="ERROR")
    )
    return ppo.build_algo()


def freeze_main(algorithm: Any, config: RLlibConfig, versions: int) -> int:
    """Copy ``main`` into the league as its ``versions + 1``-th copy; the new number of copies.

    The first ``pool_size`` copies are new modules; after that the newest overwrites the oldest slot.
    """
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    main = algorithm.get_module("main")
    slot = f"main_v{versions % config.pool_size + 1}"
    if versions < config.pool_size:
        algorithm.add_module(
            module_id=slot,
            module_spec=RLModuleSpec.from_module(main),
            new_agent_to_module_mapping_fn=_mapping(config, versions + 1),
        )
    algorithm.set_state({"learner_group": {"learner": {"rl_module": {slot: main.get_state()}}}})
    algorithm.env_runner_group.sync_weights(policies=[slot], from_worker_or_learner_group=algorithm.learner_group)
    return versions + 1


def _counts(runners: dict, before: tuple[int, int]) -> tuple[int, int]:
    """Env steps and ``main``'s decisions sampled so far: RLlib's lifetime counters (restored with
    its checkpoint), or ``before`` where an iteration reports none (RLlib reports NaN then)."""
    from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_MODULE_STEPS_SAMPLED_LIFETIME

    def count(value: Any, previous: int) -> int:
        return int(value) if isinstance(value, int | float) and math.isfinite(value) and value >= previous else previous

    modules = runners.get(NUM_MODULE_STEPS_SAMPLED_LIFETIME) or {}
    return count(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME), before[0]), count(modules.get("main"), before[1])


def train(
    config: RLlibConfig,
    run: Path,
    address: str | None = None,
    progress: bool = True,
    iterations: int | None = None,
    *,
    resume: bool = False,
    overwrite: bool = False,
) -> list[dict]:
    """Train to ``config.iterations`` (or ``iterations``) in the run folder ``run``; returns the evaluation history.

    ``resume``: continue the run in ``run`` from its last checkpoint; ``overwrite``: delete it first.
    Ctrl-C saves ``RUN/checkpoint`` after the current iteration and raises ``TrainingInterrupted``.
    """
    with claim(run, config, "rllib_selfplay", resume=resume, overwrite=overwrite, checkpoint=PROGRESS) as folder:
        return _train(config, folder.path, address, progress, iterations, folder.resuming)


def _load_progress(run: Path) -> dict:
    from trinity_env.core.files import read_json

    progress = read_json(run / PROGRESS)
    for key in ("iteration", "env_steps", "main_steps", "versions", "best", "history"):
        if key not in progress:
            raise TrainConfigError(f"{run / PROGRESS}: field {key!r} is missing (start the run again)")
    return progress


def _train(
    config: RLlibConfig, run: Path, address: str | None, progress: bool, iterations: int | None, resume: bool
) -> list[dict]:
    import ray
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

    from trinity_env.agents.networks.ppo_network import NetworkAgent, save_checkpoint

    state = (
        _load_progress(run)
        if resume
        else {"iteration": 0, "env_steps": 0, "main_steps": 0, "versions": 0, "best": -1.0, "history": []}
    )
    history = history_from_json(state["history"])
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    algorithm = build_algorithm(config, state["versions"])
    if resume:
        algorithm.restore_from_path(str((run / "checkpoint").resolve()))
    log = RunLog(run, config.tensorboard, resume_from=(state["main_steps"], history) if resume else None)
    # this run's iterations up to its checkpoint: lines a killed session wrote after it go
    kept = [] if not resume else (run / "iterations.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in kept if json.loads(line)["iteration"] <= state["iteration"]]
    write_text(run / "iterations.jsonl", "".join(line + "\n" for line in kept))
    total = iterations or config.iterations
    seconds_before = history[-1]["seconds"] if history else 0.0
    started = time.perf_counter()
    stop = GracefulStop()

    def save(iteration: int, score: float | None) -> None:
        """RLlib's checkpoint, ``main``'s network, and what a resume needs, in that order."""
        algorithm.save_to_path(str((run / "checkpoint").resolve()))
        network = algorithm.get_module("main").network
        extra = {"steps": state["main_steps"], "env_steps": state["env_steps"]}
        save_checkpoint(run / "latest.pt", network, extra)
        if score is not None and score > state["best"]:
            state["best"] = score
            save_checkpoint(run / "best.pt", network, extra)
        state["iteration"] = iteration
        state["history"] = history  # JSON writes the (rate, low, high) tuples as lists
        write_text(run / PROGRESS, json.dumps(state, indent=1) + "\n")

    try:
        with stop.installed():
            bar = tqdm(
                range(state["iteration"] + 1, total + 1),
                disable=not progress,
                desc="rllib_selfplay",
                unit="iter",
                initial=state["iteration"],
                total=total,
            )
            for iteration in bar:
                if stop.requested:
                    save(iteration - 1, None)
                    raise TrainingInterrupted(f"saved {run / 'checkpoint'} after iteration {iteration - 1}")
                tick = time.perf_counter()
                result = algorithm.train()
                runners = result.get(ENV_RUNNER_RESULTS, {})
                env_steps, state["main_steps"] = _counts(runners, (state["env_steps"], state["main_steps"]))
                speed = (env_steps - state["env_steps"]) / (time.perf_counter() - tick)
                state["env_steps"] = env_steps
                if iteration % config.snapshot_every_iterations == 0:
                    state["versions"] = freeze_main(algorithm, config, state["versions"])
                record = {
                    "iteration": iteration,
                    "env_steps": env_steps,
                    "main_steps": state["main_steps"],
                    "steps_per_second": speed,
                    "league_size": min(state["versions"], config.pool_size),
                } | {key: value for key, value in runners.items() if key.startswith("main_win_rate")}
                with open_append(run / "iterations.jsonl") as handle:
                    handle.write((json.dumps(record) + "\n").encode("utf-8"))
                for name, value in record.items():
                    if name not in ("iteration", "main_steps") and value is not None:
                        log.scalar(f"train/{name}", float(value), state["main_steps"])
                if iteration % config.eval_every_iterations == 0 or iteration == total:
                    agent = NetworkAgent(algorithm.get_module("main").network, name="main")
                    try:
                        with stop.interruptible():
                            results = evaluate_agent(agent, config, seed=EVAL_SEED + env_steps)
                    except KeyboardInterrupt:
                        if not stop.graceful:
                            raise
                        save(iteration, None)
                        raise TrainingInterrupted(f"saved {run / 'checkpoint'} after iteration {iteration}") from None
                    seconds = seconds_before + time.perf_counter() - started
                    log.results(state["main_steps"], seconds, results)
                    history.append(
                        {"steps": state["main_steps"], "env_steps": env_steps, "seconds": seconds, "results": results}
                    )
                    save(iteration, selection_score(results))
    finally:
        log.close()
        algorithm.stop()
        if started_ray:
            ray.shutdown()
    return history


def main(argv: list[str] | None = None) -> None:
    parser = trainer_parser("rllib_selfplay", __doc__, default_config="rllib", default_run="runs/rllib")
    parser.add_argument("--address", default=None, help="a Ray cluster to join ('auto': the one on this node)")
    parser.add_argument("--env-runners", type=non_negative_int, default=None, help="override num_env_runners")
    parser.add_argument("--iterations", type=positive_int, default=None, help="override iterations")
    run_command(parser, _command, argv)


def _command(args: argparse.Namespace) -> None:
    overrides = {} if args.env_runners is None else {"num_env_runners": args.env_runners}
    if args.iterations is not None:
        overrides["iterations"] = args.iterations
    config = RLlibConfig.load(args.config, budget=command_line_budget(args), **overrides)
    run(config, RunRequest.from_args(args), args.address)


def run(config: RLlibConfig, request: RunRequest, address: str | None = None) -> None:
    """Train on Ray (a local cluster, or the one at ``address``) and write the report: what the command line and
    ``trinity train`` run."""
    with claim(
        request.run, config, "rllib_selfplay", resume=request.resume, overwrite=request.overwrite, checkpoint=PROGRESS
    ) as folder:
        history = train(config, folder.path, address=address, resume=request.resume, overwrite=request.overwrite)
        records = [json.loads(line) for line in (folder.path / "iterations.jsonl").open(encoding="utf-8")]
        speeds = [record["steps_per_second"] for record in records]
        print(
            f"{history[-1]['env_steps']:,} env steps ({history[-1]['steps']:,} of main's decisions), median "
            f"{np.median(speeds):,.0f} env steps/s with {config.num_env_runners} env runner(s)"
        )
        print(format_results(history[-1]["results"]))
        print(f"report: {write_report(folder.path, history, f'rllib_selfplay, config {request.config_name}')}")


if __name__ == "__main__":
    main()

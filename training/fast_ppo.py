"""PPO with action masking on the batched fast engine, against an opponent pool.

Read it top to bottom: the opponent pool; the checkpoint; ``train``; the command line. One PPO
iteration in three steps (``collect_rollout``, ``compute_advantages``, ``update``) lives in
``trinity_env.agents.ppo``, which the exploitability tool runs too. ``num_games`` games run in
lockstep; in each the learner holds a random seat
and the opponent, drawn per episode from the pool (the latest snapshot, a past snapshot, the
greedy baseline or the random agent), moves inside the vector env with one batched forward
pass (or one greedy kernel call) per opponent. The learner's trajectory holds only its own
decisions and ends with its own +1 or -1.

The budget is ``total_steps`` learner steps: it fixes the schedule (learning-rate annealing,
snapshots, evaluations), so a seed gives the same agent on any machine; ``max_minutes`` is
only a safety stop. ``latest.pt`` holds everything the rest of a run depends on (network,
optimiser, opponent pool and its draws, the games in progress, the random states, the
evaluation history, the training time so far): a resumed run continues exactly as the
uninterrupted one would, weights and ``metrics.csv`` alike. It is written atomically at
every snapshot and evaluation and when a run stops (Ctrl-C, ``max_minutes``); a run killed
outright loses at most one snapshot interval. Run-folder rules: ``training.run_folder``; the run plumbing
(log, evaluation schedule, ``best.pt``, stops): ``training.skeleton``.

Usage: python -m training.fast_ppo --config quick --run runs/quick [--resume | --overwrite] [--total-steps N]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.optim import Adam
from tqdm import tqdm

from trinity_env.agents.networks.ppo_network import (
    CheckpointError,
    NetworkAgent,
    PolicyNetwork,
    load_checkpoint,
    save_checkpoint,
)
from trinity_env.agents.ppo import (
    Rollout,
    collect_rollout,
    compute_advantages,
    make_optimizer,
    torch_threads,
    update,
)
from trinity_env.fast.games import FastGames
from trinity_env.fast.vector_env import TrinityTowersVectorEnv
from trinity_env.search.baselines import greedy_batch

from .config import TrainConfig
from .env_state import env_state, load_env_state
from .evaluation import Results, evaluate_agent, history_from_json
from .report import format_results, write_report
from .run_folder import claim
from .session import RunRequest, command_line_budget, run_command, trainer_parser
from .skeleton import TrainingRun

RANDOM, GREEDY = -1, -2
KINDS = ("random", "greedy", "latest", "past")
"""The kinds of pool opponent, as ``train/win_rate_vs_KIND`` names them (``agents.ppo.OPPONENT_KINDS`` of them)."""


class OpponentPool:
    """Per-episode opponents: latest snapshot, a past snapshot, greedy or random; played in batch."""

    def __init__(self, config: TrainConfig, rng: np.random.Generator):
        self.config = config
        self.rng = rng
        self.latest: PolicyNetwork | None = None
        self.past: list[PolicyNetwork] = []
        self.assigned = np.full(config.num_games, RANDOM, np.int64)  # or GREEDY, 0 latest, k >= 1 past[k - 1]
        self.games: FastGames | None = None  # the env's games, which greedy reads

    def add_snapshot(self, network: PolicyNetwork) -> None:
        if self.latest is not None:
            self.past = [*self.past, self.latest][-self.config.pool_size :]
        self.latest = copy.deepcopy(network).eval()

    def new_episodes(self, games: np.ndarray) -> None:
        draw = self.rng.random(games.size)
        c = self.config
        choice = np.full(games.size, RANDOM, np.int64)
        choice[draw >= c.p_random] = GREEDY
        if self.latest is not None:
            choice[draw >= c.p_random + c.p_greedy] = 0
            past = draw >= c.p_random + c.p_greedy + c.p_latest
            if self.past:
                choice[past] = self.rng.integers(1, len(self.past) + 1, int(past.sum()))
        self.assigned[games] = choice

    def act(self, observations: np.ndarray, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        actions = np.zeros(games.size, np.int64)
        who = self.assigned[games]
        for opponent in np.unique(who):
            rows = np.flatnonzero(who == opponent)
            if opponent == RANDOM:  # the legal action with the largest random key
                keys = self.rng.random((rows.size, masks.shape[1])) * masks[rows]
                actions[rows] = keys.argmax(axis=1)
            elif opponent == GREEDY:
                out = np.zeros(rows.size, np.int64)
                greedy_batch(*self.games.batch, games[rows], out)
                actions[rows] = out
            else:
                network = self.latest if opponent == 0 else self.past[opponent - 1]
                actions[rows] = network.act(observations[rows], masks[rows], greedy=False)
        return actions

    def kinds(self) -> np.ndarray:
        """Each game's opponent as an index into ``KINDS``."""
        a = self.assigned
        return np.select([a == RANDOM, a == GREEDY, a == 0], [0, 1, 2], 3)

    def state_dict(self) -> dict:
        return {
            "snapshots": [p.state_dict() for p in ([self.latest] if self.latest else []) + self.past],
            "assigned": torch.from_numpy(self.assigned.copy()),
            "rng": json.dumps(self.rng.bit_generator.state),
        }

    def load_state_dict(self, state: dict) -> None:
        snapshots = []
        for weights in state["snapshots"]:
            snapshot = PolicyNetwork(self.config.hidden, self.config.layers, self.config.tactics)
            snapshot.load_state_dict(weights)
            snapshots.append(snapshot.eval())
        self.latest, self.past = (snapshots[0], snapshots[1:]) if snapshots else (None, [])
        self.assigned[:] = state["assigned"].numpy()
        self.rng.bit_generator.state = json.loads(state["rng"])


# ------------------------------------------------------------------------------ the checkpoint


@dataclass
class Progress:
    """Where a run stands: what ``latest.pt`` keeps besides the networks and the games."""

    steps: int
    next_snapshot: int
    next_eval: int
    seconds: float = 0.0
    """Training time of the run so far (all sessions), at the last checkpoint."""
    best: float = -1.0
    """The best ``selection_score`` so far (``best.pt``'s)."""
    history: list[dict] = field(default_factory=list)

    @classmethod
    def start(cls, config: TrainConfig) -> Progress:
        return cls(0, config.snapshot_every_steps, config.eval_every_steps)


def save_latest(path: Path, network, optimizer, pool: OpponentPool, env, progress: Progress) -> None:
    """``latest.pt``: everything the rest of the run depends on, written atomically."""
    extra = {
        "steps": progress.steps,
        "next_snapshot": progress.next_snapshot,
        "next_eval": progress.next_eval,
        "seconds": progress.seconds,
        "best": progress.best,
        "history": json.dumps(progress.history),
        "optimizer": optimizer.state_dict(),
        "pool": pool.state_dict(),
        "env": env_state(env),
        "torch_rng": torch.get_rng_state(),
    }
    save_checkpoint(path, network, extra)


def load_latest(path: Path, config: TrainConfig, pool: OpponentPool, env) -> tuple[PolicyNetwork, Adam, Progress]:
    """The network, optimiser and progress of ``latest.pt``; restores the pool, the games and the random states.

    A ``latest.pt`` without its games (written before exact resumes) is a ``CheckpointError``: such a run cannot go on
    as it would have."""
    network, payload = load_checkpoint(path)
    if "env" not in payload:
        raise CheckpointError(f"{path} predates exact resumes (it holds no games): start the run again (--overwrite)")
    optimizer = make_optimizer(network, config)
    optimizer.load_state_dict(payload["optimizer"])
    steps, history = int(payload["steps"]), history_from_json(json.loads(payload["history"]))
    pool.load_state_dict(payload["pool"])
    load_env_state(env, payload["env"])
    torch.set_rng_state(payload["torch_rng"])
    next_eval = int(payload["next_eval"])
    if next_eval > steps:  # not pending: the next evaluation follows eval_every_steps, which may have changed
        next_eval = (steps // config.eval_every_steps + 1) * config.eval_every_steps
    progress = Progress(
        steps, int(payload["next_snapshot"]), next_eval, float(payload["seconds"]), float(payload["best"]), history
    )
    return network, optimizer, progress


# ------------------------------------------------------------------------------ training


def evaluate(network: PolicyNetwork, config: TrainConfig, seed: int, progress: bool = False) -> Results:
    """The network's best moves against each evaluation opponent (and the endgame suite); ``progress``: a bar."""
    return evaluate_agent(NetworkAgent(network, name="learner"), config, seed, progress)


def train(
    config: TrainConfig,
    run: Path,
    resume: bool = False,
    progress: bool = True,
    *,
    overwrite: bool = False,
    stop_at: int | None = None,
) -> list[dict]:
    """Train in the run folder ``run``; returns the evaluation history (``steps``, ``seconds``, ``results``).

    Writes ``config.json``, ``metrics.csv``, ``latest.pt``, ``best.pt`` and TensorBoard events
    (``tb/``). ``resume``: continue the run in ``run``; ``overwrite``: delete it and start again
    (see ``training.run_folder`` for the rules). ``stop_at``: end this invocation once that many
    steps are done, as ``max_minutes`` would (the schedule stays ``total_steps``'s). ``progress``: the progress bar
    and a line per evaluation as it finishes. Ctrl-C saves ``latest.pt`` and raises ``TrainingInterrupted``.
    """
    with (
        claim(run, config, "fast_ppo", resume=resume, overwrite=overwrite, checkpoint="latest.pt") as folder,
        torch_threads(config.torch_threads),
    ):
        run = folder.path
        torch.manual_seed(config.seed)
        network = PolicyNetwork(config.hidden, config.layers, config.tactics)
        optimizer = make_optimizer(network, config)
        pool = OpponentPool(config, np.random.default_rng(config.seed))
        env = TrinityTowersVectorEnv(
            config.num_games,
            opponent=pool,
            autoreset_mode="same_step",
            draft_share=config.draft_share,
            config=config.env,
        )
        pool.games = env.games
        if folder.resuming:
            network, optimizer, state = load_latest(run / "latest.pt", config, pool, env)
        else:
            state = Progress.start(config)
            pool.add_snapshot(network)
            env.reset(seed=config.seed)
        with TrainingRun(
            folder,
            config,
            state,
            "steps",
            total=config.total_steps,
            stop_at=stop_at,
            save_latest=lambda: save_latest(run / "latest.pt", network, optimizer, pool, env, state),
            save_best=lambda: save_checkpoint(run / "best.pt", network, {"steps": state.steps}),
            evaluate=lambda seed: evaluate(network, config, seed, progress),
            progress=progress,
        ) as training:
            return _train_loop(config, training, network, optimizer, pool, env, state, progress)


def _train_loop(config, training: TrainingRun, network, optimizer, pool, env, state: Progress, progress):
    """Snapshot and evaluate when due, checkpoint, then one PPO iteration; until ``total_steps`` or a stop."""
    observations, masks = env.games.observations(env.seats), env.action_masks()
    rollout = Rollout.empty(config.rollout_steps, config.num_games, observations.shape[1])
    batch = config.rollout_steps * config.num_games
    planned = -(-config.total_steps // batch) * batch  # whole updates: the last one may pass total_steps
    with training.running():
        bar = tqdm(total=planned, initial=state.steps, disable=not progress, desc="fast_ppo", unit="step")
        while True:
            due = False
            if state.steps >= state.next_snapshot:
                pool.add_snapshot(network)
                state.next_snapshot = (state.steps // config.snapshot_every_steps + 1) * config.snapshot_every_steps
                due = True
            if training.evaluate_save_or_stop(due):
                break
            if config.anneal_lr:  # over the planned steps: a stopped run keeps the full run's schedule
                optimizer.param_groups[0]["lr"] = config.learning_rate * (1 - state.steps / config.total_steps)
            collect_rollout(network, env, pool, rollout, observations, masks)
            observations, masks = rollout.next_observations, rollout.next_masks
            advantages, returns = compute_advantages(network, rollout, config)
            stats = update(network, optimizer, rollout, advantages, returns, config)
            state.steps += batch
            bar.update(batch)
            bar.set_postfix_str(
                iteration_figures(stats, rollout, state.history[-1]["results"] if state.history else None)
            )
            _log_iteration(training, stats, rollout, optimizer, state.steps)
    bar.close()
    return training.finish(f"at step {state.steps:,}")


def iteration_figures(stats: dict, rollout: Rollout, results: Results | None) -> str:
    """The progress bar's figures after an update: the losses, the learner's reward against the pool in this rollout
    (its mean over the games that ended: +1 a win, -1 a loss) and the last evaluation's win rates."""
    parts = [f"policy loss {stats['policy']:.3f}", f"value loss {stats['value']:.3f}"]
    ended = rollout.games_ended.sum()
    if ended:
        parts.append(f"reward {2 * rollout.points.sum() / ended - 1:+.2f}")
    if results:
        parts += [f"{spec} {rate:.0%}" for spec, (rate, _, _) in results.items() if spec in ("random", "greedy")]
    return ", ".join(parts)


def _log_iteration(training: TrainingRun, stats: dict, rollout: Rollout, optimizer, steps: int) -> None:
    log = training.log
    for name, value in stats.items():
        log.scalar(f"loss/{name}", value, steps)
    log.scalar("train/learning_rate", optimizer.param_groups[0]["lr"], steps)
    if rollout.games_ended.sum():
        log.scalar("train/win_rate_vs_pool", rollout.points.sum() / rollout.games_ended.sum(), steps)
    for kind, ended, points in zip(KINDS, rollout.games_ended, rollout.points):
        if ended:
            log.scalar(f"train/win_rate_vs_{kind}", points / ended, steps)
    seconds = time.perf_counter() - training.started
    log.scalar("train/steps_per_second", (steps - training.start_count) / seconds, steps)


# ------------------------------------------------------------------------------ the command line


def main(argv: list[str] | None = None) -> None:
    parser = trainer_parser("fast_ppo", __doc__, default_config="quick", default_run="runs/quick")
    run_command(parser, _command, argv)


def _command(args: argparse.Namespace) -> None:
    run(TrainConfig.load(args.config, budget=command_line_budget(args)), RunRequest.from_args(args))


def run(config: TrainConfig, request: RunRequest) -> None:
    """Train in ``request.run`` (claimed), evaluate ``best.pt`` again on fresh games and write the report: what the
    command line and ``trinity train`` run, with the config each read once."""
    # the folder stays claimed until the report is written
    with claim(request.run, config, "fast_ppo", resume=request.resume, overwrite=request.overwrite) as folder:
        history = train(config, folder.path, resume=request.resume, overwrite=request.overwrite)
        last = history[-1]
        if last["steps"] < config.total_steps:
            print(
                f"stopped by max_minutes ({config.max_minutes}) at step {last['steps']:,} of "
                f"{config.total_steps:,}: --resume continues it"
            )
        minutes = last["seconds"] / 60
        print(f"after {last['steps']:,} learner steps ({minutes:.1f} min), {config.eval_games} games each:")
        print(format_results(last["results"]))
        # best.pt was chosen by noisy evaluations: measure it again on games it was not chosen on
        best, payload = load_checkpoint(folder.path / "best.pt")
        print(f"measuring best.pt (from step {int(payload['steps']):,}) again, on fresh games...", flush=True)
        results = evaluate(best, config, seed=1, progress=True)
        final = {"steps": int(payload["steps"]), "seconds": last["seconds"], "results": results}
        print(f"best.pt (from step {final['steps']:,}) on fresh games:")
        print(format_results(final["results"]))
        print(f"report: {write_report(folder.path, history, f'fast_ppo, config {request.config_name}', final)}")


if __name__ == "__main__":
    main()

"""AlphaZero-style training on the batched fast engine: network-guided search makes the targets.

This module is the loop (``train``), the report and the command line; the parts, each in its module:
the config and its pre-trained network (``training.az_config``); the replay buffer
(``training.replay_buffer``); self-play (``training.az_selfplay``: ``play_games``, a batch of games
in lockstep, every move chosen by one batched search per ply, ``trinity_env.search.az``); the
learner and the checkpoint (``training.az_learner``).

- **Self-play.** ``games_per_iteration`` games are played to the end in lockstep; at each ply
  one ``BatchedSearch`` runs over every unfinished game (one network forward pass per
  simulation for all their leaves). Each root is built from the mover's own view: in the
  play phase of open hands the position itself (nothing is hidden), in the draft (secret
  picks) or with hidden hands a determinisation of its observation (``agents.view``). The
  network plays both seats; first movers are random (``first_player: random``), and a share
  ``draft_share`` of the games starts with the draft.
- **Targets.** The policy target is Gumbel's improved policy (``mode: gumbel``) or the
  root visit distribution (``mode: puct``); the value target is the game's result for
  the mover (mixed with the search's root value by ``root_value_weight``), replaced by the
  exact solver's value (``Solver().value``) where at most ``solver_empty`` tiles are empty
  in an open-hand play phase.
- **Exact labels.** With ``label_workers: 0`` the solver runs inline, during self-play. With
  workers (``training.labelling``) a fixed pipeline keeps runs reproducible: the positions of
  iteration i that qualify enter the buffer with the fallback target and go to the workers
  right after its self-play; their exact values are written into the buffer just before the
  learner of iteration i + 1 (the trainer waits there only if the workers are not done), so
  self-play of i + 1 overlaps the solving. The learner of iteration i sees the fallback target
  for them (a lag of one iteration); a row overwritten before its label arrives keeps its new
  position. ``latest.pt`` keeps the positions still awaiting labels, solved again on resume.
- **Learner.** After each iteration, ``sample_reuse`` x (new positions) / ``batch_size``
  minibatch steps on uniform samples of the replay buffer (the last ``replay_size``
  positions): cross-entropy to the policy target plus ``value_coef`` x squared error.

The budget is ``total_games`` self-play games: it fixes the schedule (iterations, learner
steps, evaluations), so a seed gives the same weights on any machine with the same torch
build (``torch_threads`` fixes torch's thread count); ``max_minutes`` only stops a session early.
``latest.pt`` holds everything the rest of the run depends on (network, optimiser, replay
buffer, random states, evaluation history) and is written atomically every
``checkpoint_every_iterations`` and at each evaluation: a run killed outright loses at most
that many iterations, and ``--resume`` continues exactly as the run would have gone on. The run plumbing (log,
evaluation schedule, ``best.pt``, stops) is ``training.skeleton``'s.

Usage: python -m training.alphazero --config az-quick --run runs/az-quick [--resume | --overwrite]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from trinity_env.agents.az import AZAgent, AZModel, make_network, save_network
from trinity_env.agents.networks.ppo_network import CheckpointError
from trinity_env.agents.ppo import torch_threads
from trinity_env.arguments import positive_int
from trinity_env.core.writes import write_text
from trinity_env.search.solver import Solver

from .az_config import AZConfig, pretrained_weights
from .az_learner import Progress, learn, load_latest, make_optimizer, save_latest
from .az_selfplay import LocalSelfPlay, SelfPlay
from .evaluation import Results, evaluate_agent
from .labelling import Labeller
from .replay_buffer import ReplayBuffer
from .report import format_results, label, plot_learning_curve
from .run_folder import claim
from .session import RunRequest, command_line_budget, run_command, trainer_parser
from .skeleton import TrainingRun

# ------------------------------------------------------------------------------ training


def evaluate(network: AZModel, config: AZConfig, seed: int, progress: bool = False) -> Results:
    """The network's search (``eval_simulations``) against each evaluation opponent, and the endgame suite;
    ``progress``: a bar."""
    agent = AZAgent(copy.deepcopy(network), config.eval_simulations, seed=seed, name="learner")
    return evaluate_agent(agent, config, seed, progress)


def train(
    config: AZConfig,
    run: Path,
    resume: bool = False,
    progress: bool = True,
    *,
    overwrite: bool = False,
    stop_at: int | None = None,
    backend: Backend | None = None,
) -> list[dict]:
    """Train in the run folder ``run``; returns the evaluation history (``games``, ``seconds``, ``results``).

    Writes ``config.json``, ``metrics.csv``, ``latest.pt``, ``best.pt`` and TensorBoard events
    (``tb/``). ``stop_at``: end this session once that many games are played (as ``max_minutes``
    would; the schedule stays ``total_games``'s). Ctrl-C saves ``latest.pt`` and raises ``TrainingInterrupted``.
    ``backend``: where self-play and labelling run (default: this process and ``Labeller`` processes;
    ``training.alphazero_ray`` puts them on Ray actors). The run folder and checkpoint are the same either way.
    """
    weights = pretrained_weights(config)  # checked before the run folder is touched
    with (
        claim(run, config, "alphazero", resume=resume, overwrite=overwrite, checkpoint="latest.pt") as folder,
        torch_threads(config.torch_threads),
    ):
        run = folder.path
        torch.manual_seed(config.seed)
        rng = np.random.default_rng(config.seed)
        replay = ReplayBuffer(config.replay_size)
        if folder.resuming:
            network, optimizer, state = load_latest(run / "latest.pt", config, replay, rng)
        else:
            network = initial_network(config, weights)
            optimizer = make_optimizer(network, config)
            state = Progress(next_eval=config.eval_every_games)
        with TrainingRun(
            folder,
            config,
            state,
            "games",
            total=config.iterations * config.games_per_iteration,
            stop_at=stop_at,
            save_latest=lambda: save_latest(run / "latest.pt", network, optimizer, replay, rng, state),
            save_best=lambda: save_network(run / "best.pt", network, {"games": state.games}),
            evaluate=lambda seed: evaluate(network, config, seed, progress),
            record=lambda seconds, results: {
                "games": state.games,
                "learner_steps": state.learner_steps,
                "seconds": seconds,
                "results": results,
            },
            saved_at_start=True,
        ) as training:
            return _train_loop(config, training, network, optimizer, replay, rng, state, progress, backend or Backend())


def initial_network(config: AZConfig, weights: dict[str, torch.Tensor] | None = None) -> AZModel:
    """A new run's network: fresh (drawn from torch's seeded generator either way, so a seed gives the same run),
    then given ``weights`` (``pretrained_weights``) where there are some."""
    network = make_network(config.network, config.hidden, config.layers, config.tactics).eval()
    if weights is not None:
        network.load_state_dict(weights)
    return network


@dataclass
class Backend:
    """Where a run's self-play and exact labels are computed: ``selfplay(config)`` gives an object with
    ``play(network, seed, rng, solver, collect)``, ``open_hands`` and ``close()`` (``LocalSelfPlay``);
    ``labeller(workers)`` one with ``Labeller``'s ``submit``/``collect``/``seconds``/``close``."""

    selfplay: Callable[[AZConfig], Any] = LocalSelfPlay
    labeller: Callable[[int], Any] = Labeller


def exchange_labels(labeller: Labeller, replay: ReplayBuffer, played: SelfPlay, rows: np.ndarray) -> dict[str, float]:
    """The pipeline's fixed point, after an iteration's self-play and before its learner: the previous iteration's
    exact values into the buffer (waiting for the workers if need be), this one's positions to the workers."""
    figures = {"label_wait_seconds": 0.0, "labels_written": 0, "label_seconds": 0.0}
    if replay.awaiting is not None:
        started = time.perf_counter()
        values = labeller.collect()
        figures["label_wait_seconds"] = time.perf_counter() - started
        figures["label_seconds"] = labeller.seconds
        figures["labels_written"] = replay.patch(values)
    if played.to_label.size:
        replay.await_labels(played.label_positions, rows[played.to_label], played.label_games)
        labeller.submit(played.label_positions, played.label_games)
    return figures


def _train_loop(
    config: AZConfig,
    training: TrainingRun,
    network,
    optimizer,
    replay: ReplayBuffer,
    rng,
    state: Progress,
    progress: bool,
    backend: Backend,
) -> list[dict]:
    """Evaluate when due, checkpoint, then self-play one iteration and learn from it; until ``total_games``."""
    selfplay = backend.selfplay(config)
    workers = config.label_workers if config.solver_empty and selfplay.open_hands else 0
    solver = Solver() if config.solver_empty and not workers else None
    if replay.awaiting is not None and not workers:
        selfplay.close()
        raise CheckpointError("latest.pt holds positions awaiting labelling workers, but this config has none")
    # the workers start inside ``running()``: a Ctrl-C while they start is a graceful stop like any other
    with (
        contextlib.closing(selfplay),
        training.running(),
        backend.labeller(workers) if workers else nullcontext() as labeller,
    ):
        if replay.awaiting is not None:  # a resumed run: solve again what the stopped one had submitted
            labeller.submit(replay.awaiting.positions, replay.awaiting.games)
        bar = tqdm(total=training.total, initial=state.games, disable=not progress, desc="alphazero", unit="game")
        while True:
            due = state.iterations % config.checkpoint_every_iterations == 0 and not training.saved()
            if training.evaluate_save_or_stop(due):
                break
            started = time.perf_counter()
            seed = config.seed * 1_000_003 + state.iterations
            played = selfplay.play(network, seed, rng, solver, collect=labeller is not None)
            rows = replay.add(played.observations, played.masks, played.policies, played.values)
            labelling = exchange_labels(labeller, replay, played, rows) if labeller is not None else {}
            steps = max(1, round(config.sample_reuse * len(played.values) / config.batch_size))
            if config.anneal_lr:  # over the planned games: a stopped run keeps the full run's schedule
                optimizer.param_groups[0]["lr"] = config.learning_rate * (1 - 0.9 * state.games / training.total)
            learning = time.perf_counter()
            stats = learn(network, optimizer, replay, config, rng, steps)
            stats["learner_seconds"] = time.perf_counter() - learning
            state.iterations += 1
            state.games += played.games
            state.learner_steps += steps
            state.positions += len(played.values)
            bar.update(played.games)
            last_eval = ", ".join(f"{label(k)} {v[0]:.0%}" for k, v in (training.last_results or {}).items())
            bar.set_postfix_str(
                ", ".join(filter(None, [f"policy {stats['policy']:.3f}", f"value {stats['value']:.3f}", last_eval]))
            )
            _log_iteration(training, state, stats, played, time.perf_counter() - started, labelling)
    bar.close()
    return training.finish(f"after {state.games:,} games")


def _log_iteration(
    training: TrainingRun, state: Progress, stats: dict, played: SelfPlay, seconds: float, labelling: dict[str, float]
) -> None:
    log, games = training.log, state.games
    learner_seconds = stats.pop("learner_seconds")
    for name, value in stats.items():
        log.scalar(f"loss/{name}", value, games)
    log.scalar("speed/learner_seconds", learner_seconds, games)
    log.scalar("speed/learner_utilisation", learner_seconds / seconds, games)  # the rest: waiting for self-play
    log.scalar("selfplay/positions", len(played.values), games)
    log.scalar("selfplay/solved_positions", played.solved, games)
    for name, value in labelling.items():  # with labelling workers: the previous iteration's labels
        log.scalar(f"selfplay/{name}", value, games)
    log.scalar("selfplay/first_mover_wins", played.first_mover_wins, games)
    log.scalar("selfplay/moves_per_game", played.moves / played.games, games)
    log.scalar("speed/iteration_seconds", seconds, games)
    session_seconds = time.perf_counter() - training.started
    log.scalar("speed/games_per_second", (games - training.start_count) / session_seconds, games)
    log.scalar("train/learner_steps", state.learner_steps, games)
    log.scalar("train/learning_rate", stats["learning_rate"], games)


# ------------------------------------------------------------------------------ the report


def write_report(run: Path, history: list[dict], title: str) -> Path:
    """``report.md`` and ``win_rate.png`` (the learning curve: evaluations against self-play games) in ``run``."""
    plot_learning_curve(run / "win_rate.png", history, title, x="games", x_label="self-play games")
    lines = [
        f"# {title}",
        "",
        "| games | learner steps | minutes | measure | share | 95% interval |",
        "|---|---|---|---|---|---|",
    ]
    for h in history:
        for spec, (rate, low, high) in h["results"].items():
            lines.append(
                f"| {h['games']:,} | {h.get('learner_steps', 0):,} | {h['seconds'] / 60:.1f} | {label(spec)} "
                f"| {rate:.1%} | [{low:.1%}, {high:.1%}] |"
            )
    lines += ["", "![learning curve](win_rate.png)", ""]
    path = run / "report.md"
    write_text(path, "\n".join(lines))
    return path


# ------------------------------------------------------------------------------ the command line


def main(argv: list[str] | None = None) -> None:
    parser = trainer_parser("alphazero", __doc__, default_config="az-quick", default_run="runs/az-quick")
    add_stop_at_argument(parser)
    run_command(parser, _command, argv)


def add_stop_at_argument(parser: argparse.ArgumentParser) -> None:
    """``--stop-at N``: a session's part that ends at the same place on every machine (``max_minutes`` does not)."""
    parser.add_argument(
        "--stop-at",
        type=positive_int,
        default=None,
        metavar="N",
        help="end this session once N games are played (the schedule stays total_games'; --resume continues)",
    )


def _command(args: argparse.Namespace) -> None:
    run(AZConfig.load(args.config, budget=command_line_budget(args)), RunRequest.from_args(args), args.stop_at)


def run(config: AZConfig, request: RunRequest, stop_at: int | None = None) -> None:
    """Train in ``request.run`` and print how the run stands: what the command line and ``trinity train`` run."""
    run_and_report(request, config, train, "alphazero", stop_at)


def run_and_report(
    request: RunRequest, config: AZConfig, trainer: Callable[..., list[dict]], title: str, stop_at: int | None = None
) -> None:
    """Claim the run folder, train with ``trainer`` (``train``'s signature), and print how the run stands."""
    with claim(request.run, config, "alphazero", resume=request.resume, overwrite=request.overwrite) as folder:
        history = trainer(config, folder.path, resume=request.resume, overwrite=request.overwrite, stop_at=stop_at)
        last = history[-1]
        if last["games"] < config.total_games:
            at_stop = stop_at and last["games"] >= stop_at
            reason = "--stop-at" if at_stop else f"max_minutes ({config.max_minutes})"
            print(f"stopped by {reason} after {last['games']:,} of {config.total_games:,} games: --resume continues it")
        print(f"after {last['games']:,} games ({last['seconds'] / 60:.1f} min), {config.eval_games} games each:")
        print(format_results(last["results"]))
        print(f"report: {write_report(folder.path, history, f'{title}, config {request.config_name}')}")


if __name__ == "__main__":
    main()


__all__ = ["Backend", "evaluate", "main", "run", "run_and_report", "train", "write_report"]

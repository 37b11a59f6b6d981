"""AlphaZero on Ray: the same run as ``training.alphazero``, with self-play and exact labels on Ray actors.

``python -m training.alphazero_ray --config az-standard --run runs/az-standard --ray [ADDRESS] --actors N``
(or ``trinity train az-standard --ray [ADDRESS] --workers N``). Everything but where the games are played is
the single-process trainer's: the config file, the run folder and its lock, ``metrics.csv``, TensorBoard,
``latest.pt`` / ``best.pt``, the evaluations and ``--resume``, so a run can move between the two at any
checkpoint. The learner stays in this process (the driver).

- **Self-play actors** (``SelfPlayWorker``): each holds a ``FastGames`` of its share of an iteration's
  ``games_per_iteration`` lockstep games and a batched search, and each iteration receives the newest
  weights once through the object store. With one actor, the actor plays the iteration's games from the
  trainer's own seed and random stream (sent with the weights and taken back), so a run with one actor
  is the single-process run, game for game and weight for weight (tested). With ``N`` actors, actor ``k``
  deals its games from ``seed * N + k`` and draws from a stream seeded by the trainer's: the same seed
  and ``N`` give the same run; another ``N``, another run.
- **Labelling actors** (``LabelWorker``, ``label_workers`` of them): the solver processes of
  ``training.labelling`` as actors, with ``Labeller``'s interface and its split of a batch by game. Exact
  values do not depend on who computes them.
- **Faults**: actors are created with ``max_restarts=-1`` and ``max_task_retries=-1``: Ray starts a dead
  actor again and runs its call again; a call's result depends only on its arguments, so the run does not
  change. **Ctrl-C** stops at the trainer's next consistent point (``training.session.GracefulStop``), saves
  ``latest.pt``, and the actors are killed (and a local cluster this process started is shut down).
- **Address**: ``--ray`` alone (or ``--ray local``) starts a local cluster in this process; ``--ray
  ADDRESS`` (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``) joins a running one. A cluster that cannot be
  reached is one line and exit status 2, before anything is trained. Every node needs this package with
  the ``rllib`` extra installed (``pip install "trinity-towers[rllib]"``); nothing is shipped to them.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import time
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
import torch

from trinity_env.agents.az import AZModel, make_network
from trinity_env.arguments import positive_int
from trinity_env.core import ArgumentError
from trinity_env.fast.games import FastGames
from trinity_env.fast.layout import Batch
from trinity_env.search.solver import TABLE_BITS, Solver

from .alphazero import Backend, add_stop_at_argument, run_and_report, train
from .az_config import AZConfig
from .az_selfplay import SelfPlay, make_search, play_games
from .labelling import LabellingError, _warm_up, split
from .session import RunRequest, command_line_budget, run_command, trainer_parser

LOCAL = "local"
"""``--ray local`` (or ``--ray`` alone): a cluster started in this process on this machine's cores."""
ACTOR_OPTIONS = {"max_restarts": -1, "max_task_retries": -1, "num_cpus": 1}
"""Every actor: restarted when it dies, its call run again (the calls are pure), one core each."""


# ------------------------------------------------------------------------------ inside the actors


class SelfPlayWorker:
    """A self-play actor's state: its games, its search and a network the trainer's weights are loaded into."""

    def __init__(self, config: AZConfig, games: int):
        self.config = config
        torch.set_num_threads(self.config.torch_threads)
        self.network = make_network(
            self.config.network, self.config.hidden, self.config.layers, self.config.tactics
        ).eval()
        self.search = make_search(self.config, games)
        self.games = FastGames(games, draft_share=self.config.draft_share, config=self.config.env)
        self.solver: Solver | None = None

    def play(
        self, weights: dict[str, torch.Tensor], seed: int, rng_state: dict, inline: bool, collect: bool
    ) -> tuple[SelfPlay, dict, float]:
        """``play_games`` with these weights, games dealt from ``seed`` and the random stream ``rng_state``;
        the positions, the stream's state after them, and the seconds it took."""
        started = time.perf_counter()
        self.network.load_state_dict(weights)
        rng = np.random.default_rng()
        rng.bit_generator.state = rng_state
        if inline and self.solver is None:
            self.solver = Solver()
        self.games.reset(seed=seed)
        played = play_games(
            self.network, self.config, self.search, self.games, rng, self.solver if inline else None, collect=collect
        )
        return played, rng.bit_generator.state, time.perf_counter() - started


class LabelWorker:
    """A labelling actor: one solver whose transposition table lives between batches."""

    def __init__(self, table_bits: int = TABLE_BITS):
        self.solver = Solver(table_bits)
        _warm_up(self.solver)

    def values(self, arrays: tuple[np.ndarray, ...]) -> tuple[np.ndarray, float]:
        """The exact value of each position (for its player to move) and the seconds the solver took."""
        started = time.perf_counter()
        batch = Batch(*arrays)
        values = np.array([self.solver.value_of_row(batch, b) for b in range(batch.size)], np.int8)
        return values, time.perf_counter() - started


# ------------------------------------------------------------------------------ the trainer's side


def shares(total: int, parts: int) -> list[int]:
    """``total`` games in ``parts`` near-equal shares, the larger ones first."""
    return [total // parts + (k < total % parts) for k in range(parts)]


ARRAYS = ("observations", "masks", "policies", "values")


def merge(parts: list[SelfPlay]) -> SelfPlay:
    """The actors' positions as one iteration's, in actor order; game and position indices offset to stay unique."""
    if len(parts) == 1:
        return parts[0]
    positions = np.cumsum([0] + [len(p.values) for p in parts])
    games = np.cumsum([0] + [p.games for p in parts])
    played = SelfPlay(
        *(np.concatenate([getattr(p, name) for p in parts]) for name in ARRAYS),
        int(games[-1]),
        sum(p.moves for p in parts),
        sum(p.solved for p in parts),
        float(sum(p.first_mover_wins * p.games for p in parts) / games[-1]),
    )
    played.to_label = np.concatenate([p.to_label + positions[k] for k, p in enumerate(parts)])
    played.label_games = np.concatenate([p.label_games + games[k] for k, p in enumerate(parts)])
    played.label_positions = Batch(*(np.concatenate(arrays) for arrays in zip(*(p.label_positions for p in parts))))
    return played


class RaySelfPlay:
    """``LocalSelfPlay``'s interface on ``actors`` Ray actors sharing each iteration's games."""

    def __init__(self, config: AZConfig, actors: int):
        import ray

        check_actors(config, actors)
        self.ray = ray
        worker = ray.remote(**ACTOR_OPTIONS)(SelfPlayWorker)
        self.actors = [worker.remote(config, size) for size in shares(config.games_per_iteration, actors)]
        self.open_hands = config.env.open_hands
        self.actor_seconds: list[float] = []
        """Each actor's seconds of self-play in the last iteration."""
        self.wall_seconds = 0.0
        """The last iteration's self-play as the trainer waited for it."""

    def play(
        self, network: AZModel, seed: int, rng: np.random.Generator, solver: Solver | None, collect: bool
    ) -> SelfPlay:
        started = time.perf_counter()
        weights = self.ray.put({name: tensor.detach().clone() for name, tensor in network.state_dict().items()})
        n = len(self.actors)
        if n == 1:  # the trainer's own seed and stream: the single-process run
            seeds, states = [seed], [rng.bit_generator.state]
        else:
            seeds = [seed * n + k for k in range(n)]
            states = [np.random.default_rng(int(s)).bit_generator.state for s in rng.integers(0, 2**63, n)]
        calls = [
            actor.play.remote(weights, s, state, solver is not None, collect)
            for actor, s, state in zip(self.actors, seeds, states)
        ]
        results = self.ray.get(calls)
        if n == 1:
            rng.bit_generator.state = results[0][1]
        self.actor_seconds = [seconds for _, _, seconds in results]
        self.wall_seconds = time.perf_counter() - started
        return merge([played for played, _, _ in results])

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


class RayLabeller:
    """``training.labelling.Labeller``'s interface on ``workers`` Ray actors: ``submit``, then ``collect``."""

    def __init__(self, workers: int, *, table_bits: int = TABLE_BITS):
        import ray

        self.ray = ray
        worker = ray.remote(**ACTOR_OPTIONS)(LabelWorker)
        self.actors = [worker.remote(table_bits) for _ in range(workers)]
        self.seconds = 0.0
        """The actors' solving seconds for the last collected batch (summed)."""
        self._calls: list[tuple[np.ndarray, Any]] = []
        self._size = 0

    def __enter__(self) -> RayLabeller:
        return self

    def __exit__(self, *error: object) -> None:
        self.close()

    def submit(self, positions: Batch, groups: np.ndarray | None = None) -> None:
        if self._calls:
            raise LabellingError("a batch is already being labelled: collect() it first")
        self._size = positions.size
        self.seconds = 0.0
        for actor, indices in zip(self.actors, split(positions, groups, len(self.actors))):
            if indices.size:
                arrays = tuple(np.ascontiguousarray(a[indices]) for a in positions)
                self._calls.append((indices, actor.values.remote(arrays)))

    def collect(self) -> np.ndarray:
        values = np.zeros(self._size, np.int8)
        calls, self._calls = self._calls, []
        for (indices, _), (part, seconds) in zip(calls, self.ray.get([call for _, call in calls])):
            values[indices] = part
            self.seconds += seconds
        return values

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors, self._calls = [], []


CONNECT_SECONDS = 5.0
"""How long a cluster's head may take to accept a connection before ``--ray ADDRESS`` gives up."""


def _check_reachable(address: str) -> None:
    """A ``HOST:PORT`` (or ``ray://HOST:PORT``) head that accepts a TCP connection; ``ray.init`` itself would
    retry an unreachable one for minutes. ``auto`` and other forms are left to Ray, which fails at once."""
    match = re.fullmatch(r"(?:ray://)?\[?([^\[\]]+?)\]?:(\d+)", address)
    if match is None:
        return
    host, port = match.group(1), int(match.group(2))
    try:
        with socket.create_connection((host, port), timeout=CONNECT_SECONDS):
            pass
    except OSError as err:
        raise ArgumentError(f"cannot reach a Ray cluster at {address!r}: {err.strerror or err}") from None


@contextmanager
def cluster(address: str):
    """Ray for the length of a run: a local cluster started here (shut down after) or a running one joined.
    A cluster that cannot be reached raises ``ArgumentError`` (one line) before anything else starts."""
    try:
        import ray
    except ModuleNotFoundError:
        raise ArgumentError('--ray needs the rllib extra: pip install "trinity-towers[rllib]"') from None
    if ray.is_initialized():  # a caller's own session (a notebook, a test): used as it is
        yield ray
        return
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
    if address != LOCAL:
        _check_reachable(address)
    try:
        if address == LOCAL:
            ray.init(num_cpus=os.cpu_count(), **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ArgumentError(f"cannot reach a Ray cluster at {address!r}: {first}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def backend(actors: int) -> Backend:
    """The trainer's backend with ``actors`` self-play actors and ``label_workers`` labelling actors."""
    return Backend(selfplay=lambda config: RaySelfPlay(config, actors), labeller=RayLabeller)


def train_on_ray(config: AZConfig, run, address: str = LOCAL, actors: int = 1, **keywords: Any) -> list[dict]:
    """``training.alphazero.train`` with self-play and labels on Ray (``keywords``: ``train``'s)."""
    with cluster(address):
        return train(config, run, backend=backend(actors), **keywords)


# ------------------------------------------------------------------------------ the command line


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ray [ADDRESS]`` and ``--actors N``: the options ``trinity train`` passes on."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        default=LOCAL,
        metavar="ADDRESS",
        help="the cluster: 'local' (default: one started here) or an address (auto, HOST:PORT)",
    )
    parser.add_argument("--actors", type=positive_int, default=1, help="self-play actors (default 1)")


def main(argv: list[str] | None = None) -> None:
    parser = trainer_parser("alphazero_ray", __doc__, default_config="az-quick", default_run="runs/az-quick")
    add_stop_at_argument(parser)
    add_ray_arguments(parser)
    run_command(parser, _command, argv)


def check_actors(config: AZConfig, actors: int) -> None:
    """More actors than an iteration's games would leave some with nothing to play: refused in one line."""
    if actors > config.games_per_iteration:
        raise ArgumentError(f"--actors {actors} is more than the {config.games_per_iteration} games an iteration")


def _command(args: argparse.Namespace) -> None:
    config = AZConfig.load(args.config, budget=command_line_budget(args))
    run(config, RunRequest.from_args(args), args.ray, args.actors, args.stop_at)


def run(config: AZConfig, request: RunRequest, address: str, actors: int, stop_at: int | None = None) -> None:
    """Train on the Ray cluster at ``address`` with ``actors`` self-play actors: what the command line and ``trinity
    train --ray`` run."""
    check_actors(config, actors)  # before the run folder is claimed
    trainer = partial(train_on_ray, address=address, actors=actors)
    run_and_report(request, config, trainer, "alphazero on Ray", stop_at)


if __name__ == "__main__":
    main()


__all__ = ["LabelWorker", "RayLabeller", "RaySelfPlay", "SelfPlayWorker", "backend", "cluster", "train_on_ray"]

"""AlphaZero-style training on the batched fast engine: network-guided search makes the targets.

Read it top to bottom: the config; the replay buffer; self-play (``play_games``: a batch of
games in lockstep, every move chosen by one batched search per ply, ``trinity_env.search.az``);
the learner (``learn``); the checkpoint; ``train``; the command line.

- **Self-play.** ``games_per_iteration`` games are played to the end in lockstep; at each ply
  one ``BatchedSearch`` runs over every unfinished game (one network forward pass per
  simulation for all their leaves). Each root is built from the mover's own view: in the
  play phase of open hands the position itself (nothing is hidden), in the draft (secret
  picks) or with hidden hands a determinisation of its observation (``agents.view``). The
  network plays both seats; first movers are random (``first_player: random``), and a share
  ``draft_share`` of the games starts with the draft.
- **Targets.** The policy target is Gumbel's improved policy (``search: gumbel``) or the
  root visit distribution (``search: puct``); the value target is the game's result for
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
``checkpoint_every`` iterations and at each evaluation: a run killed outright loses at most
that many iterations, and ``--resume`` continues exactly as the run would have gone on. The run plumbing (log,
evaluation schedule, ``best.pt``, stops) is ``training.skeleton``'s.

Usage: python -m training.alphazero --config az-quick --run runs/az-quick [--resume | --overwrite]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch.optim import AdamW
from tqdm import tqdm

from trinity_env.agents.az import (
    MAX_SIMULATIONS,
    NETWORKS,
    AZAgent,
    AZModel,
    evaluator,
    load_network,
    make_network,
    save_network,
)
from trinity_env.agents.policy import CheckpointError
from trinity_env.agents.view import decode, determinise
from trinity_env.arguments import positive_int
from trinity_env.core.writes import write_text
from trinity_env.envs.config import make_config
from trinity_env.envs.observation import OBSERVATION_SIZE
from trinity_env.fast.convert import read_state
from trinity_env.fast.games import FastGames
from trinity_env.fast.layout import FIRST_PLAYER, PHASE, PLAY, TO_MOVE, Batch
from trinity_env.fast.tactics import tactical_batch
from trinity_env.search.az import MODES, BatchedSearch, Trees
from trinity_env.search.solver import TABLE_BITS, TABLE_SLOT_BYTES, Solver

from .config import EVALUATION_FIELDS, TrainConfigError, YAMLConfig
from .evaluation import ENDGAMES, Results, evaluate_agent, history_from_json
from .labelling import Labeller
from .report import format_results, label, plot_learning_curve
from .run_folder import claim
from .session import add_run_arguments, command_line_budget, run_command, torch_threads
from .skeleton import TrainingRun

# ------------------------------------------------------------------------------ the config

MAX_SOLVER_EMPTY = 12
"""The most empty tiles ``solver_empty`` may give (the solver's cost grows about 7-fold a tile)."""


@dataclass(frozen=True)
class AZConfig(YAMLConfig):
    """The config of ``training.alphazero`` (``configs/train/az-quick.yaml``, ``az-standard.yaml``)."""

    seed: int = 0
    """Seeds the network, the games, the search's noise and the learner's samples: same seed, same weights."""
    total_games: int = 20_000
    """Self-play games to train for: the schedule. Training runs ``ceil(total_games / games_per_iteration)``
    iterations of self-play and learning."""
    max_minutes: float = 0.0
    """A safety stop: end this session after that many minutes (0: no limit), at the end of an iteration, with
    ``latest.pt`` saved. The schedule does not depend on it; ``--resume`` continues the run exactly."""
    games_per_iteration: int = 256
    """Games played in lockstep by one iteration (the search's batch: one forward pass evaluates a leaf of each)."""
    simulations: int = 32
    """Search simulations per move in self-play."""
    search: str = "gumbel"
    """``gumbel`` (Gumbel root sampling, sequential halving, the improved policy as target) or ``puct``
    (AlphaZero: Dirichlet noise at the root, visit counts as target)."""
    max_considered: int = 16
    """Gumbel: root actions sampled for sequential halving (mctx's ``max_num_considered_actions``)."""
    c_puct: float = 1.25
    """PUCT's exploration constant (above 0)."""
    dirichlet_alpha: float = 0.3
    """PUCT: alpha of the root's Dirichlet noise in self-play (above 0)."""
    noise_fraction: float = 0.25
    """PUCT: weight of that noise in the root priors, in [0, 1]."""
    temperature_moves: int = 4
    """PUCT: the first that many moves of each game are sampled from the visit counts, later ones take the most
    visited (Gumbel samples through its Gumbel noise instead)."""
    network: str = "mlp"
    """The network's architecture (``trinity_env.agents.az.NETWORKS``): ``mlp``, a ReLU MLP on the flat
    observation, or ``board``, built on the board's structure (``trinity_env.agents.board_network``)."""
    hidden: int = 256
    """Width of the network's hidden layers (``board``: of every embedding)."""
    layers: int = 2
    """Hidden layers of the network (``board``: rounds of message passing over the grid)."""
    tactics: bool = True
    """Give each placement's logit a learned function of its tactical features (captures, domino, lanes)."""
    learning_rate: float = 1e-3
    """AdamW's step size (above 0)."""
    anneal_lr: bool = True
    """Lower the learning rate linearly to a tenth of ``learning_rate`` over ``total_games``."""
    weight_decay: float = 1e-4
    """AdamW's weight decay (at least 0)."""
    batch_size: int = 256
    """Positions per learner step."""
    sample_reuse: float = 4.0
    """Learner steps per iteration = sample_reuse x (positions the iteration added) / batch_size, rounded (above 0):
    how many times each position is sampled on average."""
    replay_size: int = 60_000
    """Positions kept in the replay buffer (the newest)."""
    value_coef: float = 1.0
    """Weight of the value loss (at least 0)."""
    solver_empty: int = 6
    """Value target from the exact solver for open-hand play positions with at most this many empty tiles
    (0: off; at most 12). Each tile more costs the solver about 7 times as much: some 0.01 s a position at 8,
    0.4 s at 10, 20 s at 12 on one core."""
    label_workers: int = 1
    """Solver processes beside self-play (``training.labelling``): the exact values of an iteration's positions
    reach the buffer before the next iteration's learner, one iteration late (see the module's docstring).
    0: solve inline during self-play, with no lag (what the trainer did before; the shipped az-standard run)."""
    root_value_weight: float = 0.0
    """The value target of positions without an exact value: (1 - w) x the game's result + w x the search's
    root value, both for the mover; in [0, 1] (0: the result alone)."""
    torch_threads: int = 1
    """torch's intra-op threads while training (fixed, so that results do not depend on the machine's core count).
    Spelt ``threads`` before: an old YAML file or ``config.json`` with ``threads`` still loads and resumes."""
    checkpoint_every: int = 1
    """Iterations between two ``latest.pt`` (what a killed run may lose)."""
    eval_every: int = 5_000
    """Games between evaluations (and at the last game)."""
    eval_games: int = 40
    """Seat-swapped games against each evaluation opponent."""
    eval_simulations: int = 64
    """Simulations per move of the evaluated agent (0: its raw policy)."""
    eval_opponents: tuple[str, ...] = ("mcts:400", "mcts:1600")
    """Agent specs to evaluate against; checked with ``agents.make``."""
    eval_endgames: bool = True
    """Also score the endgame suite (share of won positions where a winning move is chosen, no solver)."""
    eval_accuracy: bool = True
    """Also measure the network's heads against perfect play on a fixed validation set (``training.evaluation``'s
    ``EXACT`` rows: the raw policy's first choice and the value head's sign against the solver's values)."""
    tensorboard: bool = True
    """Log losses and evaluations to TensorBoard in ``RUN/tb`` (``metrics.csv`` is always written)."""
    draft_share: float = 0.25
    """With ``env: {draft: random}``: the share of self-play games that start with the draft (evaluation games
    stay dealt)."""
    env: dict[str, Any] = field(default_factory=lambda: {"draft": "random"})
    """Environment config for self-play and evaluation; checked with ``make_config``."""

    resume_may_change: ClassVar[frozenset[str]] = EVALUATION_FIELDS | {
        "total_games", "max_minutes", "eval_simulations", "checkpoint_every", "eval_accuracy"
    }  # fmt: skip
    """How long to train, the safety stop, checkpoints and what is measured: none changes what the learner sees."""

    @staticmethod
    def resume_equivalent(name: str, old: Any, new: Any) -> bool:
        """``label_workers`` may change on resume between positive counts: the labels are exact and written one
        iteration late with any number of workers (``training.labelling``), so the learner sees the same. From or to
        0 (labels inline, without the lag) it may not."""
        if name == "label_workers" and isinstance(old, int) and isinstance(new, int):
            return (old > 0) == (new > 0)
        return old == new

    renamed: ClassVar[dict[str, str]] = {"threads": "torch_threads"}
    """``threads`` is ``TrainConfig``'s ``torch_threads``: one spelling for both trainers."""

    def check(self, source: str = "config") -> None:
        self._check_common(source)
        self._check_positive(source, ("total_games", "games_per_iteration", "simulations", "max_considered",
                                      "hidden", "layers", "batch_size", "replay_size", "torch_threads",
                                      "checkpoint_every", "eval_every", "eval_games"))  # fmt: skip
        if self.network not in NETWORKS:
            raise TrainConfigError(f"{source}: field 'network' must be one of {', '.join(NETWORKS)}, "
                                   f"got {self.network!r}")  # fmt: skip
        self._check_network(source, self.network)
        if self.eval_simulations > MAX_SIMULATIONS:  # the az agent's own bound, checked before training starts
            raise TrainConfigError(f"{source}: field 'eval_simulations' must be at most {MAX_SIMULATIONS:,}, "
                                   f"got {self.eval_simulations}")  # fmt: skip
        self._check_above_zero(source, ("c_puct", "dirichlet_alpha", "learning_rate", "sample_reuse"))
        self._check_not_negative(source, ("max_minutes", "weight_decay", "value_coef", "temperature_moves",
                                          "eval_simulations"))  # fmt: skip
        self._check_not_negative(source, ("label_workers",))
        self._check_unit(source, ("noise_fraction", "draft_share", "root_value_weight"))
        self._check_evaluation(source)
        if self.search not in MODES:
            raise TrainConfigError(f"{source}: field 'search' must be one of {', '.join(MODES)}, got {self.search!r}")
        if not 0 <= self.solver_empty <= MAX_SOLVER_EMPTY:
            raise TrainConfigError(f"{source}: field 'solver_empty' must be between 0 and {MAX_SOLVER_EMPTY}, "
                                   f"got {self.solver_empty}")  # fmt: skip
        if self.replay_size < self.batch_size:
            raise TrainConfigError(f"{source}: field 'replay_size' must be at least batch_size ({self.batch_size})")
        if self.draft_share and self.env.get("draft", "pick") != "random":
            raise TrainConfigError(f"{source}: field 'draft_share' needs env draft 'random' (the others always draft)")
        self._check_processes(source, ("torch_threads", "label_workers"))
        self._check_memory(source, self.memory())

    def memory(self) -> dict[str, int]:
        """The run's largest arrays in bytes, by the field that sizes them, from their real sizes (``Replay`` and the
        search's ``Trees`` measured on one row): what the config check holds to ``core.limits``' budget. A lower
        bound: the network, the recorded games and each process's own runtime come on top."""
        entry, tree, node = _replay_entry_bytes(), *_tree_bytes()
        trees = self.games_per_iteration * (tree + node * (self.simulations + 1))
        labels = self.label_workers if self.solver_empty else 0
        return {
            f"field 'replay_size' ({self.replay_size:,} positions of {entry:,} bytes, twice while latest.pt is "
            "written)": 2 * self.replay_size * entry,
            f"field 'games_per_iteration' ({self.games_per_iteration:,} search trees of simulations + 1 = "
            f"{self.simulations + 1:,} nodes, {node:,} bytes a node)": trees,
            f"field 'label_workers' ({labels} solver tables of {TABLE_SLOT_BYTES << TABLE_BITS:,} bytes)": labels
            * (TABLE_SLOT_BYTES << TABLE_BITS),
        }  # fmt: skip

    @property
    def iterations(self) -> int:
        return math.ceil(self.total_games / self.games_per_iteration)


def _replay_entry_bytes() -> int:
    """Bytes one position takes in the replay buffer (its arrays, measured on a buffer of one)."""
    one = Replay(1)
    return sum(int(a.nbytes) for a in (one.observations, one.masks, one.policies, one.values))


def _tree_bytes() -> tuple[int, int]:
    """Bytes one game's search tree takes: apart from its nodes, and per node (``Trees`` measured on one game)."""
    one, two = (sum(a.nbytes for a in vars(Trees(1, nodes)).values() if isinstance(a, np.ndarray)) for nodes in (1, 2))
    return one - (two - one), two - one


# ------------------------------------------------------------------------------ the replay buffer


@dataclass
class Awaiting:
    """Positions of the buffer whose exact values the labelling workers are computing (``training.labelling``)."""

    positions: Batch
    """The positions themselves (fast-engine rows), what the workers solve."""
    rows: np.ndarray
    """Each one's row in the buffer; -1 once that row holds a newer position (its label is then dropped)."""
    games: np.ndarray
    """Each one's game in its iteration (the workers keep a game's positions together)."""


class Replay:
    """The newest ``capacity`` positions: observation, legal mask, policy target, value target; and the positions
    among them that await their exact value (``awaiting``: one iteration's, with labelling workers)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.observations = np.zeros((capacity, OBSERVATION_SIZE), np.int8)
        self.masks = np.zeros((capacity, 256), np.int8)
        self.policies = np.zeros((capacity, 256), np.float16)
        self.values = np.zeros(capacity, np.float32)
        self.size = 0
        self.next = 0
        self.awaiting: Awaiting | None = None

    def add(self, observations: np.ndarray, masks: np.ndarray, policies: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Add the positions (the oldest overwritten once full); each one's row (-1: overwritten by this call)."""
        placed = np.full(len(values), -1, np.int64)
        for start in range(0, len(values), self.capacity):
            part = slice(start, min(start + self.capacity, len(values)))
            count = part.stop - part.start
            rows = (self.next + np.arange(count)) % self.capacity
            self.observations[rows], self.masks[rows] = observations[part], masks[part]
            self.policies[rows], self.values[rows] = policies[part], values[part]
            self.next = int((self.next + count) % self.capacity)
            self.size = min(self.capacity, self.size + count)
            placed[part] = rows
            if self.awaiting is not None:  # a row that now holds a new position must not get the old one's label
                self.awaiting.rows[np.isin(self.awaiting.rows, rows)] = -1
        placed[: max(0, len(values) - self.capacity)] = -1  # more than a buffer: the first ones are gone already
        return placed

    def await_labels(self, positions: Batch, rows: np.ndarray, games: np.ndarray) -> None:
        """Note that the positions at ``rows`` (``positions``, of ``games``) await their exact values."""
        if self.awaiting is not None:
            raise RuntimeError("the buffer already awaits labels: patch() them first")
        self.awaiting = Awaiting(positions, np.array(rows, np.int64), np.array(games, np.int64))

    def patch(self, values: np.ndarray) -> int:
        """Write the awaited exact ``values`` (in ``awaiting``'s order) where their rows still hold those positions;
        how many were written."""
        if self.awaiting is None or len(values) != len(self.awaiting.rows):
            raise RuntimeError("these labels are not the ones the buffer awaits")
        keep = self.awaiting.rows >= 0
        self.values[self.awaiting.rows[keep]] = np.asarray(values, np.float32)[keep]
        self.awaiting = None
        return int(keep.sum())

    def state_dict(self) -> dict:
        n = self.size
        state = {"observations": torch.from_numpy(self.observations[:n].copy()),
                 "masks": torch.from_numpy(self.masks[:n].copy()),
                 "policies": torch.from_numpy(self.policies[:n].copy()),
                 "values": torch.from_numpy(self.values[:n].copy()), "next": self.next}  # fmt: skip
        if self.awaiting is not None:  # only those whose rows still hold them: the rest would be dropped anyway
            keep = self.awaiting.rows >= 0
            awaiting = {name: torch.from_numpy(array[keep].copy())
                        for name, array in zip(Batch._fields, self.awaiting.positions)}  # fmt: skip
            state["awaiting"] = awaiting | {"rows": torch.from_numpy(self.awaiting.rows[keep].copy()),
                                            "games": torch.from_numpy(self.awaiting.games[keep].copy())}  # fmt: skip
        return state

    def load_state_dict(self, state: dict, path: Path) -> None:
        try:
            n = int(state["values"].shape[0])
            if n > self.capacity or not 0 <= int(state["next"]) < max(self.capacity, 1):
                raise ValueError(f"{n} positions for a buffer of {self.capacity}")
            self.observations[:n] = state["observations"].numpy()
            self.masks[:n] = state["masks"].numpy()
            self.policies[:n] = state["policies"].numpy()
            self.values[:n] = state["values"].numpy()
            self.size, self.next = n, int(state["next"])
            self.awaiting = None
            if "awaiting" in state:
                self._load_awaiting(state["awaiting"])
        except (KeyError, ValueError, TypeError, AttributeError, RuntimeError) as err:
            raise CheckpointError(f"{path}: its replay buffer is damaged or does not fit ({err})") from None

    def _load_awaiting(self, state: dict) -> None:
        empty = Batch.empty(0)
        positions = Batch(*(state[name].numpy().astype(np.int8, copy=True) for name in Batch._fields))
        rows, games = state["rows"].numpy().astype(np.int64), state["games"].numpy().astype(np.int64)
        count = len(rows)
        if any(a.shape != (count, *e.shape[1:]) for a, e in zip(positions, empty)) or games.shape != (count,):
            raise ValueError("the positions awaiting labels do not fit together")
        if count and not (rows.min() >= 0 and rows.max() < self.size and len(np.unique(rows)) == count):
            raise ValueError("the positions awaiting labels name rows outside the buffer")
        self.awaiting = Awaiting(positions, rows, games)


# ------------------------------------------------------------------------------ self-play


@dataclass
class SelfPlay:
    """What one iteration of self-play produced."""

    observations: np.ndarray
    masks: np.ndarray
    policies: np.ndarray
    values: np.ndarray
    games: int
    moves: int
    solved: int
    """Positions given the solver's value: at once (inline), or later by the labelling workers (``to_label``)."""
    first_mover_wins: float
    to_label: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """``collect``: the positions (indices into the arrays above) that await the solver; they hold the fallback."""
    label_positions: Batch = field(default_factory=lambda: Batch.empty(0))
    """``collect``: those positions as fast-engine rows, in the same order."""
    label_games: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """``collect``: each one's game (its index in the batch of games)."""


class LocalSelfPlay:
    """Self-play in the trainer's own process: one ``FastGames`` of ``games_per_iteration`` lockstep games and
    one batched search (``training.alphazero_ray`` has the same interface on Ray actors)."""

    def __init__(self, config: AZConfig):
        self.config = config
        self.search = make_search(config)
        self.games = FastGames(config.games_per_iteration, draft_share=config.draft_share, **config.env)
        self.open_hands = self.games.config.open_hands

    def play(self, network: AZModel, seed: int, rng: np.random.Generator, solver: Solver | None,
             collect: bool) -> SelfPlay:  # fmt: skip
        """One iteration's games, dealt from ``seed``: ``play_games`` on freshly reset games."""
        self.games.reset(seed=seed)
        return play_games(network, self.config, self.search, self.games, rng, solver, collect=collect)

    def close(self) -> None:
        """Nothing to release in one process."""


def make_search(config: AZConfig, games: int | None = None) -> BatchedSearch:
    """The batched search of ``games`` lockstep games (default: an iteration's)."""
    open_hands = make_config(config.env).open_hands
    return BatchedSearch(games or config.games_per_iteration, config.simulations, mode=config.search,
                         max_considered=config.max_considered, c_puct=config.c_puct, open_hands=open_hands)  # fmt: skip


def play_games(
    network: AZModel, config: AZConfig, search: BatchedSearch, games: FastGames, rng: np.random.Generator,
    solver: Solver | None, *, collect: bool = False,
) -> SelfPlay:  # fmt: skip
    """Play every game of ``games`` (freshly reset) to its end, one batched search per ply; the positions.

    The positions that qualify for an exact value (``solver_empty``) get ``solver``'s, or with ``collect`` keep the
    fallback target and are returned for the labelling workers (``SelfPlay.to_label``). Neither changes the games.
    """
    evaluate = evaluator(network)
    open_hands = games.config.open_hands
    count = games.num_games
    active = np.ones(count, bool)
    plies = np.zeros(count, np.int64)
    records: list[tuple[np.ndarray, ...]] = []  # per ply: game ids, movers, observations, masks, policies, exact
    labels: list[Batch] = []  # values, root values, awaiting labels; and per ply the positions awaiting labels
    outcome = np.full(count, -1, np.int64)
    first = games.batch.info[:, FIRST_PLAYER].copy()  # drawn when the game starts
    solved = 0
    while active.any():
        idx = np.flatnonzero(active)
        observations, masks = games.observations()[idx], games.masks()[idx]
        movers = games.batch.info[idx, TO_MOVE].astype(np.int64)
        choice = masks.sum(axis=1) > 1
        roots = Batch.empty(idx.size)
        for j, g in enumerate(idx):
            if open_hands and games.batch.info[g, PHASE] == PLAY:  # nothing is hidden from the mover
                for target, source in zip(roots, games.batch):
                    target[j] = source[g]
            else:  # build the root from the mover's observation only; deal what it cannot see
                world = determinise(decode(observations[j]), rng)
                for target, source in zip(roots, world):
                    target[j] = source[0]
        result = search.run(roots, evaluate, rng, gumbel_scale=1.0, noise_alpha=config.dirichlet_alpha,
                            noise_fraction=config.noise_fraction if config.search == "puct" else 0.0)  # fmt: skip
        if config.search == "gumbel":
            actions, targets = result.action.copy(), result.policy
        else:
            visits = result.visits.astype(np.float64)
            targets = (visits / visits.sum(axis=1, keepdims=True)).astype(np.float32)
            actions = visits.argmax(axis=1)
            for j, g in enumerate(idx):
                if plies[g] < config.temperature_moves:
                    actions[j] = rng.choice(256, p=visits[j] / visits[j].sum())
        values = np.full(idx.size, np.nan, np.float32)
        awaiting = np.zeros(idx.size, bool)
        if (solver is not None or collect) and open_hands:
            for j, g in enumerate(idx):
                empty = int((games.batch.owner[g] == -1).sum())
                if choice[j] and games.batch.info[g, PHASE] == PLAY and empty <= config.solver_empty:
                    if collect:
                        awaiting[j] = True
                    else:
                        values[j] = solver.value(read_state(games.batch, int(g)))
                    solved += 1
        if awaiting.any():
            labels.append(Batch(*(array[idx[awaiting]] for array in games.batch)))  # copies, before the step
        keep = choice
        records.append((idx[keep], movers[keep], observations[keep], masks[keep], targets[keep], values[keep],
                        result.value[keep], awaiting[keep]))  # fmt: skip
        step = games.step(actions, games=idx)
        plies[idx] += 1
        ended = idx[step.terminated[idx]]
        outcome[ended] = step.winner[ended]
        active[ended] = False
    ids, movers, observations, masks, policies, values, roots, awaiting = (np.concatenate(p) for p in zip(*records))
    fallback = np.where(outcome[ids] == -1, 0.0, np.where(outcome[ids] == movers, 1.0, -1.0))
    if config.root_value_weight:  # the search's value of the root, for its mover: the game's own estimate
        fallback = (1 - config.root_value_weight) * fallback + config.root_value_weight * roots.astype(np.float64)
    values = np.where(np.isnan(values), fallback, values).astype(np.float32)
    played = SelfPlay(observations, masks, policies, values, count, int(plies.sum()), solved,
                      float(np.mean(outcome == first)))  # fmt: skip
    if labels:
        played.to_label = np.flatnonzero(awaiting)
        played.label_positions = Batch(*(np.concatenate(arrays) for arrays in zip(*labels)))
        played.label_games = ids[played.to_label]
    return played


# ------------------------------------------------------------------------------ the learner


def learn(network: AZModel, optimizer, replay: Replay, config: AZConfig, rng: np.random.Generator,
          steps: int) -> dict[str, float]:  # fmt: skip
    """``steps`` minibatch steps on uniform samples of the buffer; the mean losses."""
    network.train()
    sums = dict.fromkeys(("policy", "value", "target_entropy"), 0.0)
    for _ in range(steps):
        rows = np.sort(rng.integers(0, replay.size, config.batch_size))
        observations = replay.observations[rows]
        tactical = torch.from_numpy(tactical_batch(observations)) if config.tactics else None
        logits, value = network(torch.from_numpy(observations), torch.from_numpy(replay.masks[rows]), tactical)
        target = torch.from_numpy(replay.policies[rows].astype(np.float32))
        target = target / target.sum(dim=1, keepdim=True).clamp_min(1e-8)
        log_probs = torch.log_softmax(logits, dim=1)
        policy_loss = -(target * log_probs).sum(dim=1).mean()
        value_loss = (value - torch.from_numpy(replay.values[rows])).pow(2).mean()
        loss = policy_loss + config.value_coef * value_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            sums["policy"] += policy_loss.item()
            sums["value"] += value_loss.item()
            sums["target_entropy"] += -(target * torch.log(target.clamp_min(1e-12))).sum(dim=1).mean().item()
    network.eval()
    means = {name: total / max(steps, 1) for name, total in sums.items()}
    return means | {"learning_rate": optimizer.param_groups[0]["lr"]}


# ------------------------------------------------------------------------------ the checkpoint


@dataclass
class Progress:
    """Where a run stands: what ``latest.pt`` keeps besides the network, optimiser, buffer and random states."""

    iterations: int = 0
    games: int = 0
    learner_steps: int = 0
    positions: int = 0
    seconds: float = 0.0
    """Training time of the run so far (all sessions), at the last checkpoint."""
    best: float = -1.0
    """The best ``selection_score`` so far (``best.pt``'s)."""
    next_eval: int = 0
    history: list[dict] = field(default_factory=list)


def save_latest(path: Path, network, optimizer, replay: Replay, rng: np.random.Generator, progress: Progress) -> None:
    """``latest.pt``: everything the rest of the run depends on, written atomically."""
    extra = {
        "iterations": progress.iterations,
        "games": progress.games,
        "learner_steps": progress.learner_steps,
        "positions": progress.positions,
        "seconds": progress.seconds,
        "best": progress.best,
        "next_eval": progress.next_eval,
        "history": json.dumps(progress.history),
        "optimizer": optimizer.state_dict(),
        "replay": replay.state_dict(),
        "rng": json.dumps(rng.bit_generator.state),
        "torch_rng": torch.get_rng_state(),
    }
    save_network(path, network, extra)


def load_latest(path: Path, config: AZConfig, replay: Replay, rng: np.random.Generator):
    """The network, optimiser and progress of ``latest.pt``; restores the buffer and the random states."""
    network, payload = load_network(path)
    shape = (network.architecture, network.hidden, network.layers, network.tactics)
    if shape != (config.network, config.hidden, config.layers, config.tactics):
        raise CheckpointError(f"{path} holds another network than the config's")
    try:
        optimizer = make_optimizer(network, config)
        optimizer.load_state_dict(payload["optimizer"])
        replay.load_state_dict(payload["replay"], path)
        rng.bit_generator.state = json.loads(payload["rng"])
        torch.set_rng_state(payload["torch_rng"])
        progress = Progress(
            *(int(payload[k]) for k in ("iterations", "games", "learner_steps", "positions")),
            float(payload["seconds"]), float(payload["best"]), int(payload["next_eval"]),
            history_from_json(json.loads(payload["history"])),
        )  # fmt: skip
    except CheckpointError:
        raise
    except (KeyError, ValueError, TypeError, RuntimeError) as err:
        raise CheckpointError(f"{path} is not a resumable alphazero checkpoint ({type(err).__name__}: {err})") from None
    return network, optimizer, progress


# ------------------------------------------------------------------------------ training


def make_optimizer(network: AZModel, config: AZConfig) -> AdamW:
    return AdamW(network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)


def evaluate(network: AZModel, config: AZConfig, seed: int) -> Results:
    """The network's search (``eval_simulations``) against each evaluation opponent, and the endgame suite."""
    agent = AZAgent(copy.deepcopy(network), config.eval_simulations, seed=seed, name="learner")
    return evaluate_agent(agent, config, seed)


def train(config: AZConfig, run: Path, resume: bool = False, progress: bool = True, *, overwrite: bool = False,
          stop_at: int | None = None, backend: Backend | None = None) -> list[dict]:  # fmt: skip
    """Train in the run folder ``run``; returns the evaluation history (``games``, ``seconds``, ``results``).

    Writes ``config.json``, ``metrics.csv``, ``latest.pt``, ``best.pt`` and TensorBoard events
    (``tb/``). ``stop_at``: end this session once that many games are played (as ``max_minutes``
    would; the schedule stays ``total_games``'s). Ctrl-C saves ``latest.pt`` and raises ``TrainingInterrupted``.
    ``backend``: where self-play and labelling run (default: this process and ``Labeller`` processes;
    ``training.alphazero_ray`` puts them on Ray actors). The run folder and checkpoint are the same either way.
    """
    with (
        claim(run, config, "alphazero", resume=resume, overwrite=overwrite, checkpoint="latest.pt") as folder,
        torch_threads(config.torch_threads),
    ):
        run = folder.path
        torch.manual_seed(config.seed)
        rng = np.random.default_rng(config.seed)
        replay = Replay(config.replay_size)
        if folder.resuming:
            network, optimizer, state = load_latest(run / "latest.pt", config, replay, rng)
        else:
            network = make_network(config.network, config.hidden, config.layers, config.tactics).eval()
            optimizer = make_optimizer(network, config)
            state = Progress(next_eval=config.eval_every)
        with TrainingRun(
            folder, config, state, "games", total=config.iterations * config.games_per_iteration, stop_at=stop_at,
            save_latest=lambda: save_latest(run / "latest.pt", network, optimizer, replay, rng, state),
            save_best=lambda: save_network(run / "best.pt", network, {"games": state.games}),
            evaluate=lambda seed: evaluate(network, config, seed),
            record=lambda seconds, results: {"games": state.games, "steps": state.games,
                                             "learner_steps": state.learner_steps, "seconds": seconds,
                                             "results": results},
            saved_at_start=True,
        ) as training:  # fmt: skip
            return _train_loop(config, training, network, optimizer, replay, rng, state, progress,
                               backend or Backend())  # fmt: skip


@dataclass
class Backend:
    """Where a run's self-play and exact labels are computed: ``selfplay(config)`` gives an object with
    ``play(network, seed, rng, solver, collect)``, ``open_hands`` and ``close()`` (``LocalSelfPlay``);
    ``labeller(workers)`` one with ``Labeller``'s ``submit``/``collect``/``seconds``/``close``."""

    selfplay: Callable[[AZConfig], Any] = LocalSelfPlay
    labeller: Callable[[int], Any] = Labeller


def _train_loop(config: AZConfig, training: TrainingRun, network, optimizer, replay: Replay, rng, state: Progress,
                progress: bool, backend: Backend) -> list[dict]:  # fmt: skip
    """Evaluate when due, checkpoint, then self-play one iteration and learn from it; until ``total_games``."""
    selfplay = backend.selfplay(config)
    workers = config.label_workers if config.solver_empty and selfplay.open_hands else 0
    solver = Solver() if config.solver_empty and not workers else None
    if replay.awaiting is not None and not workers:
        selfplay.close()
        raise CheckpointError("latest.pt holds positions awaiting labelling workers, but this config has none")
    last_eval = ""
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
            due = state.iterations % config.checkpoint_every == 0 and not training.saved()
            if training.evaluation_due():
                results = training.evaluate()
                if results is not None:
                    last_eval = ", ".join(f"{label(k)} {v[0]:.0%}" for k, v in results.items())
                due = True
            if due:
                training.checkpoint()
            if training.should_stop():
                break
            started = time.perf_counter()
            seed = config.seed * 1_000_003 + state.iterations
            played = selfplay.play(network, seed, rng, solver, collect=labeller is not None)
            rows = replay.add(played.observations, played.masks, played.policies, played.values)
            labelling = _labels(labeller, replay, played, rows) if labeller is not None else {}
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
            bar.set_postfix_str(f"policy {stats['policy']:.3f}, value {stats['value']:.3f}, " + last_eval)
            _log_iteration(training, state, stats, played, time.perf_counter() - started, labelling)
    bar.close()
    return training.finish(f"after {state.games:,} games")


def _labels(labeller: Labeller, replay: Replay, played: SelfPlay, rows: np.ndarray) -> dict[str, float]:
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


def _log_iteration(training: TrainingRun, state: Progress, stats: dict, played: SelfPlay, seconds: float,
                   labelling: dict[str, float]) -> None:  # fmt: skip
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
            lines.append(f"| {h['games']:,} | {h.get('learner_steps', 0):,} | {h['seconds'] / 60:.1f} | {label(spec)} "
                         f"| {rate:.1%} | [{low:.1%}, {high:.1%}] |")  # fmt: skip
    lines += ["", "![learning curve](win_rate.png)", ""]
    path = run / "report.md"
    write_text(path, "\n".join(lines))
    return path


# ------------------------------------------------------------------------------ the command line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.alphazero", description=__doc__.splitlines()[0])
    add_run_arguments(parser, default_config="az-quick", default_run="runs/az-quick", resume=True)
    add_stop_at_argument(parser)
    run_command(parser, _command, argv)


def add_stop_at_argument(parser: argparse.ArgumentParser) -> None:
    """``--stop-at N``: a session's part that ends at the same place on every machine (``max_minutes`` does not)."""
    parser.add_argument(
        "--stop-at", type=positive_int, default=None, metavar="N",
        help="end this session once N games are played (the schedule stays total_games'; --resume continues)",
    )  # fmt: skip


def _command(args: argparse.Namespace) -> None:
    config = AZConfig.load(args.config, budget=command_line_budget(args))
    run_and_report(args, config, train, "alphazero")


def run_and_report(args: argparse.Namespace, config: AZConfig, trainer: Callable[..., list[dict]], title: str) -> None:
    """Claim the run folder, train with ``trainer`` (``train``'s signature), and print how the run stands."""
    with claim(args.run, config, "alphazero", resume=args.resume, overwrite=args.overwrite) as folder:
        history = trainer(config, folder.path, resume=args.resume, overwrite=args.overwrite, stop_at=args.stop_at)
        last = history[-1]
        if last["games"] < config.total_games:
            at_stop = args.stop_at and last["games"] >= args.stop_at
            reason = "--stop-at" if at_stop else f"max_minutes ({config.max_minutes})"
            print(f"stopped by {reason} after {last['games']:,} of {config.total_games:,} games: --resume continues it")
        print(f"after {last['games']:,} games ({last['seconds'] / 60:.1f} min), {config.eval_games} games each:")
        print(format_results(last["results"]))
        print(f"report: {write_report(folder.path, history, f'{title}, config {args.config}')}")


if __name__ == "__main__":
    main()


__all__ = ["ENDGAMES", "AZConfig", "Backend", "LocalSelfPlay", "Replay", "learn", "play_games", "train"]

"""The AlphaZero trainer's config (``configs/train/az-quick.yaml``, ``az-standard.yaml``): its fields, their checks
and the memory its largest arrays take (``AZConfig.memory``, held to ``core.limits``' budget when it is loaded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from trinity_env.agents.az import (
    MAX_SIMULATIONS,
    NETWORKS,
    SEARCH_PRECISIONS,
    check_network,
    load_network,
    resolve_checkpoint,
)
from trinity_env.agents.networks.ppo_network import CheckpointError
from trinity_env.agents.networks.precision import installed
from trinity_env.search.az import SearchMode
from trinity_env.search.az.tree import Trees
from trinity_env.search.solver import TABLE_BITS, TABLE_SLOT_BYTES
from trinity_env.spec.config import DraftMode, EnvConfig, make_config

from .config import EVALUATION_FIELDS, TrainConfigError, TrainerFields, YAMLConfig
from .replay_buffer import ReplayBuffer

MAX_SOLVER_EMPTY = 12
"""The most empty tiles ``solver_empty`` may give (the solver's cost grows about 7-fold a tile)."""


@dataclass(frozen=True)
class AZConfig(TrainerFields):
    """The config of ``training.alphazero`` (``configs/train/az-quick.yaml``, ``az-standard.yaml``): the fields of
    ``TrainerFields`` (the seed and the evaluation) and these."""

    trainer: ClassVar[str] = "alphazero"
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
    mode: SearchMode = SearchMode.GUMBEL
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
    observation, or ``board``, built on the board's structure (``trinity_env.agents.networks.board_network``)."""
    hidden: int = 256
    """Width of the network's hidden layers (``board``: of every embedding)."""
    layers: int = 2
    """Hidden layers of the network (``board``: rounds of message passing over the grid)."""
    tactics: bool = True
    """Give each placement's logit a learned function of its tactical features (captures, domino, lanes)."""
    precision: str = "float32"
    """The products of the board network's evaluation in self-play's search
    (``trinity_env.agents.networks.board_fast``):
    ``float32`` (the forward pass's figures to float rounding, the same on every processor to that rounding),
    ``int8`` (the rounds' products in int8 through onnxruntime, within ``INT8_LOGIT_TOLERANCE``: faster than
    float32 where the processor has VNNI, by what ``benchmarks.az --reference`` measures),
    ``bfloat16``, or ``fastest`` (``search_precision``: the processor's fastest). The shipped configs' figures were
    measured with float32; the agent itself plays in float32 whatever trained it."""
    initial_network: str = ""
    """An ``az`` network file to start a new run from instead of a fresh network: one pre-trained on solved
    positions by ``python -m training.pretrain`` (its architecture must be ``network``/``hidden``/``layers``/
    ``tactics``). Read when a run starts; a resumed run continues from its own ``latest.pt``."""
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
    reach the buffer before the next iteration's learner, one iteration late (see ``training.alphazero``'s docstring).
    0: solve inline during self-play, with no lag (what the trainer did before; the shipped az-standard run)."""
    root_value_weight: float = 0.0
    """The value target of positions without an exact value: (1 - w) x the game's result + w x the search's
    root value, both for the mover; in [0, 1] (0: the result alone)."""
    torch_threads: int = 1
    """torch's intra-op threads while training (fixed, so that results do not depend on the machine's core count).
    Spelt ``threads`` before: that name is refused naming this one (``retired``)."""
    checkpoint_every_iterations: int = 1
    """Iterations between two ``latest.pt`` (what a killed run may lose)."""
    eval_every_games: int = 5_000
    """Self-play games between evaluations (and at the last game)."""
    eval_simulations: int = 64
    """Simulations per move of the evaluated agent (0: its raw policy)."""
    eval_accuracy: bool = True
    """Also measure the network's heads against perfect play on a fixed validation set (``training.evaluation``'s
    ``EXACT`` rows: the raw policy's first choice and the value head's sign against the solver's values)."""
    draft_share: float = 0.25
    """With ``env: {draft: dealt}``: the share of self-play games that start with the draft (evaluation games
    stay dealt)."""
    env: EnvConfig = field(default_factory=lambda: make_config(draft=DraftMode.DEALT))
    """Environment config for self-play and evaluation: a YAML mapping parsed once into an ``EnvConfig``."""
    # this trainer's defaults for fields that TrainerFields declares: fewer games, against MCTS
    eval_games: int = 40
    eval_opponents: tuple[str, ...] = ("mcts:400", "mcts:1600")

    resume_may_change: ClassVar[frozenset[str]] = EVALUATION_FIELDS | {
        "eval_every_games",
        "total_games",
        "max_minutes",
        "eval_simulations",
        "checkpoint_every_iterations",
        "eval_accuracy",
        "initial_network",
    }
    """How long to train, the safety stop, checkpoints and what is measured: none changes what the learner sees."""

    @staticmethod
    def resume_equivalent(name: str, old: Any, new: Any) -> bool:
        """``label_workers`` may change on resume between positive counts: the labels are exact and written one
        iteration late with any number of workers (``training.labelling``), so the learner sees the same. From or to
        0 (labels inline, without the lag) it may not."""
        if name == "label_workers" and isinstance(old, int) and isinstance(new, int):
            return (old > 0) == (new > 0)
        return YAMLConfig.resume_equivalent(name, old, new)

    retired: ClassVar[dict[str, str]] = {
        "eval_every": "eval_every_games",
        "threads": "torch_threads",
        "checkpoint_every": "checkpoint_every_iterations",
        "search": "mode",
    }
    """``threads`` is ``TrainConfig``'s ``torch_threads``: one spelling for both trainers; ``search`` is ``mode``, as
    the az spec and ``BatchedSearch`` call the root rule; ``checkpoint_every`` names its unit."""

    def check(self, source: str = "config") -> None:
        super().check(source)
        self._check_bound(
            source,
            "at least 1",
            (
                "total_games",
                "games_per_iteration",
                "simulations",
                "max_considered",
                "hidden",
                "layers",
                "batch_size",
                "replay_size",
                "torch_threads",
                "checkpoint_every_iterations",
                "eval_every_games",
            ),
        )
        if self.network not in NETWORKS:
            raise TrainConfigError(
                f"{source}: field 'network' must be one of {', '.join(NETWORKS)}, got {self.network!r}"
            )
        self._check_network(source, self.network)
        if self.precision not in SEARCH_PRECISIONS:
            raise TrainConfigError(
                f"{source}: field 'precision' must be one of {', '.join(SEARCH_PRECISIONS)}, got {self.precision!r}"
            )
        if self.precision != "float32" and self.network != "board":
            raise TrainConfigError(f"{source}: field 'precision' {self.precision!r} needs network 'board'")
        if self.precision == "int8" and not all(map(installed, ("onnxruntime", "onnx"))):
            raise TrainConfigError(
                f"{source}: field 'precision' int8 needs onnxruntime and onnx: pip install 'trinity-towers[onnx]'"
            )
        if not isinstance(self.initial_network, str) or len(self.initial_network) > 4096:
            raise TrainConfigError(
                f"{source}: field 'initial_network' must be a file's path, got {self.initial_network!r}"
            )
        if self.eval_simulations > MAX_SIMULATIONS:  # the az agent's own bound, checked before training starts
            raise TrainConfigError(
                f"{source}: field 'eval_simulations' must be at most {MAX_SIMULATIONS:,}, got {self.eval_simulations}"
            )
        self._check_bound(source, "above 0", ("c_puct", "dirichlet_alpha", "learning_rate", "sample_reuse"))
        not_negative = (
            "max_minutes",
            "weight_decay",
            "value_coef",
            "temperature_moves",
            "eval_simulations",
            "label_workers",
        )
        self._check_bound(source, "at least 0", not_negative)
        self._check_bound(source, "between 0 and 1", ("noise_fraction", "draft_share", "root_value_weight"))
        if not 0 <= self.solver_empty <= MAX_SOLVER_EMPTY:
            raise TrainConfigError(
                f"{source}: field 'solver_empty' must be between 0 and {MAX_SOLVER_EMPTY}, got {self.solver_empty}"
            )
        if self.replay_size < self.batch_size:
            raise TrainConfigError(f"{source}: field 'replay_size' must be at least batch_size ({self.batch_size})")
        if self.draft_share and self.env.draft is not DraftMode.DEALT:
            raise TrainConfigError(f"{source}: field 'draft_share' needs env draft 'dealt' (the others always draft)")
        self._check_processes(source, ("torch_threads", "label_workers"))
        self._check_memory(source, self.memory())

    def check_files(self) -> None:
        """``initial_network``, where it names a file, loaded and checked as a new run loads it
        (``pretrained_weights``): before the run folder is touched (``YAMLConfig.check_files``)."""
        if self.initial_network:
            pretrained_weights(self)

    def memory(self) -> dict[str, int]:
        """The run's largest arrays in bytes, by the field that sizes them, from their real sizes (``ReplayBuffer``
        and the search's ``Trees`` measured on one row): what the config check holds to ``core.limits``' budget. A
        lower bound: the network, the recorded games and each process's own runtime come on top."""
        entry, tree, node = ReplayBuffer.position_bytes(), *_tree_bytes()
        trees = self.games_per_iteration * (tree + node * (self.simulations + 1))
        labels = self.label_workers if self.solver_empty else 0
        return {
            f"field 'replay_size' ({self.replay_size:,} positions of {entry:,} bytes, twice while latest.pt is "
            "written)": 2 * self.replay_size * entry,
            f"field 'games_per_iteration' ({self.games_per_iteration:,} search trees of simulations + 1 = "
            f"{self.simulations + 1:,} nodes, {node:,} bytes a node)": trees,
            f"field 'label_workers' ({labels} solver tables of {TABLE_SLOT_BYTES << TABLE_BITS:,} bytes)": labels
            * (TABLE_SLOT_BYTES << TABLE_BITS),
        }

    @property
    def iterations(self) -> int:
        return math.ceil(self.total_games / self.games_per_iteration)


def _tree_bytes() -> tuple[int, int]:
    """Bytes one game's search tree takes: apart from its nodes, and per node (``Trees`` measured on one game)."""
    one, two = (sum(a.nbytes for a in vars(Trees(1, nodes)).values() if isinstance(a, np.ndarray)) for nodes in (1, 2))
    return one - (two - one), two - one


def pretrained_weights(config: AZConfig) -> dict[str, torch.Tensor] | None:
    """The weights of ``config.initial_network`` (a pre-trained network) where it names a file, checked to be of the
    config's architecture and to keep the output contract through the config's precision (``check_network``: no
    NaN from finite weights that overflow); ``CheckpointError`` in one line otherwise; ``None`` without one."""
    if not config.initial_network:
        return None
    path = resolve_checkpoint(config.initial_network)
    loaded, _ = load_network(path)
    shape = (config.network, config.hidden, config.layers, config.tactics)
    found = (loaded.architecture, loaded.hidden, loaded.layers, bool(getattr(loaded, "tactics", False)))
    if found != shape:
        raise CheckpointError(
            f"initial_network {config.initial_network}: a {found[0]} network of hidden {found[1]}, layers "
            f"{found[2]}, tactics {found[3]}; the config asks for {shape[0]}, hidden {shape[1]}, layers {shape[2]}, "
            f"tactics {shape[3]}"
        )
    check_network(f"initial_network {path}", loaded, config.precision)
    return loaded.state_dict()

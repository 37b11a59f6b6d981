"""One typed training config, loaded from ``configs/train/*.yaml`` and validated field by field."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from trinity_env.core import TrinityError

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs" / "train"


class TrainConfigError(TrinityError):
    """A training config with a bad field; the message names it."""


class YAMLConfig:
    """Loading and checking for the training configs: YAML in, typed and validated fields out."""

    @classmethod
    def load(cls, name_or_path: str | Path, **overrides: Any):
        text = str(name_or_path)
        path = Path(text) if text.endswith((".yaml", ".yml")) or Path(text).is_file() else CONFIG_DIR / f"{text}.yaml"
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except OSError as err:
            raise TrainConfigError(f"cannot read training config {path}: {err.strerror}") from None
        except yaml.YAMLError as err:
            raise TrainConfigError(f"training config {path} is not valid YAML: {err}") from None
        if not isinstance(data, dict):
            raise TrainConfigError(f"training config {path}: expected a mapping of fields")
        return cls.from_dict(data | overrides, source=str(path))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config"):
        known = {f.name: f for f in fields(cls)}
        unknown = set(data) - set(known)
        if unknown:
            raise TrainConfigError(f"{source}: unknown field(s) {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {}
        defaults = cls()
        for name, value in data.items():
            expected = type(getattr(defaults, name))
            if expected is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if expected is tuple and isinstance(value, list):
                value = tuple(value)
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise TrainConfigError(f"{source}: field {name!r} must be {expected.__name__}, got {value!r}")
            values[name] = value
        config = cls(**values)
        config.check(source)
        return config

    def check(self, source: str = "config") -> None:
        """Raise ``TrainConfigError`` naming the first bad field."""

    def _check_positive(self, source: str, names: tuple[str, ...]) -> None:
        for name in names:
            if getattr(self, name) < 1:
                raise TrainConfigError(f"{source}: field {name!r} must be at least 1, got {getattr(self, name)}")

    def _check_unit(self, source: str, names: tuple[str, ...]) -> None:
        for name in names:
            if not 0 <= getattr(self, name) <= 1:
                raise TrainConfigError(f"{source}: field {name!r} must be between 0 and 1, got {getattr(self, name)}")

    def _check_evaluation(self, source: str) -> None:
        if not self.eval_opponents and not self.eval_endgames:
            raise TrainConfigError(
                f"{source}: field 'eval_opponents' is empty and eval_endgames is off: nothing to evaluate"
            )

    def to_dict(self) -> dict[str, Any]:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}


@dataclass(frozen=True)
class TrainConfig(YAMLConfig):
    seed: int = 0
    """Seeds the games, the network, the opponent pool and the samples: same seed, same run."""
    total_steps: int = 1_000_000
    """Learner decisions to train for (each game contributes only the learner's moves)."""
    max_minutes: float = 0.0
    """Stop training after this many minutes even if ``total_steps`` is not reached (0: no limit)."""
    num_games: int = 256
    """Games played in lockstep on the fast engine."""
    rollout_steps: int = 32
    """Learner decisions per game between two updates (batch = num_games * rollout_steps)."""
    learning_rate: float = 3e-4
    anneal_lr: bool = False
    """Lower the learning rate linearly to zero over ``total_steps`` (fast_ppo)."""
    gamma: float = 1.0
    """Discount; the game is short and only its result is rewarded."""
    gae_lambda: float = 0.95
    clip: float = 0.2
    epochs: int = 4
    minibatches: int = 4
    entropy: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    """Width of the policy network's hidden layers."""
    layers: int = 2
    tactics: bool = False
    """Give the policy per-placement tactical features (captures, domino, lane completion, blocks)."""
    p_latest: float = 0.5
    """Chance that an episode's opponent is the latest snapshot of the learner."""
    p_random: float = 0.1
    """Chance that it is the random agent."""
    p_greedy: float = 0.2
    """Chance that it is the greedy baseline; otherwise a past snapshot, uniformly."""
    snapshot_every: int = 100_000
    """Learner steps between snapshots joining the opponent pool (and checkpoints)."""
    pool_size: int = 8
    """Past snapshots kept in the pool (the oldest leave first)."""
    eval_every: int = 200_000
    """Learner steps between evaluations."""
    eval_games: int = 100
    """Seat-swapped games against each evaluation opponent."""
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    """Agent specs to evaluate against (``mcts:400`` too: about 15 ms a game)."""
    eval_endgames: bool = True
    """Also score the endgame suite: the share of its won positions where the learner finds a winning move."""
    tensorboard: bool = True
    """Log losses and evaluations to TensorBoard in ``RUN/tb`` (``metrics.csv`` is always written)."""
    draft_share: float = 0.0
    """With ``env: {draft: random}``: the share of training games that start with the draft instead of dealt
    hands, so the learner also learns to pick (evaluation games stay dealt)."""
    env: dict[str, Any] = field(default_factory=lambda: {"draft": "pick"})
    """Environment config (rules, deck, draft) for training and evaluation."""

    def check(self, source: str = "config") -> None:
        positive = ("total_steps", "num_games", "rollout_steps", "epochs", "minibatches", "hidden", "layers",
                    "snapshot_every", "pool_size", "eval_every", "eval_games")  # fmt: skip
        self._check_positive(source, positive)
        self._check_unit(source, ("gamma", "gae_lambda", "p_latest", "p_random", "p_greedy", "draft_share"))
        self._check_evaluation(source)
        if self.p_latest + self.p_random + self.p_greedy > 1:
            raise TrainConfigError(f"{source}: p_latest + p_random + p_greedy must be at most 1")
        if self.draft_share and self.env.get("draft", "pick") != "random":
            raise TrainConfigError(f"{source}: field 'draft_share' needs env draft 'random' (the others always draft)")
        if (self.num_games * self.rollout_steps) % self.minibatches:
            raise TrainConfigError(
                f"{source}: num_games * rollout_steps must split into {self.minibatches} minibatches"
            )

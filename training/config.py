"""One typed training config, loaded from ``configs/train/*.yaml`` and validated field by field.

A config is a frozen dataclass whose fields carry their own docstrings (CleanRL's ``Args``).
Loading is strict: an unknown field, a value of the wrong type (an ``int`` field takes no
bool, float or string; a ``float`` field takes an int), a NaN or infinite float, a value
out of range, a bad ``env`` or an agent spec in ``eval_opponents`` that names no agent is a
``TrainConfigError`` naming the field, raised when the config is loaded, not when the
trainer first needs the value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from trinity_env.core import TrinityError
from trinity_env.core.files import load_yaml, names, short
from trinity_env.core.limits import check_memory, check_processes
from trinity_env.core.shipped import resolve
from trinity_env.spec.config import DraftMode, EnvConfig, make_config


class TrainConfigError(TrinityError):
    """A training config with a bad field; the message names it."""


EVALUATION_FIELDS = frozenset({"eval_games", "eval_opponents", "eval_endgames", "tensorboard"})
"""The evaluation fields every trainer's config has (``TrainerFields`` declares them; a trainer may set its own
defaults): what is measured and where it is logged, so each may change when a run is resumed. Each trainer also
declares how often it evaluates, its unit in the name (``eval_every_steps``, ``eval_every_games``,
``eval_every_iterations``), which may change too."""


BUDGETS = {"total_steps": "learner steps", "total_games": "self-play games"}
"""The budget fields a command line may set over a config's (``--total-steps``, ``--total-games``): ``TrainConfig``'s
and ``AZConfig``'s."""


TRAINERS = ("ppo", "alphazero", "rllib", "jax")
"""The trainers ``trinity train`` runs, by the name a config's ``trainer:`` field gives (``configs/train/*.yaml``):
PPO on the fast engine, AlphaZero, RLlib's PPO and PPO in JAX."""
TRAINER_FIELD = "trainer"
"""The field that names a config's trainer: read by ``trinity train`` (``ConfigFile.trainer``), checked by the config
class it is given to (``YAMLConfig.trainer``), never a field of the run (its ``config.json`` does not hold it)."""


@dataclass(frozen=True)
class ConfigFile:
    """A training config file read once (``read_config``): where it is and its mapping of fields, as written."""

    path: Path
    data: dict[str, Any]

    def trainer(self, error: type[Exception] = TrainConfigError) -> str:
        """The trainer the file names in its ``trainer:`` field (``TRAINERS``); ``error`` in one line naming the field
        and the choices for a file that names none or another."""
        trainer = self.data.get(TRAINER_FIELD)
        if trainer not in TRAINERS:
            got = "names none" if trainer is None else f"names {short(trainer)}"
            raise error(
                f"training config {self.path} {got} in its {TRAINER_FIELD}: field: give one of {', '.join(TRAINERS)}"
            )
        return trainer


def read_config(name_or_path: str | Path, error: type[TrinityError] = TrainConfigError) -> ConfigFile:
    """The training config ``configs/train/NAME.yaml`` (a bare name always means the shipped one, whatever the working
    directory holds) or at a path (``./mine``, ``x.yaml``), read once; ``error`` for a file that is missing, not YAML
    or not a mapping of fields."""
    path = resolve(name_or_path, "train", error)  # a bare name is always the shipped one
    data = load_yaml(path, "training config", error) or {}
    if not isinstance(data, dict):
        raise error(f"training config {path}: expected a mapping of fields, got {type(data).__name__}")
    return ConfigFile(Path(path), data)


BOUNDS: dict[str, Callable[[Any], bool]] = {
    "at least 1": lambda value: value >= 1,
    "above 0": lambda value: value > 0,
    "at least 0": lambda value: value >= 0,
    "between 0 and 1": lambda value: 0 <= value <= 1,
}
"""The bounds a number field may be held to (``YAMLConfig._check_bound``), by the words its error says."""


class YAMLConfig:
    """Loading and checking for the training configs: YAML in, typed and validated fields out."""

    trainer: ClassVar[str | None] = None
    """The ``TRAINERS`` name of the trainer this config is for: a YAML file's ``trainer:`` field must give it when
    it gives one (``trinity train`` reads it to choose the trainer)."""

    resume_may_change: ClassVar[frozenset[str]] = frozenset()
    """Fields that may differ from the run's ``config.json`` when a run is resumed (see ``training.run_folder``)."""

    @staticmethod
    def resume_equivalent(name: str, old: Any, new: Any) -> bool:
        """Whether a field outside ``resume_may_change`` may go from ``old`` to ``new`` on resume: the learner sees
        the same either way (by default only when they are equal; ``env`` when both give the same rules, however
        written: ``{}`` and ``{"draft": "pick"}`` are both the standard rules)."""
        if name == "env" and isinstance(old, dict) and isinstance(new, dict):
            try:
                return make_config(old) == make_config(new)
            except TrinityError:  # a config.json whose rules no longer load
                return False
        return old == new

    def check_files(self) -> None:
        """Check the files the config names outside itself (AlphaZero's ``initial_network``), by loading them as the
        run would: ``training.run_folder.claim`` calls it before anything in the run folder is created, deleted or
        written, so a refused file leaves the folder as it was and the corrected command runs. None by default."""

    retired: ClassVar[dict[str, str]] = {}
    """Old field name -> its name now, for names an older version wrote and this one refuses (in a YAML file, a
    mapping, a keyword or a run's ``config.json``: resuming such a run refuses too) with one line naming the new
    name: ``eval_every``, whose unit differed by trainer, is now ``eval_every_steps``, ``_games`` or ``_iterations``,
    and ``snapshot_every`` ``snapshot_every_steps`` (PPO) or ``_iterations`` (RLlib); RLlib's ``max_league`` is
    ``pool_size``, as PPO's; AlphaZero's ``threads`` is ``torch_threads``."""

    @classmethod
    def load(cls, config: str | Path | ConfigFile, budget: dict[str, int] | None = None, **overrides: Any):
        """The config of a file (``read_config``'s name or path, or the ``ConfigFile`` it read), with ``overrides`` on
        top, and ``budget`` (``BUDGETS`` fields: the command line's ``--total-steps``/``--total-games``) over both; a
        budget field this config lacks is refused naming the option it takes instead."""
        overrides = cls._budget_fields(budget or {}) | overrides
        file = config if isinstance(config, ConfigFile) else read_config(config)
        data, source = file.data, str(file.path)
        cls.refuse_retired(data, source)
        cls.refuse_retired(overrides, source)
        return cls.from_dict(data | overrides, source=source)

    @classmethod
    def _budget_fields(cls, budget: dict[str, int]) -> dict[str, int]:
        known = {f.name for f in fields(cls)}
        for name in budget:
            if name not in known:
                option = "--" + name.replace("_", "-")
                takes = [f"--{other.replace('_', '-')}" for other in BUDGETS if other in known]
                hint = f": its budget is {takes[0]} N" if takes else ""
                raise TrainConfigError(f"{option} does not apply to this trainer ({cls.__name__} has no {name}){hint}")
        return dict(budget)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config"):
        """A checked config from a mapping of fields (missing fields keep their defaults; a ``retired`` name is refused
        naming the new one). A ``trainer:`` field (``TRAINER_FIELD``) must name this config's trainer; it is not a
        field of the config."""
        cls.refuse_retired(data, source)
        if TRAINER_FIELD in data:
            data = dict(data)
            named = data.pop(TRAINER_FIELD)
            if named not in TRAINERS or (cls.trainer is not None and named != cls.trainer):
                expected = cls.trainer or f"one of {', '.join(TRAINERS)}"
                raise TrainConfigError(
                    f"{source}: field {TRAINER_FIELD!r} is {short(named)}; this trainer is {expected}"
                )
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise TrainConfigError(f"{source}: unknown field(s) {names(unknown)}")
        defaults = cls()
        values = {name: _typed(source, name, value, getattr(defaults, name)) for name, value in data.items()}
        config = cls(**values)
        config.check(source)
        return config

    @classmethod
    def refuse_retired(cls, data: dict[str, Any], source: str = "config") -> None:
        """A ``TrainConfigError`` naming the new name if ``data`` gives a field under a ``retired`` name."""
        retired = [old for old in cls.retired if old in data]
        if retired:
            old, new = retired[0], cls.retired[retired[0]]
            raise TrainConfigError(f"{source}: field {old!r} is an older version's name: rename it {new!r}")

    def check(self, source: str = "config") -> None:
        """Raise ``TrainConfigError`` naming the first bad field."""
        self._check_common(source)

    def _check_common(self, source: str) -> None:
        """Finite floats, a non-negative seed and agent specs that name agents (``env`` is parsed by ``_typed``)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise TrainConfigError(f"{source}: field {f.name!r} must be a finite number, got {value}")
        if getattr(self, "seed", 0) < 0:
            raise TrainConfigError(f"{source}: field 'seed' must be at least 0, got {self.seed}")
        if hasattr(self, "eval_opponents"):
            self._check_opponents(source)

    def _check_opponents(self, source: str) -> None:
        from trinity_env.agents.spec import AgentSpec

        if len(set(self.eval_opponents)) != len(self.eval_opponents):
            twice = sorted({spec for spec in self.eval_opponents if self.eval_opponents.count(spec) > 1})
            raise TrainConfigError(f"{source}: field 'eval_opponents' names an agent twice: {short(twice)}")
        for spec in self.eval_opponents:
            try:
                AgentSpec.parse(spec)  # checked, not built: the evaluations build it
            except TrinityError as err:
                raise TrainConfigError(f"{source}: field 'eval_opponents': {err}") from None

    def _check_bound(self, source: str, bound: str, names: tuple[str, ...]) -> None:
        """Each field in ``names`` within ``bound``: a ``BOUNDS`` key, which the message quotes."""
        within = BOUNDS[bound]
        for name in names:
            if not within(getattr(self, name)):
                raise TrainConfigError(f"{source}: field {name!r} must be {bound}, got {getattr(self, name)}")

    def _check_network(self, source: str, network: str = "mlp") -> None:
        """``hidden`` and ``layers`` of a ``network`` within the size limits the checkpoint loaders apply (one table
        for both)."""
        from trinity_env.agents.loaders.checkpoint import MAX_HIDDEN, MAX_LAYERS, network_size_problem

        problem = network_size_problem(self.hidden, self.layers, network)
        if problem is None:
            return
        if not 1 <= self.hidden <= MAX_HIDDEN:
            raise TrainConfigError(f"{source}: field 'hidden' must be between 1 and {MAX_HIDDEN}, got {self.hidden}")
        if not 1 <= self.layers <= MAX_LAYERS:
            raise TrainConfigError(f"{source}: field 'layers' must be between 1 and {MAX_LAYERS}, got {self.layers}")
        raise TrainConfigError(f"{source}: fields 'hidden' and 'layers': {problem}")

    def _check_processes(self, source: str, names: tuple[str, ...]) -> None:
        """Counts of processes or threads within what this machine can use (``core.limits``)."""
        for name in names:
            check_processes(f"{source}: field {name!r}", getattr(self, name), TrainConfigError)

    def _check_memory(self, source: str, parts: dict[str, int]) -> None:
        """What the run's largest arrays would take (``parts``: a field and what it sizes, to bytes) within the memory
        budget (``core.limits``), checked when the config is loaded: before a run folder is claimed."""
        check_memory(parts, TrainConfigError, source)

    def _check_evaluation(self, source: str) -> None:
        if not self.eval_opponents and not self.eval_endgames:
            raise TrainConfigError(
                f"{source}: field 'eval_opponents' is empty and eval_endgames is off: nothing to evaluate"
            )

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain data (tuples as lists, ``env`` as the fields that differ from the standard rules,
        ``EnvConfig.changes``): what ``config.json`` holds, and what ``from_dict`` reads back equal."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def table(self) -> str:
        """The fields as a markdown table (the TensorBoard hyperparameter text, as CleanRL logs it)."""
        rows = "\n".join(f"|{name}|{value}|" for name, value in self.to_dict().items())
        return "|field|value|\n|-|-|\n" + rows


def _plain(value: Any) -> Any:
    """A field's value as ``config.json`` writes it."""
    if isinstance(value, EnvConfig):
        return value.changes()
    return list(value) if isinstance(value, tuple) else value


def _typed(source: str, name: str, value: Any, default: Any) -> Any:
    """``value`` as the type of ``default``, strictly: bool is no int, a float no int, a string no number; an
    ``env`` mapping is parsed here, once, into an ``EnvConfig``, and a mode's text into its enum member.

    The message quotes the value cut short: it may be a megabyte string or a list of thousands.
    """
    expected = type(default)
    if isinstance(default, Enum):  # a mode (``SearchMode``): its text in the file, the member from here on
        if isinstance(value, str) and value in {member.value for member in expected}:
            return expected(value)
        choices = ", ".join(repr(member.value) for member in expected)
        raise TrainConfigError(f"{source}: field {name!r} must be one of {choices}, got {short(value)}")
    if expected is EnvConfig:
        if not isinstance(value, EnvConfig | dict):
            raise TrainConfigError(f"{source}: field {name!r} must map rules fields to values, got {short(value)}")
        try:
            return make_config(value)
        except TrinityError as err:
            raise TrainConfigError(f"{source}: field {name!r}: {err}") from None
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise TrainConfigError(f"{source}: field {name!r} must be a finite number, got {short(value)}") from None
    if expected is tuple and isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
        raise TrainConfigError(f"{source}: field {name!r} must be {expected.__name__}, got {short(value)}")
    if expected is tuple and not all(isinstance(item, str) for item in value):
        raise TrainConfigError(f"{source}: field {name!r} must be a list of strings, got {short(list(value))}")
    return value


@dataclass(frozen=True)
class TrainerFields(YAMLConfig):
    """The fields every trainer's config declares, with one meaning and one check: the seed and the evaluation
    (``EVALUATION_FIELDS``). A trainer may give them its own defaults (AlphaZero evaluates against MCTS)."""

    seed: int = 0
    """Seeds all that the run draws (the games, the network, the opponents, the samples, the search's noise): same
    seed, same run."""
    eval_games: int = 100
    """Seat-swapped games against each evaluation opponent."""
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    """Agent specs to evaluate against (``mcts:400`` too: about 15 ms a game); checked with ``AgentSpec.parse``."""
    eval_endgames: bool = True
    """Also score the endgame suite: the share of its won positions where the learner finds a winning move (no
    solver)."""
    tensorboard: bool = True
    """Log losses and evaluations to TensorBoard in ``RUN/tb`` (``metrics.csv`` is always written)."""

    def check(self, source: str = "config") -> None:
        self._check_common(source)
        self._check_bound(source, "at least 1", ("eval_games",))
        self._check_evaluation(source)


@dataclass(frozen=True)
class PPOFields(TrainerFields):
    """The fields both PPO trainers' configs declare, with one meaning and one check (``check``): ``TrainConfig``'s
    (``fast_ppo``, ``selfplay_ppo``) and ``RLlibConfig``'s (``rllib_selfplay``, which sets other defaults for
    ``tactics`` and the opponent draw). PPO's loss and optimiser, the policy network and who the opponent is; each
    trainer declares its own schedule, batch and pool after them."""

    learning_rate: float = 3e-4
    """The optimiser's step size (above 0); the start of the schedule when ``anneal_lr`` is on (``fast_ppo``)."""
    epochs: int = 4
    """Passes over each rollout (an iteration's batch) in the update."""
    clip: float = 0.2
    """PPO's clip range (above 0): the new policy's probability ratio counts only within [1 - clip, 1 + clip]
    (RLlib's KL penalty is off, as in CleanRL)."""
    entropy: float = 0.01
    """Weight of the entropy bonus in the loss (at least 0)."""
    value_coef: float = 0.5
    """Weight of the value loss in the loss (at least 0)."""
    max_grad_norm: float = 0.5
    """Gradients are clipped to this global norm (above 0)."""
    hidden: int = 256
    """Width of the policy network's hidden layers."""
    layers: int = 2
    """Hidden layers of the policy network (tanh MLP)."""
    tactics: bool = False
    """Give the policy per-placement tactical features (captures, domino, lane completion, blocks)."""
    p_latest: float = 0.5
    """Chance that an episode's opponent is the learner itself, as it is now (in ``rllib_selfplay`` both seats then
    learn)."""
    p_random: float = 0.1
    """Chance that it is the random agent."""
    p_greedy: float = 0.2
    """Chance that it is the greedy baseline; otherwise a past snapshot of the learner, uniformly."""

    def check(self, source: str = "config") -> None:
        super().check(source)
        self._check_bound(source, "at least 1", ("epochs", "hidden", "layers"))
        self._check_network(source)
        self._check_bound(source, "above 0", ("learning_rate", "clip", "max_grad_norm"))
        self._check_bound(source, "at least 0", ("entropy", "value_coef"))
        self._check_bound(source, "between 0 and 1", ("p_latest", "p_random", "p_greedy"))
        if self.p_latest + self.p_random + self.p_greedy > 1:
            raise TrainConfigError(f"{source}: fields 'p_random' + 'p_greedy' + 'p_latest' must add up to at most 1")


@dataclass(frozen=True)
class TrainConfig(PPOFields):
    """The config of ``fast_ppo`` and ``selfplay_ppo`` (``configs/train/quick.yaml``, ``standard.yaml``): the fields
    of ``PPOFields`` and these."""

    trainer: ClassVar[str] = "ppo"

    total_steps: int = 1_000_000
    """Learner decisions to train for (each game contributes only the learner's moves): the schedule.
    Training runs ``ceil(total_steps / (num_games * rollout_steps))`` updates and ``anneal_lr`` plans over it."""
    max_minutes: float = 0.0
    """A safety stop: end this invocation after that many minutes even if ``total_steps`` is not reached
    (0: no limit). It does not change the schedule; ``--resume`` continues a stopped run exactly."""
    num_games: int = 256
    """Games played in lockstep on the fast engine (the vector env's size)."""
    rollout_steps: int = 32
    """Learner decisions per game between two updates (batch = num_games * rollout_steps)."""
    anneal_lr: bool = False
    """Lower the learning rate linearly to zero over ``total_steps`` (fast_ppo)."""
    gamma: float = 1.0
    """Discount, in [0, 1]; the game is short and only its result is rewarded."""
    gae_lambda: float = 0.95
    """GAE's lambda, in [0, 1]: 0 bootstraps every step from the value, 1 uses whole returns."""
    minibatches: int = 4
    """Minibatches per epoch; ``num_games * rollout_steps`` must split evenly into them."""
    snapshot_every_steps: int = 100_000
    """Learner steps between snapshots joining the opponent pool (and checkpoints, ``latest.pt``)."""
    pool_size: int = 8
    """Past snapshots kept in the pool (the oldest leave first)."""
    eval_every_steps: int = 200_000
    """Learner steps between evaluations (and at the last step)."""
    torch_threads: int = 1
    """torch's intra-op threads while training. Results are bit-identical only for the same count (so it is part of
    the run), and one thread is the fast choice on a small or shared machine: with two threads on a busy 2-core
    machine the trainer ran 4x slower."""
    draft_share: float = 0.0
    """With ``env: {draft: dealt}``: the share of training games that start with the draft instead of dealt
    hands, so the learner also learns to pick (evaluation games stay dealt)."""
    env: EnvConfig = field(default_factory=make_config)
    """Environment config (rules, deck, draft) for training and evaluation: a YAML mapping parsed once into an
    ``EnvConfig`` (``make_config``) when the config is loaded."""

    resume_may_change: ClassVar[frozenset[str]] = EVALUATION_FIELDS | {"eval_every_steps", "total_steps", "max_minutes"}
    """How long to train, the safety stop, what is measured and where it is logged: none of them changes what the
    learner sees up to a given step. Everything else (network, hyperparameters, pool, rules, seed, torch_threads)
    must match the run's ``config.json``. With ``anneal_lr``, a new ``total_steps`` re-plans the rest of the
    schedule."""

    retired: ClassVar[dict[str, str]] = {"eval_every": "eval_every_steps", "snapshot_every": "snapshot_every_steps"}

    def check(self, source: str = "config") -> None:
        super().check(source)
        self._check_bound(
            source,
            "at least 1",
            (
                "total_steps",
                "num_games",
                "rollout_steps",
                "minibatches",
                "snapshot_every_steps",
                "pool_size",
                "eval_every_steps",
                "torch_threads",
            ),
        )
        self._check_bound(source, "at least 0", ("max_minutes",))
        self._check_bound(source, "between 0 and 1", ("gamma", "gae_lambda", "draft_share"))
        if self.draft_share and self.env.draft is not DraftMode.DEALT:
            raise TrainConfigError(f"{source}: field 'draft_share' needs env draft 'dealt' (the others always draft)")
        if (self.num_games * self.rollout_steps) % self.minibatches:
            raise TrainConfigError(
                f"{source}: num_games * rollout_steps must split into {self.minibatches} minibatches"
            )
        self._check_processes(source, ("torch_threads",))
        from trinity_env.agents.loaders.checkpoint import PARAMETERS
        from trinity_env.agents.ppo import Rollout
        from trinity_env.spec.observation import OBSERVATION_SIZE

        snapshots = (
            min(self.pool_size, self.total_steps // self.snapshot_every_steps) + 3
        )  # the pool, learner, Adam's two
        network = 4 * PARAMETERS["mlp"](self.hidden, self.layers)
        step = Rollout.game_step_bytes(OBSERVATION_SIZE)  # the smallest observation: tactical features add to it
        rollout = self.num_games * self.rollout_steps * step
        self._check_memory(
            source,
            {
                f"field 'num_games' ({self.num_games:,} games x {self.rollout_steps:,} rollout_steps, "
                f"{step:,} bytes each)": rollout,
                f"field 'pool_size' ({snapshots:,} copies of the network: "
                "the pool's, the learner's and Adam's two)": snapshots * network,
            },
        )

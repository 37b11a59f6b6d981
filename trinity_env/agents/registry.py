"""Agents by name: ``make("mcts:400")``, ``make("greedy")``, ``make("random:seed=3")``.

A spec is ``name`` or ``name:arg,key=value,...``: the first bare argument is the agent's
main number (simulations for ``mcts``), the rest are keywords; a path to a ``.pt``
checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``) or a training run folder
(``runs/quick``, ``runs/quick/best``) names a trained policy (read as weights and plain
data only, so no code in a checkpoint runs, see ``_checkpoint``; a folder whose best
checkpoint is damaged plays its latest, with a warning), and the policies shipped in the
package have names of their own (``ppo-standard``, see ``shipped()``; they need the
``train`` extra). The same strings name agents in Python, on the command line, in configs
and in the arena.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path

from trinity_env.agents.base import Agent, RandomAgent
from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.core import TrinityError


class AgentSpecError(TrinityError):
    """An agent spec string that names no agent or gives it bad arguments."""


def spec_int(name: str, text: str) -> int:
    """An integer argument of a spec: digits only (``400``, not ``4e2``, ``400.0`` or ``True``)."""
    body = text[1:] if text[:1] == "-" else text
    if not (body.isascii() and body.isdigit()) or len(body) > 18:
        raise ValueError(f"{name} must be an integer, got {text!r}")
    return int(text)


def spec_float(name: str, text: str) -> float:
    """A finite number argument of a spec (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {text!r}")
    return value


def _mcts(
    simulations: str = "400",
    c: str = "0.7",
    worlds: str = "8",
    seed: str | None = None,
    draft: str = "strongest",
    greed: str = "0.5",
) -> Agent:
    return MCTSAgent(
        spec_int("simulations", simulations),
        spec_float("c", c),
        spec_int("worlds", worlds),
        None if seed is None else spec_int("seed", seed),
        draft=draft,
        greed=spec_float("greed", greed),
    )


def _random(seed: str | None = None) -> Agent:
    return RandomAgent(None if seed is None else spec_int("seed", seed))


AZ_STANDARD = "az-standard"
"""The shipped AlphaZero agent (``training/alphazero.py``, ``configs/train/az-standard.yaml``)."""


def _az(
    path: str | None = None,
    sims: str | None = None,
    solver: str = "0",
    worlds: str = "4",
    seed: str | None = None,
    search: str = "gumbel",
    considered: str = "16",
) -> Agent:
    """``az:PATH_OR_RUN,sims=N,solver=K``: an AlphaZero network (a checkpoint or a run folder) with N simulations
    per move (0: the raw policy) and the exact solver for positions with at most K empty tiles (0: off)."""
    if path is None:
        raise ValueError("az needs a checkpoint or run folder: az:PATH_OR_RUN,sims=N,solver=K")
    try:
        from trinity_env.agents.az import DEFAULT_SIMULATIONS, AZAgent
    except ImportError:
        raise AgentSpecError("az agents need torch: install the train extra") from None
    return AZAgent.from_checkpoint(
        path,
        simulations=DEFAULT_SIMULATIONS if sims is None else spec_int("sims", sims),
        solver=spec_int("solver", solver),
        worlds=spec_int("worlds", worlds),
        seed=None if seed is None else spec_int("seed", seed),
        mode=search,
        max_considered=spec_int("considered", considered),
    )


def _az_standard(sims: str | None = None, **keywords: str) -> Agent:
    """The shipped ``az-standard`` network: ``az-standard:sims=0`` plays its raw policy."""
    return _az(str(SHIPPED_DIR / f"{AZ_STANDARD}.pt"), sims, **keywords)


AGENTS: dict[str, Callable[..., Agent]] = {
    "random": _random,
    "greedy": lambda: GreedyAgent(),
    "lookahead": lambda: LookaheadAgent(),
    "mcts": _mcts,
    "az": _az,
    AZ_STANDARD: _az_standard,
}


SHIPPED_DIR = Path(__file__).resolve().parent / "data"


def shipped() -> list[str]:
    """Names of the trained policies that ship inside the package (``make(name)`` plays one)."""
    return sorted(path.stem for path in SHIPPED_DIR.glob("*.pt"))


def _load_file(path: Path, spec: str, sample: str, seed: str | None) -> Agent:
    """The agent of one checkpoint file: a ``.zip`` (weights only, never unpickled) or a ``.pt``."""
    if path.suffix == ".zip":
        try:
            from trinity_env.agents.sb3 import SB3PolicyAgent

            return SB3PolicyAgent.from_zip(path)
        except ImportError:
            raise AgentSpecError(f"{spec!r} is an SB3 checkpoint: install the train extra to play it") from None
    try:
        from trinity_env.agents.policy import NetworkAgent
    except ImportError:
        raise AgentSpecError(f"{spec!r} is a checkpoint: install the train extra (torch) to play it") from None
    return NetworkAgent.from_checkpoint(path, sample=sample, seed=None if seed is None else spec_int("seed", seed))


def _run_folder(folder: Path, spec: str, sample: str, seed: str | None) -> Agent:
    """A run folder's best checkpoint, else (missing or damaged, with a warning) its latest.

    The ``.pt`` pair (``fast_ppo``) is used when either file exists, else the ``.zip`` pair
    (``selfplay_ppo``); ``CheckpointError`` names the folder and, when both files are there
    but neither loads, both problems.
    """
    try:
        from trinity_env.agents.policy import CheckpointError
    except ImportError:
        raise AgentSpecError(f"{spec!r} is a run folder: install the train extra (torch) to play it") from None
    suffix = ".pt" if any((folder / f"{n}.pt").is_file() for n in ("best", "latest")) else ".zip"
    best, latest = folder / f"best{suffix}", folder / f"latest{suffix}"
    if not best.is_file() and not latest.is_file():
        raise CheckpointError(f"no checkpoint in the run folder {folder}: no best.pt, latest.pt, best.zip, latest.zip")
    if not best.is_file():
        return _load_file(latest, spec, sample, seed)
    try:
        return _load_file(best, spec, sample, seed)
    except CheckpointError as best_error:
        if not latest.is_file():
            raise
        try:
            agent = _load_file(latest, spec, sample, seed)
        except CheckpointError as latest_error:
            raise CheckpointError(
                f"no usable checkpoint in the run folder {folder}: {best.name}: {best_error}; "
                f"{latest.name}: {latest_error}"
            ) from None
        warnings.warn(f"{best} cannot be loaded ({best_error}); playing {latest} instead", stacklevel=4)
        return agent


def _checkpoint(spec: str, sample: str = "none", seed: str | None = None) -> Agent:
    """A trained policy: a ``.pt`` checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``), or a run
    folder (its best checkpoint, else its latest); ``sample``: none | all | draft (see ``NetworkAgent``).

    Loading runs no code from the file: ``.pt`` files are read with ``weights_only=True`` and
    ``.zip`` files for their weights and plain JSON only (``trinity_env.agents.policy``,
    ``trinity_env.agents.sb3``); a bad file raises ``CheckpointError`` naming it.
    """
    path = Path(spec)
    if path.is_dir() and path.suffix not in (".pt", ".zip"):
        agent = _run_folder(path, spec, sample, seed)
    else:  # a directory named x.pt is refused by the loaders, naming it
        agent = _load_file(path, spec, sample, seed)
    agent.name = spec
    return agent


def make(spec: str) -> Agent:
    """The agent a spec string names; ``AgentSpecError`` says what is wrong with a bad one."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a string like 'greedy' or 'mcts:400', got {spec!r}")
    text = spec.strip()
    named_az = text.partition(":")[0] in ("az", AZ_STANDARD)  # az:RUN/best.pt names its checkpoint itself
    if not named_az and (text.endswith((".pt", ".zip")) or Path(text).is_dir()):
        return _checkpoint(text)
    for suffix in (".pt", ".zip"):  # RUN/best names RUN/best.pt or RUN/best.zip
        if not named_az and Path(text + suffix).is_file():
            return _checkpoint(text + suffix)
    name, _, rest = text.partition(":")
    factory = AGENTS.get(name)
    if factory is None and name in shipped():
        factory = lambda **kw: _checkpoint(str(SHIPPED_DIR / f"{name}.pt"), **kw)  # noqa: E731
    if factory is None:
        known = ", ".join(sorted({*AGENTS, *shipped()}))
        raise AgentSpecError(f"no agent named {name!r} (in {spec!r}); known: {known}")
    args, kwargs = [], {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if eq:
            kwargs[key.strip()] = value.strip()
        else:
            args.append(part)
    try:
        agent = factory(*args, **kwargs)
    except (TypeError, ValueError) as err:
        raise AgentSpecError(f"bad arguments in agent spec {spec!r}: {err}") from None
    agent.name = text
    return agent

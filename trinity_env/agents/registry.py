"""Agents by name: ``make("mcts:400")``, ``make("greedy")``, ``make("random:seed=3")``.

A spec is ``name`` or ``name:arg,key=value,...``: the first bare argument is the agent's
main number (simulations for ``mcts``), the rest are keywords; a path to a ``.pt``
checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``) or a training run folder
(``runs/quick``, ``runs/quick/best``) names a
trained policy, and the policies shipped in the package have names of their own
(``ppo-standard``, see ``shipped()``; they need the ``train`` extra). The same strings name
agents in Python, on the command line, in configs and in the arena.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trinity_env.agents.base import Agent, RandomAgent
from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.core import TrinityError


class AgentSpecError(TrinityError):
    """An agent spec string that names no agent or gives it bad arguments."""


def _mcts(
    simulations: str = "400",
    c: str = "0.7",
    worlds: str = "8",
    seed: str | None = None,
    draft: str = "strongest",
    greed: str = "0.5",
) -> Agent:
    return MCTSAgent(
        int(simulations), float(c), int(worlds), None if seed is None else int(seed), draft=draft, greed=float(greed)
    )


def _random(seed: str | None = None) -> Agent:
    return RandomAgent(None if seed is None else int(seed))


AGENTS: dict[str, Callable[..., Agent]] = {
    "random": _random,
    "greedy": lambda: GreedyAgent(),
    "lookahead": lambda: LookaheadAgent(),
    "mcts": _mcts,
}


SHIPPED_DIR = Path(__file__).resolve().parent / "data"


def shipped() -> list[str]:
    """Names of the trained policies that ship inside the package (``make(name)`` plays one)."""
    return sorted(path.stem for path in SHIPPED_DIR.glob("*.pt"))


def _checkpoint(spec: str, sample: str = "none", seed: str | None = None) -> Agent:
    """A trained policy: a ``.pt`` checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``), or a run
    folder (its best checkpoint, else its latest); ``sample``: none | all | draft (see ``NetworkAgent``)."""
    path = Path(spec)
    if path.is_dir():
        names = ("best.pt", "latest.pt", "best.zip", "latest.zip")
        path = next((path / n for n in names if (path / n).is_file()), path / "best.pt")
    if path.suffix == ".zip":
        try:
            from trinity_env.agents.sb3 import SB3PolicyAgent

            agent = SB3PolicyAgent.from_zip(path)
        except ImportError:
            raise AgentSpecError(f"{spec!r} is an SB3 checkpoint: install the train extra to play it") from None
        agent.name = spec
        return agent
    try:
        from trinity_env.agents.policy import NetworkAgent
    except ImportError:
        raise AgentSpecError(f"{spec!r} is a checkpoint: install the train extra (torch) to play it") from None
    agent = NetworkAgent.from_checkpoint(path, sample=sample, seed=None if seed is None else int(seed))
    agent.name = spec
    return agent


def make(spec: str) -> Agent:
    """The agent a spec string names; ``AgentSpecError`` says what is wrong with a bad one."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a string like 'greedy' or 'mcts:400', got {spec!r}")
    text = spec.strip()
    if text.endswith((".pt", ".zip")) or Path(text).is_dir():
        return _checkpoint(text)
    for suffix in (".pt", ".zip"):  # RUN/best names RUN/best.pt or RUN/best.zip
        if Path(text + suffix).is_file():
            return _checkpoint(text + suffix)
    name, _, rest = text.partition(":")
    factory = AGENTS.get(name)
    if factory is None and name in shipped():
        factory = lambda **kw: _checkpoint(str(SHIPPED_DIR / f"{name}.pt"), **kw)  # noqa: E731
    if factory is None:
        known = ", ".join(sorted([*AGENTS, *shipped()]))
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

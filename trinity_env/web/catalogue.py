"""The agents a browser may name: ``catalog()``, and the ratings of the difficulty ladder (``ladder_elo`` reads
them from ``LADDER_FILE``; the ladder itself, ``LADDER`` and ``LEVEL_WORDS``, is ``trinity_env.agents.ladder``'s).

``catalog()``: the agents on offer, by name. A browser names agents only from this list; a name maps to a fixed
spec string, so no request can load a checkpoint, read a file or ask for an unbounded search.

``added(...)``: the policies the server's operator adds to the list (``trinity serve --agents ... --onnx-folder DIR``,
``serve(agents=...)``): any policy ``agents.spec.player`` takes, each built once as the list is made (a file that
loading refuses stops the server before it starts), grouped ``added``; a folder's models are named by file name
(``FolderModel``), not by their path on the server. Only the operator adds them: a browser still
names agents from the list only, and outside code (``py:``) runs only when the operator's spec was parsed with
``allow_code`` (``--allow-code``).
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from trinity_env.agents.ladder import LADDER, LEVEL_WORDS
from trinity_env.agents.registry import shipped
from trinity_env.agents.spec import AgentSpec, Player, player
from trinity_env.core import ArgumentError
from trinity_env.core.files import short as shown
from trinity_env.core.paths import name_problem
from trinity_env.spec.agent import Agent

LADDER_FILE = Path(str(resources.files("trinity_env.web") / "ladder.json"))
"""The arena's ``--json`` output for the ladder's agents (a copy of docs/web/ladder.json, which a test keeps equal):
the Elo each level's label shows is read from it, never typed by hand."""


@dataclass(frozen=True)
class AgentChoice:
    """An agent a browser may name: ``name`` is what it sends, ``spec`` what ``make`` gets (an added policy: its
    label, and ``player`` what builds it)."""

    name: str
    spec: str
    label: str
    """What the list of opponents says."""
    group: str
    """``ladder``, ``baseline``, ``search``, ``trained`` or ``added`` (the operator's: ``added``)."""
    short: str = ""
    """What the board says (``Level 3 — casual``, ``Greedy``); the name when empty."""
    elo: int | None = None
    """The measured rating (ladder levels: from ``LADDER_FILE``), so the page can say how strong it is."""
    about: str = ""
    """How it plays, in plain words (``moves at random``): what the list of opponents shows after the name."""
    player: Player | None = field(default=None, compare=False, repr=False)
    """The policy the operator added (``added``); ``None``: the agent ``spec`` names."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.spec,
            "label": self.label,
            "group": self.group,
            "short": self.title,
            "elo": self.elo,
            "about": self.about,
        }

    @property
    def title(self) -> str:
        return self.short or self.name


def ladder_elo(path: Path = LADDER_FILE) -> dict[str, float]:
    """Each agent's Elo from the arena's JSON output (``trinity arena --json``): ``{"agents": [...], "elo": [...]}``.

    A file of another shape raises ``ValueError`` saying what is wrong: the labels must come from a measurement.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    agents, elo = (data.get("agents"), data.get("elo")) if isinstance(data, dict) else (None, None)
    if not isinstance(agents, list) or not isinstance(elo, list) or len(agents) != len(elo):
        raise ValueError(f"{path}: not the arena's JSON output (agents and elo, two lists of one length)")
    ratings = {}
    for name, value in zip(agents, elo):
        if not isinstance(name, str) or type(value) not in (int, float) or not math.isfinite(value):
            raise ValueError(f"{path}: agent {name!r} has no finite Elo ({value!r})")
        ratings[name] = float(value)
    return ratings


def signed(value: float) -> str:
    """``value`` rounded, with its sign: ``+109``; ``-237`` with a true minus sign (U+2212), as a page prints it."""
    number = round(value)
    return f"+{number}" if number > 0 else f"\u2212{-number}" if number < 0 else "0"


DEFAULT_OPPONENT = "level:1"
"""The opponent the play page offers first: its text tells a newcomer to start against Level 1."""

BASELINES = ("random", "greedy", "lookahead")
SEARCH = (25, 100, 400, 1600)
"""MCTS strengths on offer (simulations per move)."""
ABOUT = {
    "random": "moves at random",
    "greedy": "takes the most cards it can each move",
    "lookahead": "looks two moves ahead",
    "ppo-standard": "a trained network that plays at once, without searching",
    "az-standard": "a trained network that also tries lines of play before each move",
}
"""How each agent plays, in plain words; ``mcts:N`` is ``about("mcts:N")``'s."""
PLAIN_NAMES = {"ppo-standard": "Trained network", "az-standard": "Trained network with search"}
"""The list's names of the shipped trained agents (their spec names are jargon: PPO, AlphaZero)."""


def about(spec: str) -> str:
    """How the agent of ``spec`` plays, in plain words: ``mcts:25`` tries 25 lines of play before each move."""
    name, _, value = spec.partition(":")
    if name == "mcts":
        return f"tries {value} lines of play before each move"
    return ABOUT.get(name, "a shipped agent")


MAX_ADDED = 100
"""The most policies an operator may add to the list (``added``), a folder's ONNX files included."""


@dataclass(frozen=True)
class FolderModel:
    """A model of an ``--onnx-folder``: a ``Player`` labelled by its file name (``onnx:NAME`` for ``NAME.onnx``), so
    that the list, the browsers and the replays never see where it lies on the server; ``spec`` builds it."""

    label: str
    spec: AgentSpec

    @property
    def families(self) -> tuple[str, ...]:
        return self.spec.families

    def build(self) -> Agent:
        return self.spec.build()


def onnx_folder(folder: str | Path) -> list[FolderModel]:
    """A ``FolderModel`` for each ``*.onnx`` regular file directly in ``folder``, by name; one ``ArgumentError``
    line for a folder that is not one or holds more than ``MAX_ADDED`` models."""
    problem = name_problem(folder)
    if problem is not None:
        raise ArgumentError(f"--onnx-folder: {problem}")
    where = Path(folder)
    if not where.is_dir():  # asked without opening: a named pipe or a device is not a folder
        raise ArgumentError(f"--onnx-folder {shown(str(folder))} is not a folder")
    files = sorted(p for p in where.iterdir() if p.suffix == ".onnx" and p.is_file() and not p.is_symlink())
    if len(files) > MAX_ADDED:
        raise ArgumentError(f"--onnx-folder {shown(str(folder))} holds {len(files)} ONNX files, more than {MAX_ADDED}")
    return [FolderModel(f"onnx:{path.stem}", AgentSpec.of("onnx", path)) for path in files]  # a path, never text


def added(agents: Sequence[object]) -> list[AgentChoice]:
    """The operator's policies as choices (the module): each any policy ``agents.spec.player`` takes (a spec string
    is parsed without ``allow_code``: pass an ``AgentSpec`` parsed with it for ``py:``), named by its label, built
    once here so that a bad one is one line before the server starts."""
    if isinstance(agents, str | bytes) or not isinstance(agents, Sequence):
        raise ArgumentError(f"agents is a list of policies, got {shown(agents)}")
    if len(agents) > MAX_ADDED:
        raise ArgumentError(f"at most {MAX_ADDED} agents may be added to the list, got {len(agents)}")
    choices = []
    for value in agents:
        who = player(value)
        who.build()
        name = who.label
        kind = "an ONNX model" if name.startswith("onnx:") else "outside code" if name.startswith("py:") else "a policy"
        what = f"{kind} added to this server"
        choices.append(AgentChoice(name, name, f"{name} \u2014 {what}", "added", name[:40], about=what, player=who))
    return choices


def catalog(extra: Sequence[object] = ()) -> dict[str, AgentChoice]:
    """The agents on offer, by name: the ladder, the baselines, MCTS at a few strengths, the
    shipped trained agents (``shipped()``, only where torch is installed) and the operator's ``extra`` policies
    (``added``; a name already on the list is refused in one line)."""
    trained = shipped() if importlib.util.find_spec("torch") is not None else []
    needs_torch = {*shipped(), "az", "az-standard"}
    ratings = ladder_elo()
    choices: list[AgentChoice] = []
    for level, spec in LADDER.items():
        name = spec.partition(":")[0]
        if name not in needs_torch or name in trained:  # a ladder level of a network needs torch
            if spec not in ratings:
                raise ValueError(f"{LADDER_FILE} rates no agent {spec!r} (level {level}): run the ladder's arena again")
            elo = round(ratings[spec])
            short = f"Level {level} \u2014 {LEVEL_WORDS[level]}"
            label = f"{short} (Elo {signed(elo)})"
            choices.append(AgentChoice(f"level:{level}", spec, label, "ladder", short, elo, about(spec)))
    for name in BASELINES:
        short = name.capitalize()
        choices.append(AgentChoice(name, name, f"{short} \u2014 {about(name)}", "baseline", short, about=about(name)))
    for n in SEARCH:
        spec, short = f"mcts:{n}", f"Search {n}"
        choices.append(AgentChoice(spec, spec, f"{short} \u2014 {about(spec)}", "search", short, about=about(spec)))
    for name in trained:
        short = PLAIN_NAMES.get(name, name)
        choices.append(AgentChoice(name, name, f"{short} \u2014 {about(name)}", "trained", short, about=about(name)))
    names = {choice.name for choice in choices}
    for choice in added(extra):
        if choice.name in names:
            raise ArgumentError(
                f"agent {shown(choice.name)} is already on the list: give each added policy its own name"
            )
        names.add(choice.name)
        choices.append(choice)
    return {choice.name: choice for choice in choices}

"""The agents' spec arguments: for each built-in agent, the names its spec takes, each one's type, and its bounds.

``trinity_env.agents.spec`` reads a spec's text once; this module turns the words it split into typed values
(``typed``: ``"400"`` becomes ``400`` once, where the text is read) and checks them against the agent's bounds as its
constructor would (``check``), building nothing. ``PARAMETERS`` says, per agent, which names its bare arguments bind
to, in order, and every name it takes; the ``*_ARGUMENTS`` tables map a spec's short name to its factory's keyword
(``az``'s ``sims`` sets ``simulations``) and its parser.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from trinity_env.agents.baselines import check_seed
from trinity_env.agents.ladder import LEVEL, level_spec
from trinity_env.agents.registry import AZ_STANDARD, STATE_DICT, AgentSpecError
from trinity_env.core.files import short


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


def _text(name: str, text: str) -> str:
    return text


def _search_mode(name: str, text: str) -> Any:
    """``az``'s ``mode=``: a ``SearchMode`` (``ValueError`` naming the modes for any other text)."""
    from trinity_env.search.az.action_selection import SearchMode  # numba: only for a spec that names a mode

    return SearchMode.parse(text, name)


def _level(name: str, text: str) -> int:
    level_spec(text)  # 1 ... 8, else one line listing the levels
    return int(text)


Arguments = dict[str, tuple[str, Callable[[str, str], Any]]]
"""Spec names to (the factory's keyword, the parser of the text): the one place where a spec's short name (``az``'s
``sims``, ``considered``) differs from the keyword it sets (``simulations``, ``max_considered``). Defaults are
declared once, in the constructors."""

MCTS_ARGUMENTS: Arguments = {
    "simulations": ("simulations", spec_int),
    "c": ("c", spec_float),
    "worlds": ("worlds", spec_int),
    "seed": ("seed", spec_int),
    "draft": ("draft", _text),
    "greed": ("greed", spec_float),
}
"""``mcts:N,c=..,worlds=..,seed=..,draft=..,greed=..``: spec names are ``MCTSAgent``'s keywords."""
AZ_ARGUMENTS: Arguments = {
    "sims": ("simulations", spec_int),
    "solver": ("solver", spec_int),
    "worlds": ("worlds", spec_int),
    "seed": ("seed", spec_int),
    "mode": ("mode", _search_mode),
    "considered": ("max_considered", spec_int),
}
"""``az:PATH,sims=..,solver=..,worlds=..,seed=..,mode=..,considered=..``: spec names and ``AZAgent`` keywords."""
RENAMED = {"search": "mode"}
"""Spec argument names an older version took -> their names now, refused in one line naming the new one (``az``'s
``search=`` is ``mode=``, as ``AZAgent`` and ``BatchedSearch`` call it)."""
_PATH: Arguments = {"path": ("path", _text)}
SHIPPED_ARGUMENTS: Arguments = {"sample": ("sample", _text), "seed": ("seed", spec_int)}
"""A shipped PPO policy's (``ppo-standard:sample=draft,seed=3``): how it samples and its seed."""
PARAMETERS: dict[str, tuple[tuple[str, ...], Arguments]] = {
    "random": (("seed",), {"seed": ("seed", spec_int)}),
    "greedy": ((), {}),
    "lookahead": ((), {}),
    "mcts": (("simulations",), MCTS_ARGUMENTS),
    "az": (("path",), _PATH | AZ_ARGUMENTS),
    AZ_STANDARD: (("sims",), AZ_ARGUMENTS),
    "onnx": (("path", "threads"), _PATH | {"threads": ("threads", spec_int)}),
    STATE_DICT: (("path",), _PATH | {"trainer": ("trainer", _text)} | AZ_ARGUMENTS),
    LEVEL: (("level",), {"level": ("level", _level)}),
}
"""Each built-in agent's arguments: the spec names its bare arguments bind to, in order, and every name it takes.
A shipped policy takes ``SHIPPED_ARGUMENTS`` (``sample``, then ``seed``)."""


def parameters(name: str) -> tuple[tuple[str, ...], Arguments]:
    return PARAMETERS.get(name) or (tuple(SHIPPED_ARGUMENTS), SHIPPED_ARGUMENTS)


def typed(name: str, args: list[str], keywords: dict[str, str]) -> tuple[tuple, tuple[tuple[str, Any], ...]]:
    """The spec's bare arguments and keywords, each converted by its parser: ``TypeError`` for one too many, an
    unknown name or one given twice, ``ValueError`` for a bad value."""
    positional, table = parameters(name)
    if len(args) > len(positional):
        raise TypeError(f"{name} takes {len(positional)} bare argument(s): too many positional arguments")
    for key in keywords:
        if key in RENAMED and RENAMED[key] in table:
            raise TypeError(f"{name}'s argument {key}= is now {RENAMED[key]}=")
        if key not in table:
            raise TypeError(f"{name} takes no argument {short(key)} (it takes {', '.join(table) or 'none'})")
        if key in positional[: len(args)]:
            raise TypeError(f"{name} got {key} twice, bare and as {key}=")
    typed_args = tuple(table[key][1](key, text) for key, text in zip(positional, args))
    return typed_args, tuple((key, table[key][1](key, text)) for key, text in keywords.items())


def check(name: str, keywords: dict[str, Any]) -> str | None:
    """Every argument of a spec (its factory's keywords, typed) against its bound, as its agent would check it,
    building nothing; the path it names, if any."""
    if name == "random":
        check_seed("random", keywords.get("seed"))
    elif name == "mcts":
        from trinity_env.agents.mcts import MCTSAgent

        MCTSAgent.check_arguments(**keywords)
    elif name in ("az", AZ_STANDARD, STATE_DICT):
        path = keywords.pop("path", None)
        if name == "az" and path is None:
            raise ValueError("az needs a checkpoint or run folder: az:PATH_OR_RUN,sims=N,solver=K")
        if name == STATE_DICT and path is None:
            raise ValueError(f"state_dict needs a file: {STATE_DICT}:PATH[,trainer=ppo|az][,sims=N]")
        try:
            from trinity_env.agents.az import AZAgent
            from trinity_env.agents.loaders.state_dict import TRAINERS
        except ImportError:
            raise AgentSpecError(f"{name} agents need torch: install the train extra") from None
        trainer = keywords.pop("trainer", None)
        if trainer is not None and trainer not in TRAINERS:
            raise ValueError(f"trainer must be one of {', '.join(TRAINERS)}, got {short(trainer)}")
        if trainer == "ppo" and keywords:
            names = {keyword: name for name, (keyword, _) in AZ_ARGUMENTS.items()}  # the spec's names, not the keywords
            raise ValueError(
                "trainer=ppo plays PPO's raw policy: it takes none of AlphaZero's search arguments, got "
                + ", ".join(sorted(names[keyword] for keyword in keywords))
            )
        AZAgent.check_arguments(**({"simulations": 0} if name == STATE_DICT else {}) | keywords)
        return path
    elif name == LEVEL:
        level_spec(keywords.get("level"))  # level: alone gives none: one line listing the levels
    elif name == "onnx":
        if keywords.get("path") is None:
            raise ValueError("onnx needs a model file: onnx:PATH[,threads=N]")
        if "threads" in keywords:
            from trinity_env.agents.loaders.onnx_policy import check_threads  # the limits table's bound, as the agent's

            check_threads(keywords["threads"])
        return keywords["path"]
    elif name not in PARAMETERS:  # a shipped policy
        if keywords.get("sample", "none") not in ("none", "all", "draft"):
            raise ValueError(f"sample must be none, all or draft, got {short(keywords['sample'])}")
        check_seed("policy", keywords.get("seed"))
    return None


def factory_keywords(name: str, args: tuple, keywords: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """A checked spec's typed ``args`` and ``keywords`` as its factory's keywords (``registry.AGENTS``)."""
    if not args and not keywords:
        return {}
    positional, table = parameters(name)
    named = [*zip(positional, args), *keywords]
    return {table[key][0]: value for key, value in named}

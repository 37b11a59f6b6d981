"""Agents by name: the spec grammar, the built-in agents' factories and the files a spec names.

``trinity_env.agents.spec.AgentSpec`` parses a spec with these tables and builds its agent with ``build``:
``make("mcts:400")``, ``make("greedy")``, ``make("random:seed=3")`` (``trinity_env.agents.make``).

A spec is ``name`` or ``name:arg,key=value,...``: the first bare argument is the agent's
main number (simulations for ``mcts``), the rest are keywords. An argument or a keyword's value may be written in
double quotes, ``onnx:"models/v1,final.onnx",threads=2``, where ``""`` stands for one ``"``: so a path holding a comma,
an ``=``, a leading quote or spaces at its ends is named too (``format_spec`` quotes just those; ``AgentSpec.of``
builds a spec from such values, never by pasting them into text). Every argument has an upper
bound, a named constant next to its agent (``mcts.MAX_SIMULATIONS``, ``az.MAX_WORLDS``...),
checked before any work, in the agents' constructors too. The policies shipped in the
package have names of their own (``ppo-standard``, see ``shipped()``; they need the
``train`` extra). The same strings name agents in Python, on the command line, in configs
and in the arena, and what a spec means does not depend on the working directory:

1. ``file:PATH`` names a file or folder, whatever ``PATH`` is (``file:greedy`` plays
   ``greedy.pt`` or the run folder ``greedy``).
2. Otherwise a spec whose name (before the first ``:``) is built in (``random``, ``greedy``,
   ``lookahead``, ``mcts``, ``az``, ``az-standard``, ``ppo-standard``, ``onnx``, ``state_dict``, ``level``: the
   difficulty ladder, ``level:1`` ... ``level:8``, ``trinity_env.agents.ladder``) means that agent, even
   when a file ``greedy.pt`` or a folder ``mcts`` lies in the working directory.
3. Otherwise a spec holding a path separator (``./model``, ``runs/quick``,
   ``runs/quick/best``) or ending in ``.pt`` or ``.zip`` (``model.pt``) names a trained
   policy: a ``.pt`` checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``) or a
   training run folder (its best checkpoint; one that is damaged plays its latest, with a
   warning). ``PATH`` that is not there names ``PATH.pt`` or ``PATH.zip``
   (``runs/quick/best``). Files are read as weights and plain data only, so no code in a
   checkpoint runs (see ``_checkpoint``).
4. Any other word is an unknown name: ``AgentSpecError``, which says to write ``./word``
   when a file or folder of that name is there.

A path must be a regular file or a folder: a named pipe, a device or a socket is refused at
once (``os.stat``, never opened: a pipe would block forever). The agent's ``name`` is the
spec as given, so the arena labels a checkpoint by its path, never by a built-in name.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent, check_seed
from trinity_env.agents.checkpoint import MAX_CHECKPOINT_BYTES, CheckpointError, best_else_latest
from trinity_env.agents.ladder import LEVEL, level_spec
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.core import TrinityError
from trinity_env.core.files import one_line, short
from trinity_env.core.paths import open_regular, refuse_special
from trinity_env.spec.agent import Agent, RandomAgent


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


def _text(name: str, text: str) -> str:
    return text


def spec_arguments(agent: str, given: dict[str, str], table: dict[str, tuple[str, Callable[[str, str], Any]]]):
    """The constructor keywords for the spec arguments given; the others keep the constructor's own defaults.

    ``table`` maps each spec name to its constructor keyword and parser: the one place where a spec's
    short name (``az``'s ``sims``, ``search``, ``considered``) differs from the keyword it sets
    (``simulations``, ``mode``, ``max_considered``). Defaults are declared once, in the constructors.
    """
    unknown = sorted(set(given) - set(table))
    if unknown:
        raise TypeError(f"{agent} takes no argument {short(unknown[0])} (it takes {', '.join(table)})")
    return {table[name][0]: table[name][1](name, text) for name, text in given.items()}


MCTS_ARGUMENTS = {
    "simulations": ("simulations", spec_int),
    "c": ("c", spec_float),
    "worlds": ("worlds", spec_int),
    "seed": ("seed", spec_int),
    "draft": ("draft", _text),
    "greed": ("greed", spec_float),
}
"""``mcts:N,c=..,worlds=..,seed=..,draft=..,greed=..``: spec names are ``MCTSAgent``'s keywords."""


def _mcts(simulations: str | None = None, **given: str) -> Agent:
    if simulations is not None:
        given = {"simulations": simulations} | given
    return MCTSAgent(**spec_arguments("mcts", given, MCTS_ARGUMENTS))


def _random(seed: str | None = None) -> Agent:
    return RandomAgent(check_seed("random", None if seed is None else spec_int("seed", seed)))


AZ_STANDARD = "az-standard"
"""The shipped AlphaZero agent (``training/alphazero.py``, ``configs/train/az-standard.yaml``)."""


AZ_ARGUMENTS = {
    "sims": ("simulations", spec_int),
    "solver": ("solver", spec_int),
    "worlds": ("worlds", spec_int),
    "seed": ("seed", spec_int),
    "search": ("mode", _text),
    "considered": ("max_considered", spec_int),
}
"""``az:PATH,sims=..,solver=..,worlds=..,seed=..,search=..,considered=..``: spec names and ``AZAgent`` keywords."""


def _az(path: str | None = None, **given: str) -> Agent:
    """``az:PATH_OR_RUN,sims=N,solver=K``: an AlphaZero network (a checkpoint or a run folder) with N simulations
    per move (0: the raw policy) and the exact solver for positions with at most K empty tiles (0: off)."""
    if path is None:
        raise ValueError("az needs a checkpoint or run folder: az:PATH_OR_RUN,sims=N,solver=K")
    try:
        from trinity_env.agents.az import AZAgent
    except ImportError:
        raise AgentSpecError("az agents need torch: install the train extra") from None
    arguments = spec_arguments("az", given, AZ_ARGUMENTS)
    AZAgent.check_arguments(**arguments)  # every bound before the checkpoint is read
    return AZAgent.from_checkpoint(path, **arguments)


def _az_standard(sims: str | None = None, **given: str) -> Agent:
    """The shipped ``az-standard`` network: ``az-standard:sims=0`` plays its raw policy."""
    if sims is not None:
        given = {"sims": sims} | given
    return _az(str(SHIPPED_DIR / f"{AZ_STANDARD}.pt"), **given)


def _onnx(path: str | None = None, threads: str | None = None) -> Agent:
    """``onnx:PATH,threads=N``: a policy exported to ONNX from any framework (``trinity_env.agents.onnx_policy``, the
    ``onnx`` extra), checked by what loading it would allocate before onnxruntime sees it; its raw policy plays."""
    if path is None:
        raise ValueError("onnx needs a model file: onnx:PATH")
    from trinity_env.agents.onnx_policy import OnnxPolicyAgent

    return OnnxPolicyAgent.from_file(path, threads=1 if threads is None else spec_int("threads", threads))


STATE_DICT = "state_dict"
"""``state_dict:PATH,trainer=ppo|az,sims=N``: a bare torch ``state_dict`` of one of the project's networks, which
network and its size read from its keys and shapes (``trinity_env.agents.state_dict``)."""
STATE_DICT_ARGUMENTS = {"trainer": ("trainer", _text)} | AZ_ARGUMENTS
"""``state_dict:PATH``'s keywords: ``trainer``, then an AlphaZero network's search, as ``az:`` takes it."""


def state_dict_arguments(given: dict[str, str]) -> tuple[str | None, dict[str, Any]]:
    """The ``trainer`` (``None`` when not given) and the ``AZAgent`` keywords given in a ``state_dict:`` spec's
    keyword arguments, each checked against its bound (``sims`` 0 unless given: the raw policy); reads no file."""
    arguments = spec_arguments(STATE_DICT, given, STATE_DICT_ARGUMENTS)
    try:
        from trinity_env.agents.az import AZAgent
        from trinity_env.agents.state_dict import TRAINERS
    except ImportError:
        raise AgentSpecError("state_dict policies need torch: install the train extra") from None
    trainer = arguments.pop("trainer", None)
    if trainer is not None and trainer not in TRAINERS:
        raise ValueError(f"trainer must be one of {', '.join(TRAINERS)}, got {short(trainer)}")
    if trainer == "ppo" and arguments:
        searched = ", ".join(sorted(set(given) - {"trainer"}))
        raise ValueError(
            f"trainer=ppo plays PPO's raw policy: it takes none of AlphaZero's search arguments, got {searched}"
        )
    AZAgent.check_arguments(**({"simulations": 0} | arguments))
    return trainer, arguments


def _state_dict(path: str | None = None, **given: str) -> Agent:
    """``state_dict:PATH,trainer=ppo|az,sims=N``: a bare ``state_dict`` of a project network (the ``train`` extra):
    its raw policy, or an AlphaZero network's search with ``sims=N`` and ``az:``'s other arguments."""
    if path is None:
        raise ValueError(f"state_dict needs a file: {STATE_DICT}:PATH[,trainer=ppo|az][,sims=N]")
    trainer, search = state_dict_arguments(given)  # every bound before the file is read
    from trinity_env.agents.state_dict import state_dict_agent

    return state_dict_agent(path, trainer, **search)


def _level(level: str | None = None) -> Agent:
    """``level:N``: the agent of the difficulty ladder's level N (``trinity_env.agents.ladder``); ``build`` and
    ``make`` label it ``level:N``. The ladder names built-in agents only, so their factories build them here."""
    name, _, rest = level_spec(level).partition(":")
    args, keywords = _arguments(rest)
    return AGENTS[name](*args, **keywords)


AGENTS: dict[str, Callable[..., Agent]] = {
    "random": _random,
    "greedy": lambda: GreedyAgent(),
    "lookahead": lambda: LookaheadAgent(),
    "mcts": _mcts,
    "az": _az,
    AZ_STANDARD: _az_standard,
    "onnx": _onnx,
    STATE_DICT: _state_dict,
    LEVEL: _level,
}


SHIPPED_DIR = Path(str(resources.files("trinity_env.agents") / "data"))


def shipped() -> list[str]:
    """Names of the trained policies that ship inside the package (``make(name)`` plays one)."""
    return sorted(path.stem for path in SHIPPED_DIR.glob("*.pt"))


def _load_file(path: Path, spec: str, sample: str, seed: str | None) -> Agent:
    """The agent of one checkpoint file: a ``.zip`` (weights only, never unpickled) or a ``.pt``."""
    try:
        from trinity_env.agents.policy import CheckpointError
    except ImportError:
        what = "an SB3 checkpoint" if path.suffix == ".zip" else "a checkpoint"
        raise AgentSpecError(f"{spec!r} is {what}: install the train extra (torch) to play it") from None
    refuse_special(path, CheckpointError)
    if path.suffix == ".zip":
        try:
            from trinity_env.agents.sb3 import SB3PolicyAgent
        except ImportError:
            raise AgentSpecError(f"{spec!r} is an SB3 checkpoint: install the train extra to play it") from None
        return SB3PolicyAgent.from_zip(path)
    from trinity_env.agents.policy import NetworkAgent

    seed_value = check_seed(spec, None if seed is None else spec_int("seed", seed))
    return NetworkAgent.from_checkpoint(path, sample=sample, seed=seed_value)


def _run_folder(folder: Path, spec: str, sample: str, seed: str | None) -> Agent:
    """A run folder's best checkpoint, else (missing or damaged, with a warning) its latest.

    The ``.pt`` pair (``fast_ppo``) is used when either file exists, else the ``.zip`` pair
    (``selfplay_ppo``); ``CheckpointError`` names the folder and, when both files are there
    but neither loads, both problems. A ``best`` that is not a regular file (a named pipe)
    counts as damaged.
    """
    try:
        from trinity_env.agents.policy import CheckpointError
    except ImportError:
        raise AgentSpecError(f"{spec!r} is a run folder: install the train extra (torch) to play it") from None
    suffix = ".pt" if any(os.path.exists(folder / f"{n}.pt") for n in ("best", "latest")) else ".zip"
    if not any(os.path.lexists(folder / f"{n}{suffix}") for n in ("best", "latest")):
        raise CheckpointError(f"no checkpoint in the run folder {folder}: no best.pt, latest.pt, best.zip, latest.zip")
    return best_else_latest(
        folder, folder / f"best{suffix}", folder / f"latest{suffix}", lambda path: _load_file(path, spec, sample, seed)
    )


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


FILE_PREFIX = "file:"
"""``file:PATH`` names a checkpoint or run folder by any path, even a bare word (``file:greedy``)."""
_SEPARATORS = tuple({"/", os.sep, os.altsep or "/"})


def builtin_names() -> set[str]:
    """The names that always mean a built-in agent, whatever the working directory holds."""
    return {*AGENTS, *shipped()}


def names_path(text: str) -> bool:
    """Whether the spec ``text`` names a file or folder rather than a built-in agent (the module's rule)."""
    if text.startswith(FILE_PREFIX):
        return True
    if text.partition(":")[0] in builtin_names():
        return False
    return any(separator in text for separator in _SEPARATORS) or text.endswith((".pt", ".zip"))


def _path_target(text: str) -> Path:
    """The file or folder a path spec names: itself when it is there, else ``PATH.pt`` or ``PATH.zip``
    (``RUN/best`` names ``RUN/best.pt``); refuses a named pipe, device or socket before anything opens it."""
    body = text[len(FILE_PREFIX) :] if text.startswith(FILE_PREFIX) else text
    if not body.strip():
        raise AgentSpecError(f"{FILE_PREFIX} needs a path to a checkpoint or run folder, got {text!r}")
    if "\x00" in body:
        raise AgentSpecError(f"a path cannot hold a NUL character, got {text!r}")
    path = Path(body)
    if not os.path.exists(path) and path.suffix not in (".pt", ".zip"):
        for suffix in (".pt", ".zip"):
            if os.path.exists(body + suffix):
                path = Path(body + suffix)
                break
    refuse_special(path, AgentSpecError)
    return path


QUOTE = '"'
"""Opens and closes a quoted argument (``"a,b.onnx"``); doubled inside one, it stands for itself."""


def _quoted(rest: str, start: int) -> tuple[str, int]:
    """The quoted value opening at ``rest[start]`` and the index just past its closing quote."""
    value, i = [], start + 1
    while True:
        end = rest.find(QUOTE, i)
        if end < 0:
            raise AgentSpecError(f"a quoted argument is not closed (add a {QUOTE}): {short(rest[start:])}")
        value.append(rest[i:end])
        if rest.startswith(QUOTE * 2, end):
            value.append(QUOTE)
            i = end + 2
            continue
        return "".join(value), end + 1


def _value(rest: str, start: int) -> tuple[str, int]:
    """The value starting at ``rest[start]`` (spaces around it dropped unless quoted) and the index of the comma
    that ends it (``len(rest)`` at the end)."""
    while start < len(rest) and rest[start].isspace():
        start += 1
    if not rest.startswith(QUOTE, start):
        end = rest.find(",", start)
        end = len(rest) if end < 0 else end
        return rest[start:end].strip(), end
    value, end = _quoted(rest, start)
    after = rest.find(",", end)
    after = len(rest) if after < 0 else after
    if rest[end:after].strip():
        raise AgentSpecError(f"text after a quoted argument (a comma must follow it): {short(rest[start:after])}")
    return value, after


def _arguments(rest: str) -> tuple[list[str], dict[str, str]]:
    """The bare arguments and the ``key=value`` ones of a spec's ``rest`` (after its name and first ``:``): split at
    the commas outside double quotes, a quoted value taken as written (``""`` for ``"``)."""
    args, kwargs, i = [], {}, 0
    while i < len(rest):
        while i < len(rest) and rest[i].isspace():
            i += 1
        if rest.startswith(QUOTE, i):  # a quoted bare argument
            value, i = _value(rest, i)
            args.append(value)
        else:
            end = rest.find(",", i)
            end = len(rest) if end < 0 else end
            equals = rest.find("=", i, end)
            if equals < 0:
                if rest[i:end].strip():
                    args.append(rest[i:end].strip())
                i = end
            else:
                key = rest[i:equals].strip()
                kwargs[key], i = _value(rest, equals + 1)
        i += 1  # past the comma
    return args, kwargs


def quote_argument(value: str) -> str:
    """``value`` as one argument of a spec: as it is where ``_arguments`` reads it back so, else in double quotes
    (a comma, an ``=``, a leading quote, spaces at its ends, or nothing at all)."""
    plain = value and value == value.strip() and not value.startswith(QUOTE) and "," not in value and "=" not in value
    return value if plain else QUOTE + value.replace(QUOTE, QUOTE * 2) + QUOTE


def format_spec(name: str, args: Sequence[str] = (), keywords: Mapping[str, str] | None = None) -> str:
    """The spec text of agent ``name`` with bare ``args`` and ``keywords``, each quoted where it must be
    (``quote_argument``): ``_arguments`` reads back exactly ``args`` and ``keywords``."""
    parts = [quote_argument(str(a)) for a in args]
    parts += [f"{key}={quote_argument(str(value))}" for key, value in (keywords or {}).items()]
    return f"{name}:{','.join(parts)}" if parts else name


def _unreadable(spec: str, err: OSError) -> CheckpointError:
    """One line for a file that ``os.stat`` calls regular but that cannot be read as one: ``/proc/self/mem``
    (its reads and seeks fail), ``/proc/self/pagemap`` (it reports 0 bytes and reads for ever)."""
    return CheckpointError(f"cannot read the checkpoint of {short(spec)}: {one_line(err.strerror or err)}")


def unknown_name(text: str) -> None:
    """Raise the one-line ``AgentSpecError`` for a spec whose name is no agent's: the known names, and a hint to
    write ``./NAME`` when a file or folder of that name is here."""
    name = text.partition(":")[0]
    known = ", ".join(sorted(builtin_names()))
    here = any(os.path.lexists(text + suffix) for suffix in ("", ".pt", ".zip"))
    hint = f"; to play the file or folder here, name it by a path: ./{text} or {FILE_PREFIX}{text}" if here else ""
    raise AgentSpecError(f"no agent named {name!r} (in {short(text)}); known: {known}{hint}")


def shipped_factory(name: str) -> Callable[..., Agent]:
    """The factory of the shipped policy ``name`` (``ppo-standard``): its checkpoint, ``sample`` and ``seed``."""

    def factory(sample: str = "none", seed: str | None = None) -> Agent:
        return _checkpoint(str(SHIPPED_DIR / f"{name}.pt"), sample, seed)

    return factory


def build(spec: Any) -> Agent:
    """The agent of a checked ``AgentSpec`` (``trinity_env.agents.spec``): its factory called with the spec's
    arguments, or its checkpoint read. Its ``name`` is the spec's text."""
    text = spec.text
    if spec.name == FILE_PREFIX:
        try:
            agent = _checkpoint(spec.path)
        except OSError as err:  # a /proc file is "regular" by its stat, but cannot be read as a file (see below)
            raise _unreadable(text, err) from None
        agent.name = text
        return agent
    factory = AGENTS.get(spec.name) or shipped_factory(spec.name)  # AgentSpec.parse let only known names through
    try:
        agent = factory(*spec.args, **dict(spec.keywords))
    except CheckpointError:  # the file, not the spec, is at fault: its error names it
        raise
    except OSError as err:  # az:PATH with a /proc file: "regular" by its stat, yet its reads fail
        raise _unreadable(text, err) from None
    except (TypeError, ValueError) as err:
        raise AgentSpecError(f"bad arguments in agent spec {short(text)}: {err}") from None
    agent.name = text
    return agent


MAX_HASHED_BYTES = MAX_CHECKPOINT_BYTES
"""The most bytes ``spec_sha256`` reads of one file: the most a checkpoint is read at."""


def _run_files(folder: Path, suffix: str) -> list[Path]:
    """A run folder's ``best`` and ``latest`` of ``suffix`` that are there; neither is one ``CheckpointError`` line."""
    files = [folder / f"{n}{suffix}" for n in ("best", "latest") if os.path.lexists(folder / f"{n}{suffix}")]
    if not files:
        raise CheckpointError(f"no checkpoint in the run folder {folder}: no best{suffix} or latest{suffix}")
    return files


def spec_files(spec: str) -> list[Path] | None:
    """The files the agent ``spec`` reads, as ``make`` finds them (the same working directory), or ``None`` when
    it reads none (``mcts:200``, ``greedy``).

    A run folder gives every ``best``/``latest`` of the kind ``make`` plays (``.pt`` when either is there, else
    ``.zip``): it plays ``best`` unless that is damaged, so a changed ``latest`` counts too. A spec that ``make``
    refuses raises ``AgentSpecError`` here as well, or gives what it would have read.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec is a string like 'greedy' or 'mcts:400', got {spec!r}")
    text = spec.strip()
    if names_path(text):
        target = _path_target(text)
        if target.is_dir() and target.suffix not in (".pt", ".zip"):
            suffix = ".pt" if any(os.path.exists(target / f"{n}.pt") for n in ("best", "latest")) else ".zip"
            return _run_files(target, suffix)
        return [target]
    name, _, rest = text.partition(":")
    if name in shipped():  # ppo-standard and az-standard (whatever their arguments)
        return [SHIPPED_DIR / f"{name}.pt"]
    if name in ("onnx", STATE_DICT):  # onnx:PATH,threads=N and state_dict:PATH,...
        args, _ = _arguments(rest)
        return [Path(args[0])] if args else None
    if name != "az":
        return None
    args, _ = _arguments(rest)
    if not args:
        return None  # make refuses it: az needs a path
    path = args[0]  # as AZAgent.from_checkpoint reads it: a run folder's .pt pair, else PATH or PATH.pt
    if Path(path).is_dir():
        return _run_files(Path(path), ".pt")
    if not Path(path).suffix and os.path.exists(path + ".pt"):
        return [Path(path + ".pt")]
    return [Path(path)]


def _hash_file(path: Path, spec: str, digest: Any) -> None:
    """Feed ``path``'s size and bytes to ``digest``; a file that is not a plain, bounded, readable file is one
    ``CheckpointError`` line (a named pipe or device is refused without blocking, as every loader does)."""
    if "\x00" in str(path):
        raise AgentSpecError(f"a path cannot hold a NUL character, got {short(spec)}")
    try:
        handle, kind, size = open_regular(path)
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path} (agent {short(spec)})") from None
    except OSError as err:
        raise _unreadable(spec, err) from None
    if handle is None:
        raise CheckpointError(f"{path} is {kind}, not a checkpoint file (agent {short(spec)})")
    if size > MAX_HASHED_BYTES:
        handle.close()
        raise CheckpointError(f"{path} is over {MAX_HASHED_BYTES:,} bytes, the most a checkpoint is read at")
    digest.update(f"{path.name}\x00{size}\x00".encode())
    read = 0
    try:
        with handle:  # never past the size its stat gave (+1 to notice more): a /proc file's 0 says nothing
            while read <= size:
                block = handle.read(min(1 << 20, size + 1 - read))
                if not block:
                    break
                digest.update(block)
                read += len(block)
    except OSError as err:
        raise _unreadable(spec, err) from None
    if read != size:
        got = "more" if read > size else f"{read:,}"
        raise CheckpointError(
            f"{path} does not hold the {size:,} bytes its stat gives ({got} read): a /proc file or one being written"
        )


def spec_sha256(spec: str) -> str | None:
    """A hash of the files the agent ``spec`` reads (``spec_files``: checkpoints, a run folder's ``best`` and
    ``latest``), or ``None`` when it reads none (``mcts:200``): what a build records so that a replaced file is
    noticed (a dataset built with ``./agent.pt`` is never completed with another network's games). Each file adds
    its name, its size and its bytes, so the hash changes with any of them."""
    files = spec_files(spec)
    if files is None:
        return None
    import hashlib

    digest = hashlib.sha256()
    for path in files:
        _hash_file(path, spec, digest)
    return digest.hexdigest()

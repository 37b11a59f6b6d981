"""Agent specs: the grammar, read once, into ``AgentSpec``, a typed value that travels down and builds the agent.

``AgentSpec.parse("mcts:400,seed=3")`` checks the whole spec — its grammar, its name, every argument converted to its
type and checked against its bound, and, for a spec that names a file, that the file is there and is a regular file
or folder — without building the agent: no search tree is allocated and no checkpoint is read. The value is frozen,
hashable and picklable (a worker process rebuilds the agent from it, parsing nothing), ``str(spec)`` gives the text
back, ``spec.label`` is what tables print, ``spec.families`` the numba kernel families the agent runs on (``trinity
prepare``), ``spec.files()`` and ``spec.sha256()`` the files it reads and their hash, and ``spec.build()`` makes the
agent (``registry.build``: its factory called with the typed arguments), each call a fresh one.

The grammar: a spec is ``name`` or ``name:arg,key=value,...``; the bare arguments bind in order to the agent's
parameters (``spec_arguments.PARAMETERS``; the first is its main number: simulations for ``mcts``), the rest are
keywords, each converted to its type there, once. An argument or a keyword's value may be written in double
quotes, ``onnx:"models/v1,final.onnx",threads=2``, where ``""`` stands for one ``"``: so a path holding a comma, an
``=``, a leading quote or spaces at its ends is named too (``format_spec`` quotes just those; ``AgentSpec.of`` builds
a spec from values, never by pasting them into text). Every argument has an upper bound, a named constant next to its
agent (``mcts.MAX_SIMULATIONS``, ``az.MAX_WORLDS``...), checked here
and in the agents' constructors. What a spec means does not depend on the working directory:

1. ``file:PATH`` names a file or folder, whatever ``PATH`` is (``file:greedy`` plays ``greedy.pt`` or the run
   folder ``greedy``).
2. Otherwise a spec whose name (before the first ``:``) is built in (``random``, ``greedy``, ``lookahead``,
   ``mcts``, ``az``, ``az-standard``, ``ppo-standard``, ``onnx``, ``state_dict``, ``level``: the difficulty ladder,
   ``level:1`` ... ``level:8``, ``trinity_env.agents.ladder``) means that agent, even when a file ``greedy.pt`` or
   a folder ``mcts`` lies in the working directory. The policies shipped in the package (``ppo-standard``,
   ``registry.shipped()``) need the ``train`` extra.
3. Otherwise a spec holding a path separator (``./model``, ``runs/quick/best``) or ending in ``.pt`` or ``.zip``
   names a trained policy: a ``.pt`` checkpoint (``fast_ppo``), a ``.zip`` one (``selfplay_ppo``) or a training run
   folder (its best checkpoint; one that is damaged plays its latest, with a warning). ``PATH`` that is not there
   names ``PATH.pt`` or ``PATH.zip``.
4. ``py:package.module:factory`` names outside code, refused unless parsed with ``allow_code``.
5. Any other word is an unknown name: ``AgentSpecError``, which says to write ``./word`` when a file or folder of
   that name is there.

A path must be a regular file or a folder: a named pipe, a device or a socket is refused at once (``os.stat``,
never opened: a pipe would block forever). ``make(text)`` is ``AgentSpec.parse(text).build()``.

Everything the evaluation tools take is a ``Player`` (``label``, ``families``, ``build()``): an ``AgentSpec``, or a
value that wraps a policy that no text names (``player``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from trinity_env.agents import registry
from trinity_env.agents.ladder import LEVEL, level_spec
from trinity_env.agents.loaders.checkpoint import CheckpointError
from trinity_env.agents.registry import AZ_STANDARD, STATE_DICT, AgentSpecError
from trinity_env.agents.spec_arguments import check, factory_keywords, typed
from trinity_env.agents.spec_hash import hash_file, run_files
from trinity_env.core import ArgumentError
from trinity_env.core.files import short
from trinity_env.core.paths import refuse_special
from trinity_env.spec.agent import Agent

MAX_SPEC_CHARACTERS = 1000
"""The longest spec text: a path and a few arguments fit many times over."""
CODE_PREFIX = "py:"
"""``py:package.module:factory`` names outside code: a factory returning an ``Agent`` or a policy function. It
runs when built, so ``parse`` refuses it unless ``allow_code`` (the command line's ``--allow-code``)."""
CODE_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")
FILE_PREFIX = "file:"
"""``file:PATH`` names a checkpoint or run folder by any path, even a bare word (``file:greedy``)."""
QUOTE = '"'
"""Opens and closes a quoted argument (``"a,b.onnx"``); doubled inside one, it stands for itself."""
_SEPARATORS = tuple({"/", os.sep, os.altsep or "/"})

# ---------------------------------------------------------------------- the text


def builtin_names() -> set[str]:
    """The names that always mean a built-in agent, whatever the working directory holds."""
    return {*registry.AGENTS, LEVEL, *registry.shipped()}


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


def split_arguments(rest: str) -> tuple[list[str], dict[str, str]]:
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
    """``value`` as one argument of a spec: as it is where ``split_arguments`` reads it back so, else in double
    quotes (a comma, an ``=``, a leading quote, spaces at its ends, or nothing at all)."""
    plain = value and value == value.strip() and not value.startswith(QUOTE) and "," not in value and "=" not in value
    return value if plain else QUOTE + value.replace(QUOTE, QUOTE * 2) + QUOTE


def format_spec(name: str, args: Sequence[object] = (), keywords: Mapping[str, object] | None = None) -> str:
    """The spec text of agent ``name`` with bare ``args`` and ``keywords``, each quoted where it must be
    (``quote_argument``): ``split_arguments`` reads back exactly their text."""
    parts = [quote_argument(str(a)) for a in args]
    parts += [f"{key}={quote_argument(str(value))}" for key, value in (keywords or {}).items()]
    return f"{name}:{','.join(parts)}" if parts else name


def _unknown_name(text: str) -> AgentSpecError:
    """The one-line error for a spec whose name is no agent's: the known names, and a hint to write ``./NAME`` when a
    file or folder of that name is here."""
    name = text.partition(":")[0]
    known = ", ".join(sorted(builtin_names()))
    here = any(os.path.lexists(text + suffix) for suffix in ("", ".pt", ".zip"))
    hint = f"; to play the file or folder here, name it by a path: ./{text} or {FILE_PREFIX}{text}" if here else ""
    return AgentSpecError(f"no agent named {name!r} (in {short(text)}); known: {known}{hint}")


# ---------------------------------------------------------------------- the value


@runtime_checkable
class Player(Protocol):
    """What the evaluation tools take for each side: a ``label`` for tables, the kernel ``families`` to compile
    first, and ``build()``, a fresh ``Agent`` each call (one a process, one a game series)."""

    @property
    def label(self) -> str: ...

    @property
    def families(self) -> tuple[str, ...]: ...

    def build(self) -> Agent: ...


def _family(name: str) -> tuple[str, ...]:
    if name in ("greedy", "lookahead"):
        return ("baselines",)
    if name == "mcts":
        return ("MCTS",)
    if name in ("az", AZ_STANDARD):
        return ("tactical features", "AlphaZero search")
    return ()


@dataclass(frozen=True)
class AgentSpec:
    """A checked agent spec (see the module): ``text`` as given (stripped), the agent's ``name`` (``"file:"`` for a
    path, ``"py"`` for outside code), its bare ``args`` and its ``keywords`` (``(name, value)`` pairs in the order
    given), each already of its type (``400``, ``1.2``, ``"search"``), and the ``path`` it reads, if any."""

    text: str
    name: str
    args: tuple[Any, ...] = ()
    keywords: tuple[tuple[str, Any], ...] = ()
    path: str | None = None
    allow_code: bool = False
    """Whether building it may import and run outside code (``py:``): set only by ``parse(..., allow_code=True)``."""
    pinned_sha256: str | None = None
    """The sha256 its files must keep (``pinned``): every build hashes them again once it has read them."""

    @classmethod
    def parse(cls, text: object, *, allow_code: bool = False) -> AgentSpec:
        """``text`` checked and parsed; one ``AgentSpecError`` line if bad (``CheckpointError`` naming a file that
        is not there). An ``AgentSpec`` is returned as it is."""
        if isinstance(text, AgentSpec):
            return text
        if not isinstance(text, str) or not text.strip():
            raise AgentSpecError(f"an agent spec is a string like 'greedy' or 'mcts:400', got {short(text)}")
        text = text.strip()
        if len(text) > MAX_SPEC_CHARACTERS:
            raise AgentSpecError(f"an agent spec is at most {MAX_SPEC_CHARACTERS} characters, got {len(text)}")
        if text.startswith(CODE_PREFIX):
            return cls._code(text, allow_code)
        if names_path(text):
            target = _path_target(text)  # refuses a NUL, a pipe, a device or a socket without opening it
            if not target.exists():
                raise CheckpointError(f"no checkpoint at {target}")
            return cls(text, FILE_PREFIX, path=str(target))
        name, _, rest = text.partition(":")
        args, keywords = split_arguments(rest)
        if name not in builtin_names():
            raise _unknown_name(text)
        try:
            typed_args, typed_keywords = typed(name, args, keywords)
            where = check(name, factory_keywords(name, typed_args, typed_keywords))
        except (TypeError, ValueError, ArgumentError) as err:
            raise AgentSpecError(f"bad arguments in agent spec {short(text)}: {err}") from None
        path = None
        if where is not None:
            where = str(Path(where))  # ./x.onnx is x.onnx, as every loader names it
            refuse_special(Path(where), AgentSpecError)
            one_file = name in ("onnx", STATE_DICT)  # never PATH.pt, never a run folder
            if not os.path.exists(where) and (one_file or not os.path.exists(f"{where}.pt")):
                raise CheckpointError(f"no checkpoint at {where}")
            if one_file and os.path.isdir(where):
                what = "an ONNX model file" if name == "onnx" else "a state_dict file"
                raise CheckpointError(f"{where} is a folder, not {what}")
            path = where
        elif name in registry.shipped():
            path = str(registry.SHIPPED_DIR / f"{name}.pt")
        return cls(text, name, typed_args, typed_keywords, path)

    @classmethod
    def of(cls, name: str, *args: object, allow_code: bool = False, **keywords: object) -> AgentSpec:
        """The spec of agent ``name`` with these arguments given as values, a path among them
        (``AgentSpec.of("onnx", path, threads=2)``, ``AgentSpec.of("file", run_folder)``), never pasted into text:
        ``format_spec`` quotes each where the grammar needs it (a comma in a file name), and the text is parsed and
        checked like any other; its ``path`` is the path given."""
        if name == FILE_PREFIX.rstrip(":"):  # file:PATH takes the rest of the text as the path
            if len(args) != 1 or keywords:
                raise AgentSpecError("file: names one path and takes no arguments")
            return cls.parse(FILE_PREFIX + str(args[0]), allow_code=allow_code)
        return cls.parse(format_spec(name, args, keywords), allow_code=allow_code)

    @classmethod
    def _code(cls, text: str, allow_code: bool) -> AgentSpec:
        target = text[len(CODE_PREFIX) :]
        if not CODE_TARGET.fullmatch(target):
            raise AgentSpecError(f"{CODE_PREFIX} needs package.module:factory, got {short(text)}")
        if not allow_code:
            raise AgentSpecError(
                f"{short(text)} imports and runs outside code: allow it with --allow-code "
                "(AgentSpec.parse(..., allow_code=True)), or export the policy to ONNX (onnx:PATH runs no code)"
            )
        return cls(text, CODE_PREFIX.rstrip(":"), (target,), allow_code=True)

    def __str__(self) -> str:
        return self.text

    @property
    def label(self) -> str:
        """The spec's text: what tables and replays name the agent by."""
        return self.text

    @property
    def factory_keywords(self) -> dict[str, Any]:
        """The keywords its factory takes (``registry.AGENTS``): every argument by its factory's name, typed."""
        return factory_keywords(self.name, self.args, self.keywords)

    @property
    def families(self) -> tuple[str, ...]:
        """The numba kernel families the agent runs on (``trinity_env.prepare``); the PPO networks need none."""
        if self.name == LEVEL:  # a ladder level runs on its agent's kernels
            return ladder_spec(self.factory_keywords["level"]).families
        if self.name == STATE_DICT:  # an AlphaZero network's, unless the spec says PPO's
            return () if self.factory_keywords.get("trainer") == "ppo" else _family("az")
        return _family(self.name)

    def build(self) -> Agent:
        """A fresh agent (a checkpoint is read here, and only here; outside code imported and run here). A pinned
        spec's files are hashed again once read: a file replaced since ``pinned`` is one ``CheckpointError`` line,
        never an agent."""
        if self.name == CODE_PREFIX.rstrip(":"):
            return self._build_code()
        if self.name == LEVEL:  # the ladder's agent, labelled level:N
            agent = ladder_spec(self.factory_keywords["level"]).build()
            agent.name = self.text
            return agent
        agent = registry.build(self)
        if self.pinned_sha256 is not None:
            self.check_pinned()
        return agent

    def _build_code(self) -> Agent:
        """``py:package.module:factory``: the module imported, ``factory()`` called; an ``Agent`` or a policy
        function it returns (``policies.policy_as_agent``)."""
        import importlib

        from trinity_env.agents.policies import policy_as_agent

        if not self.allow_code:
            raise AgentSpecError(f"{short(self.text)} runs outside code and was not allowed to")
        module_name, _, factory_name = self.args[0].partition(":")
        _working_directory_on_path()
        try:
            factory = getattr(importlib.import_module(module_name), factory_name)
        except (ImportError, AttributeError) as err:
            where = (
                " (looked in the working directory and on the import path)" if type(err) is ModuleNotFoundError else ""
            )
            raise AgentSpecError(f"cannot load {short(self.text)}: {' '.join(str(err).split())}{where}") from None
        agent = policy_as_agent(factory())
        agent.name = self.text
        return agent

    def files(self) -> list[Path] | None:
        """The files the agent reads, as its build finds them (the same working directory), or ``None`` when it reads
        none (``mcts:200``, ``greedy``, outside code). A run folder gives every ``best``/``latest`` of the kind it plays
        (``.pt`` when either is there, else ``.zip``): it plays ``best`` unless that is damaged, so a changed
        ``latest`` counts too; ``az:PATH`` as ``AZAgent.from_checkpoint`` reads it (a run folder's ``.pt`` pair, else
        ``PATH`` or ``PATH.pt``)."""
        if self.path is None or self.name == CODE_PREFIX.rstrip(":"):
            return None
        path = Path(self.path)
        if self.name in (FILE_PREFIX, "az") and path.is_dir() and path.suffix not in (".pt", ".zip"):
            pt = self.name == "az" or any(os.path.exists(path / f"{n}.pt") for n in ("best", "latest"))
            return run_files(path, ".pt" if pt else ".zip")
        if self.name == "az" and not path.suffix and not path.exists() and os.path.exists(f"{path}.pt"):
            return [Path(f"{path}.pt")]
        return [path]

    def sha256(self) -> str | None:
        """A hash of the files the agent reads (``files``: checkpoints, a run folder's ``best`` and ``latest``), or
        ``None`` when it reads none (``mcts:200``): what a build records so that a replaced file is noticed (a dataset
        built with ``./agent.pt`` is never completed with another network's games). Each file adds its name, its size
        and its bytes, so the hash changes with any of them. A pinned spec's is the one it was pinned to."""
        return self.pinned_sha256 or self._hash_files()

    def _hash_files(self) -> str | None:
        files = self.files()
        if files is None:
            return None
        digest = hashlib.sha256()
        for path in files:
            hash_file(path, self.text, digest)
        return digest.hexdigest()

    def pinned(self) -> AgentSpec:
        """This spec held to its files' present sha256: each ``build`` (in this process or a worker) hashes them
        again after reading them and refuses a change, so a run that records the hash (``trinity benchmark``'s card,
        a rating's games file) plays only the files it names. The same spec when it reads no file."""
        if self.pinned_sha256 is not None:
            return self
        sha256 = self._hash_files()
        return self if sha256 is None else replace(self, pinned_sha256=sha256)

    def check_pinned(self) -> None:
        """``CheckpointError`` in one line when the files no longer have the sha256 the spec was pinned to."""
        found = self._hash_files()
        if found != self.pinned_sha256:
            raise CheckpointError(
                f"the files of {short(self.text)} changed while they were in use (sha256 {self.pinned_sha256[:12]} "
                f"when the run began, {str(found)[:12]} now): run again with the files left alone"
            )


@cache
def ladder_spec(level: int) -> AgentSpec:
    """The ``AgentSpec`` of ladder level ``level``'s agent (``LADDER``'s text, parsed once a process)."""
    return AgentSpec.parse(level_spec(level))


def _working_directory_on_path() -> None:
    """Make modules in the working directory importable, as ``python -m`` does (``trinity``, a console script, has
    its own folder on the path instead): the directory goes last, so it shadows no installed package. Only a
    ``py:`` spec, allowed to run code, calls this; worker processes start in the same directory and call it too."""
    import sys

    here = os.path.realpath(os.getcwd())
    if all(os.path.realpath(entry or os.curdir) != here for entry in sys.path):
        sys.path.append(here)


# ---------------------------------------------------------------------- the doors


def player(value: object) -> Player:
    """What the evaluation tools take for one side: an ``AgentSpec`` or any other ``Player`` as it is, a spec
    string parsed (``AgentSpec.parse``), an ``Agent`` or a policy function wrapped (``policies.AgentPlayer`` of
    ``policies.policy_as_agent``: a function ``(observation, mask) -> action``, or PettingZoo's ``observation_dict ->
    action``). One line naming the problem for anything else."""
    if isinstance(value, str):
        return AgentSpec.parse(value)
    if isinstance(value, Player) and not isinstance(value, Agent):
        return value
    if isinstance(value, Agent) or callable(value):
        from trinity_env.agents.policies import AgentPlayer, policy_as_agent

        return AgentPlayer(policy_as_agent(value))
    raise ArgumentError(
        f"an agent is given as a spec ('mcts:400'), an AgentSpec, an Agent or a policy function, got {short(value)}"
    )


def make(spec: object) -> Agent:
    """The agent a spec names (a string, or an ``AgentSpec``): ``AgentSpec.parse(spec).build()``;
    ``AgentSpecError`` says what is wrong with a bad one. The agent's ``name`` is the spec's text."""
    return AgentSpec.parse(spec).build()


def built(opponent: object) -> object:
    """``opponent`` with an agent spec (``"greedy"``, ``"mcts:400"``, an ``AgentSpec``) built; anything else as given.

    ``"random"`` stays a string: the envs play it themselves (the vector env with a batched kernel).
    The one place where an env's ``opponent`` argument turns from a spec into an agent."""
    if isinstance(opponent, AgentSpec) or (isinstance(opponent, str) and opponent != "random"):
        return make(opponent)
    return opponent


def recorded(agent: object, build: str) -> AgentSpec:
    """The self-play agent of a build whose files name their agent by its spec and the sha256 of the files it
    reads (``trinity accuracy build``, ``trinity puzzles build``, ``trinity dataset build``): an ``AgentSpec``, or
    spec text parsed here, once; any agent but outside code, which such a name cannot pin down, so these builds
    take no ``--allow-code``. ``build`` names the build in the one-line refusal."""
    spec = AgentSpec.parse(agent) if not isinstance(agent, str) or not agent.strip().startswith(CODE_PREFIX) else None
    if spec is None or spec.name == CODE_PREFIX.rstrip(":"):
        text = agent.text if isinstance(agent, AgentSpec) else str(agent).strip()
        raise AgentSpecError(
            f"{build} takes no outside code ({short(text)}): its files name their self-play agent by its "
            "spec and the sha256 of the files it reads, which cannot pin down code; export the policy to ONNX "
            "(onnx:PATH) or give a checkpoint"
        )
    return spec

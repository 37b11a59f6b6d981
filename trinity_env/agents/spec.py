"""``AgentSpec``: an agent spec parsed once, where text enters, and passed down as a value.

``AgentSpec.parse("mcts:400,seed=3")`` checks the whole spec — its grammar, its name, every
argument against its bound, and, for a spec that names a file, that the file is there and is a
regular file or folder — without building the agent: no search tree is allocated and no
checkpoint is read. The value is frozen, hashable and picklable (a worker process rebuilds the
agent from it), ``str(spec)`` gives the text back, ``spec.label`` is what tables print,
``spec.families`` the numba kernel families the agent runs on (``trinity prepare``), and
``spec.build()`` makes the agent, each call a fresh one.

The grammar is ``trinity_env.agents.registry``'s (its module docstring): ``name`` or
``name:arg,key=value,...``, an argument in double quotes where it holds a comma (``onnx:"v1,final.onnx"``); a
built-in name always means the built-in agent; a path needs a separator, a ``.pt``/``.zip`` ending or the ``file:``
prefix. ``make(text)`` is ``AgentSpec.parse(text).build()``; ``AgentSpec.of(name, path, key=value)`` builds a spec
from values, so code never pastes a path into spec text.

Everything the evaluation tools take is a ``Player`` (``label``, ``families``, ``build()``):
an ``AgentSpec``, or a value that wraps a policy that no text names (``player``).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

import trinity_env.agents.registry as registry
from trinity_env.agents.baselines import check_seed
from trinity_env.agents.checkpoint import CheckpointError
from trinity_env.agents.ladder import LEVEL, level_spec
from trinity_env.core import ArgumentError
from trinity_env.core.files import short
from trinity_env.spec.agent import Agent

MAX_SPEC_CHARACTERS = 1000
"""The longest spec text: a path and a few arguments fit many times over."""
CODE_PREFIX = "py:"
"""``py:package.module:factory`` names outside code: a factory returning an ``Agent`` or a policy function. It
runs when built, so ``parse`` refuses it unless ``allow_code`` (the command line's ``--allow-code``)."""
CODE_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


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
    if name in ("az", registry.AZ_STANDARD):
        return ("tactical features", "AlphaZero search")
    return ()


def _bind(name: str, args: tuple[str, ...], keywords: dict[str, str]) -> dict[str, str]:
    """The spec's arguments bound to its factory's parameters (``registry.AGENTS``), as a call would bind them:
    ``TypeError`` for one too many or an unknown keyword. Nothing is called."""
    factory = registry.AGENTS[name] if name in registry.AGENTS else registry.shipped_factory(name)
    try:
        bound = inspect.signature(factory).bind(*args, **keywords)
    except TypeError as err:
        raise TypeError(f"{name} {err}") from None
    arguments = dict(bound.arguments)
    arguments.update(arguments.pop("given", None) or {})
    arguments.update(arguments.pop("kw", None) or {})
    return arguments


def _check(name: str, args: tuple[str, ...], keywords: dict[str, str]) -> Path | None:
    """Every argument of the spec against its bound, as its factory would check it, building nothing; the
    checkpoint path of an ``az`` spec."""
    arguments = _bind(name, args, keywords)
    if name == "random":
        if arguments.get("seed") is not None:
            check_seed("random", registry.spec_int("seed", arguments["seed"]))
    elif name == "mcts":
        from trinity_env.agents.mcts import MCTSAgent

        MCTSAgent.check_arguments(**registry.spec_arguments("mcts", arguments, registry.MCTS_ARGUMENTS))
    elif name in ("az", registry.AZ_STANDARD):
        path = arguments.pop("path", None)
        if name == "az" and path is None:
            raise ValueError("az needs a checkpoint or run folder: az:PATH_OR_RUN,sims=N,solver=K")
        try:
            from trinity_env.agents.az import AZAgent
        except ImportError:
            raise registry.AgentSpecError("az agents need torch: install the train extra") from None
        AZAgent.check_arguments(**registry.spec_arguments("az", arguments, registry.AZ_ARGUMENTS))
        return None if path is None else Path(path)
    elif name == registry.STATE_DICT:
        path = arguments.pop("path", None)
        if path is None:
            raise ValueError(f"state_dict needs a file: {registry.STATE_DICT}:PATH[,trainer=ppo|az][,sims=N]")
        registry.state_dict_arguments(arguments)
        return Path(path)
    elif name == LEVEL:
        level_spec(arguments.get("level"))  # 1 ... 8, else one line listing the levels
    elif name == "onnx":
        if arguments.get("path") is None:
            raise ValueError("onnx needs a model file: onnx:PATH[,threads=N]")
        if arguments.get("threads") is not None:
            from trinity_env.agents.onnx_policy import check_threads  # the limits table's bound, as the agent's

            check_threads(registry.spec_int("threads", arguments["threads"]))
        return Path(arguments["path"])
    elif name in registry.shipped():
        if arguments.get("sample", "none") not in ("none", "all", "draft"):
            raise ValueError(f"sample must be none, all or draft, got {short(arguments['sample'])}")
        if arguments.get("seed") is not None:
            check_seed("policy", registry.spec_int("seed", arguments["seed"]))
    return None


@dataclass(frozen=True)
class AgentSpec:
    """A checked agent spec (see the module): ``text`` as given (stripped), the agent's ``name`` (``"file:"`` for a
    path), its bare ``args`` and its ``keywords`` (``(key, value)`` pairs in the order given), and the ``path`` it
    reads, if any."""

    text: str
    name: str
    args: tuple[str, ...] = ()
    keywords: tuple[tuple[str, str], ...] = ()
    path: str | None = None
    allow_code: bool = False
    """Whether building it may import and run outside code (``py:``): set only by ``parse(..., allow_code=True)``."""
    pinned_sha256: str | None = None
    """The sha256 its files must keep (``pinned``): every build hashes them again once it has read them."""

    @classmethod
    def parse(cls, text: object, *, allow_code: bool = False) -> AgentSpec:
        """``text`` checked and parsed; one ``AgentSpecError`` line if bad (``CheckpointError`` naming a file that
        is not there).
        An ``AgentSpec`` is returned as it is."""
        if isinstance(text, AgentSpec):
            return text
        if not isinstance(text, str) or not text.strip():
            raise registry.AgentSpecError(f"an agent spec is a string like 'greedy' or 'mcts:400', got {short(text)}")
        text = text.strip()
        if len(text) > MAX_SPEC_CHARACTERS:
            raise registry.AgentSpecError(f"an agent spec is at most {MAX_SPEC_CHARACTERS} characters, got {len(text)}")
        if text.startswith(CODE_PREFIX):
            return cls._code(text, allow_code)
        if registry.names_path(text):
            target = registry._path_target(text)  # refuses a NUL, a pipe, a device or a socket without opening it
            if not target.exists():
                raise CheckpointError(f"no checkpoint at {target}")
            return cls(text, registry.FILE_PREFIX, path=str(target))
        name, _, rest = text.partition(":")
        args, keywords = registry._arguments(rest)
        if name not in registry.AGENTS and name not in registry.shipped():
            registry.unknown_name(text)
        try:
            where = _check(name, tuple(args), keywords)
        except (TypeError, ValueError, ArgumentError) as err:
            raise registry.AgentSpecError(f"bad arguments in agent spec {short(text)}: {err}") from None
        path = None
        if isinstance(where, Path):
            registry.refuse_special(where, registry.AgentSpecError)
            one_file = name in ("onnx", registry.STATE_DICT)  # never PATH.pt, never a run folder
            if not where.exists() and (one_file or not Path(f"{where}.pt").exists()):
                raise CheckpointError(f"no checkpoint at {where}")
            if one_file and where.is_dir():
                what = "an ONNX model file" if name == "onnx" else "a state_dict file"
                raise CheckpointError(f"{where} is a folder, not {what}")
            path = str(where)
        elif name in registry.shipped():
            path = str(registry.SHIPPED_DIR / f"{name}.pt")
        return cls(text, name, tuple(args), tuple(keywords.items()), path)

    @classmethod
    def of(cls, name: str, *args: object, allow_code: bool = False, **keywords: object) -> AgentSpec:
        """The spec of agent ``name`` with these arguments given as values, a path among them
        (``AgentSpec.of("onnx", path, threads=2)``, ``AgentSpec.of("file", run_folder)``), never pasted into text:
        ``registry.format_spec`` quotes each where the grammar needs it (a comma in a file name), and the text is
        parsed and checked like any other; its ``path`` is the path given."""
        values = [str(a) for a in args]
        if name == registry.FILE_PREFIX.rstrip(":"):  # file:PATH takes the rest of the text as the path
            if len(values) != 1 or keywords:
                raise registry.AgentSpecError("file: names one path and takes no arguments")
            return cls.parse(registry.FILE_PREFIX + values[0], allow_code=allow_code)
        text = registry.format_spec(name, values, {key: str(value) for key, value in keywords.items()})
        return cls.parse(text, allow_code=allow_code)

    @classmethod
    def _code(cls, text: str, allow_code: bool) -> AgentSpec:
        target = text[len(CODE_PREFIX) :]
        if not CODE_TARGET.fullmatch(target):
            raise registry.AgentSpecError(f"{CODE_PREFIX} needs package.module:factory, got {short(text)}")
        if not allow_code:
            raise registry.AgentSpecError(
                f"{short(text)} imports and runs outside code: allow it with --allow-code "
                "(AgentSpec.parse(..., allow_code=True)), or export the policy to ONNX (onnx:PATH runs no code)"
            )
        return cls(text, CODE_PREFIX.rstrip(":"), (target,), allow_code=True)

    def _build_code(self) -> Agent:
        """``py:package.module:factory``: the module imported, ``factory()`` called; an ``Agent`` or a policy
        function it returns (``policies.policy_as_agent``)."""
        import importlib

        from trinity_env.agents.policies import policy_as_agent

        if not self.allow_code:
            raise registry.AgentSpecError(f"{short(self.text)} runs outside code and was not allowed to")
        module_name, _, factory_name = self.args[0].partition(":")
        _working_directory_on_path()
        try:
            factory = getattr(importlib.import_module(module_name), factory_name)
        except (ImportError, AttributeError) as err:
            where = (
                " (looked in the working directory and on the import path)" if type(err) is ModuleNotFoundError else ""
            )
            raise registry.AgentSpecError(
                f"cannot load {short(self.text)}: {' '.join(str(err).split())}{where}"
            ) from None
        agent = policy_as_agent(factory())
        agent.name = self.text
        return agent

    def __str__(self) -> str:
        return self.text

    @property
    def label(self) -> str:
        """The spec's text: what tables and replays name the agent by."""
        return self.text

    @property
    def families(self) -> tuple[str, ...]:
        """The numba kernel families the agent runs on (``trinity_env.prepare``); the PPO networks need none."""
        if self.name == LEVEL:  # a ladder level runs on its agent's kernels
            return AgentSpec.parse(level_spec(self.args[0])).families
        if self.name == registry.STATE_DICT:  # an AlphaZero network's, unless the spec says PPO's
            return () if ("trainer", "ppo") in self.keywords else _family("az")
        return _family(self.name)

    def build(self) -> Agent:
        """A fresh agent (a checkpoint is read here, and only here; outside code imported and run here). A pinned
        spec's files are hashed again once read: a file replaced since ``pinned`` is one ``CheckpointError`` line,
        never an agent."""
        if self.name == CODE_PREFIX.rstrip(":"):
            return self._build_code()
        agent = registry.build(self)
        if self.pinned_sha256 is not None:
            self.check_pinned()
        return agent

    def sha256(self) -> str | None:
        """A hash of the files the agent reads, ``None`` when it reads none (``registry.spec_sha256``); a pinned
        spec's is the one it was pinned to."""
        return self.pinned_sha256 or registry.spec_sha256(self.text)

    def pinned(self) -> AgentSpec:
        """This spec held to its files' present sha256: each ``build`` (in this process or a worker) hashes them
        again after reading them and refuses a change, so a run that records the hash (``trinity benchmark``'s card,
        a rating's games file) plays only the files it names. The same spec when it reads no file."""
        if self.pinned_sha256 is not None or self.name == CODE_PREFIX.rstrip(":"):
            return self
        sha256 = registry.spec_sha256(self.text)
        return self if sha256 is None else replace(self, pinned_sha256=sha256)

    def check_pinned(self) -> None:
        """``CheckpointError`` in one line when the files no longer have the sha256 the spec was pinned to."""
        found = registry.spec_sha256(self.text)
        if found != self.pinned_sha256:
            raise CheckpointError(
                f"the files of {short(self.text)} changed while they were in use (sha256 {self.pinned_sha256[:12]} "
                f"when the run began, {str(found)[:12]} now): run again with the files left alone"
            )


def _working_directory_on_path() -> None:
    """Make modules in the working directory importable, as ``python -m`` does (``trinity``, a console script, has
    its own folder on the path instead): the directory goes last, so it shadows no installed package. Only a
    ``py:`` spec, allowed to run code, calls this; worker processes start in the same directory and call it too."""
    import os
    import sys

    here = os.path.realpath(os.getcwd())
    if all(os.path.realpath(entry or os.curdir) != here for entry in sys.path):
        sys.path.append(here)


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


def parse_recorded(text: object, build: str) -> AgentSpec:
    """The self-play agent of a build whose files name their agent by its spec and the sha256 of the files it
    reads, and go on from that name (``trinity accuracy build``, ``trinity puzzles build``, ``trinity dataset
    build``): any spec but outside code, which such a name cannot pin down, so these builds take no
    ``--allow-code``. ``build`` names the build in the one-line refusal."""
    if isinstance(text, str) and text.strip().startswith(CODE_PREFIX):
        raise registry.AgentSpecError(
            f"{build} takes no outside code ({short(text.strip())}): its files name their self-play agent by its "
            "spec and the sha256 of the files it reads, which cannot pin down code; export the policy to ONNX "
            "(onnx:PATH) or give a checkpoint"
        )
    return AgentSpec.parse(text)

"""Registration with gymnasium's and PettingZoo's registries, without importing either.

``import trinity_env`` must stay light (the rules core is used where no RL framework is
installed or wanted), yet ``gymnasium.make(ENV_ID)`` and ``pettingzoo.make("aec", ENV_ID)``
must work after it. So each registration runs when its library is imported: at once if
it already is, otherwise from a one-shot import hook that runs it right after the
library's own module has loaded. A PettingZoo without a registry (before 1.27) is
skipped: the env still works through ``trinity_env.env()``.

The entry points gymnasium calls are this module's factories, ``single_agent_env`` and
``vector_env``: the env classes take agents only (the envs and the fast engine import
nothing above them), so an agent spec such as ``opponent="mcts:400"`` becomes an agent
here, at the top, with ``trinity_env.agents.make``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

ENV_ID = "trinity_env/TrinityTowers-v0"


def _single_agent_class() -> type:
    from trinity_env.envs.single_agent import TrinityTowersEnv

    return TrinityTowersEnv


def _vector_class() -> type:
    from trinity_env.fast.vector_env import TrinityTowersVectorEnv

    return TrinityTowersVectorEnv


class _EnvFactory:
    """Builds an env class (imported on first use) with its ``opponent`` spec built into an agent.

    ``metadata`` is the class's, so ``gymnasium.make`` handles render modes as for the class
    itself (``render_mode="human"``, ``"rgb_array_list"``), and ``isinstance(env, factory)``
    asks whether ``env`` is an instance of the class: the factory stands in for it.
    """

    def __init__(self, load: Callable[[], type], doc: str):
        self._load = load
        self.__doc__ = doc

    @property
    def metadata(self) -> dict[str, Any]:
        return self._load().metadata

    def __call__(self, *args: Any, opponent: Any = "random", **kwargs: Any) -> Any:
        from trinity_env.agents.spec import built  # imported on first use: ``import trinity_env`` stays light

        return self._load()(*args, opponent=built(opponent), **kwargs)

    def __instancecheck__(self, instance: object) -> bool:
        return isinstance(instance, self._load())


single_agent_env = _EnvFactory(
    _single_agent_class,
    "``TrinityTowersEnv(..., opponent=...)`` whose ``opponent`` (a keyword) may also be an agent spec "
    "(gymnasium.make's entry point).",
)
vector_env = _EnvFactory(
    _vector_class,
    "``TrinityTowersVectorEnv(num_envs, ..., opponent=...)`` whose ``opponent`` (a keyword) may also be an agent spec "
    "(gymnasium.make_vec's vector entry point).",
)


def _register_gymnasium(gymnasium: ModuleType) -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            ENV_ID,
            entry_point="trinity_env.registration:single_agent_env",
            vector_entry_point="trinity_env.registration:vector_env",
        )


def _register_pettingzoo(pettingzoo: ModuleType) -> None:
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is None or not hasattr(pettingzoo, "register"):
        return  # PettingZoo < 1.27 has no registry; trinity_env.env() still works
    if ENV_ID not in registry:
        pettingzoo.register("aec", ENV_ID, entry_point="trinity_env.envs.aec:env")


_PENDING: dict[str, Callable[[ModuleType], None]] = {}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of a pending module to run its hook."""

    def find_spec(self, name, path, target=None):
        if name not in _PENDING:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _HookedLoader(spec.loader, _PENDING.pop(name))
                return spec
        return None


class _HookedLoader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader, hook: Callable[[ModuleType], None]):
        self._loader, self._hook = loader, hook

    def create_module(self, spec: importlib.machinery.ModuleSpec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._hook(module)

    def __getattr__(self, name: str):
        return getattr(self._loader, name)


_FINDER = _AfterImport()


def _when_imported(name: str, hook: Callable[[ModuleType], None]) -> None:
    module = sys.modules.get(name)
    if module is not None:
        hook(module)
        return
    _PENDING[name] = hook
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def register_envs() -> None:
    """Register the single-agent env with gymnasium and the AEC env with PettingZoo (once each)."""
    _when_imported("gymnasium", _register_gymnasium)
    _when_imported("pettingzoo", _register_pettingzoo)

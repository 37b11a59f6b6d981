"""Registration with gymnasium's and PettingZoo's registries, without importing either.

``import trinity_env`` must stay light (the rules core is used where no RL framework is
installed or wanted), yet ``gymnasium.make(ENV_ID)`` and ``pettingzoo.make("aec", ENV_ID)``
must work after it. So each registration runs when its library is imported: at once if
it already is, otherwise from a one-shot import hook that runs it right after the
library's own module has loaded. A PettingZoo without a registry (before 1.27) is
skipped: the env still works through ``trinity_env.env()``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType

ENV_ID = "trinity_env/TrinityTowers-v0"


def _register_gymnasium(gymnasium: ModuleType) -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            ENV_ID,
            entry_point="trinity_env.envs.single_agent:TrinityTowersEnv",
            vector_entry_point="trinity_env.fast.vector_env:TrinityTowersVectorEnv",
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

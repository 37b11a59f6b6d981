"""The layers hold at import time: core <- envs <- fast <- search <- agents <- evaluation <- training/cli.

Each module is imported in a fresh interpreter and ``sys.modules`` is read afterwards, so
an import hidden anywhere (a package ``__init__``, a re-export, a registry) counts; reading
the source would miss those.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LAYERS = ["core", "envs", "fast", "search", "agents", "evaluation"]
FRAMEWORKS = {"gymnasium", "pettingzoo", "numba", "torch", "ray", "stable_baselines3", "sb3_contrib"}


def _above(layer: str) -> set[str]:
    return {f"trinity_env.{name}" for name in LAYERS[LAYERS.index(layer) + 1 :]} | {"training", "trinity_env.cli"}


CASES = {
    "trinity_env": FRAMEWORKS | _above("core") | {"trinity_env.envs"},
    "trinity_env.core": FRAMEWORKS | _above("core") | {"trinity_env.envs"},
    "trinity_env.envs": {"numba", "torch", "ray"} | _above("envs"),
    "trinity_env.envs.single_agent": {"numba", "torch", "ray"} | _above("envs"),
    "trinity_env.fast": {"torch", "ray"} | _above("fast"),
    "trinity_env.search.solver": {"torch", "ray"} | _above("search"),
    "trinity_env.search.mcts": {"torch", "ray"} | _above("search"),
    "trinity_env.agents": {"torch", "ray"} | _above("agents"),
    "trinity_env.evaluation.arena": {"torch", "ray", "training", "trinity_env.cli"},
}


def _loaded_after(module: str) -> set[str]:
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out))


@pytest.mark.parametrize("module", sorted(CASES))
def test_importing_a_layer_loads_nothing_above_it(module):
    loaded = _loaded_after(module)
    offenders = sorted(name for name in loaded if any(name == f or name.startswith(f + ".") for f in CASES[module]))
    assert not offenders, f"import {module} loaded {offenders}"


def test_the_layering_test_can_fail():
    """The check sees a framework loaded indirectly, through another package's import."""
    loaded = _loaded_after("trinity_env.fast")
    assert "numba" in loaded and "gymnasium" in loaded


@pytest.mark.skipif(not hasattr(__import__("pettingzoo"), "aec_registry"), reason="PettingZoo < 1.27 has no registry")
def test_importing_the_package_still_registers_the_envs():
    code = (
        "import trinity_env, gymnasium, pettingzoo; "
        "env = gymnasium.make(trinity_env.ENV_ID); env.reset(seed=0); "
        "aec = pettingzoo.make('aec', trinity_env.ENV_ID); aec.reset(seed=0); print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr

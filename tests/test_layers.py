"""The layers hold: core <- spec <- envs <- fast <- search <- agents <- evaluation <- the top
(the package root, ``registration``, the CLI, ``play``, ``testing``, ``web``, ``integrations``; ``training/``),
and ``benchmarks/`` and ``scripts/`` above them all.

Two checks. At import time: each module is imported in a fresh interpreter and
``sys.modules`` is read afterwards, so an import hidden anywhere (a package ``__init__``, a
re-export, a registry) counts. In the source, over every Python folder (``trinity_env``,
``training``, ``benchmarks``, ``scripts``): every import statement of every module, lazy
ones inside functions included, which an import-time check never runs, must point down or
sideways (within the package by ``SOURCE_LAYERS``, within ``training`` by ``TRAINING_LAYERS``,
between folders by ``FOLDERS``), and the module graph they make must have no cycle.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

LAYERS = ["core", "spec", "envs", "fast", "search", "agents", "evaluation"]
FRAMEWORKS = {"gymnasium", "pettingzoo", "numba", "torch", "ray", "stable_baselines3", "sb3_contrib"}


def _above(layer: str) -> set[str]:
    return {f"trinity_env.{name}" for name in LAYERS[LAYERS.index(layer) + 1 :]} | {"training", "trinity_env.cli"}


CASES = {
    "trinity_env": FRAMEWORKS | _above("core") | {"trinity_env.envs"},
    "trinity_env.core": FRAMEWORKS | _above("core") | {"trinity_env.envs"},
    "trinity_env.spec": FRAMEWORKS | _above("spec"),
    "trinity_env.envs": {"numba", "torch", "ray"} | _above("envs"),
    "trinity_env.envs.single_agent": {"numba", "torch", "ray"} | _above("envs"),
    "trinity_env.fast": {"torch", "ray", "pettingzoo", "trinity_env.envs"} | _above("fast"),  # spec, not envs
    "trinity_env.search.solver": {"torch", "ray"} | _above("search"),
    "trinity_env.search.mcts": {"torch", "ray"} | _above("search"),
    "trinity_env.agents": {"torch", "ray"} | _above("agents"),
    "trinity_env.agents.networks": {"torch", "ray"} | _above("agents"),  # its modules are imported by name
    "trinity_env.agents.loaders": {"torch", "ray", "onnx", "onnxruntime"} | _above("agents"),
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


# ---------------------------------------------------------------- every import, read from the source

ROOT = Path(__file__).resolve().parents[1]
SOURCE_LAYERS = ["core", "spec", "envs", "fast", "search", "agents", "evaluation", "top"]
"""The package's floors, bottom to top. ``top`` is everything else: the package root, ``registration`` (the factories
that gymnasium and PettingZoo call), the CLI, ``play``, ``testing``, ``web`` and ``integrations``."""

TRAINING_LAYERS = {
    "parts": ("__init__", "config", "az_config", "env_state", "replay_buffer", "labelling"),
    "run": ("run_folder", "evaluation", "report", "session", "skeleton"),
    "steps": ("az_selfplay", "az_learner"),
    "trainers": ("fast_ppo", "selfplay_ppo", "rllib_selfplay", "pretrain", "alphazero", "alphazero_ray"),
}
"""``training/``'s floors, bottom to top, every module of it named once: the configs and the arrays they size
(the replay buffer, the labelling workers, the env's saved state), the run plumbing (run folder, evaluation, report,
command line, skeleton), AlphaZero's self-play and learner, the trainers. A module not named here stands on the top
floor, with the trainers: a lower floor that imports it fails the check until it is placed below."""

FOLDERS = {
    "trinity_env": {"trinity_env"},
    "training": {"training", "trinity_env"},
    "benchmarks": {"benchmarks", "training", "trinity_env"},
    "scripts": {"scripts", "training", "trinity_env"},
}
"""Each folder of Python and the folders it may import: the package itself only (the command line reaches
``training`` through ``importlib``, where ``trinity train`` needs it); ``training`` the package; ``benchmarks`` and
``scripts`` the package and ``training``, never each other."""


def _modules() -> dict[str, Path]:
    """Every module of the folders by dotted name (a package by its ``__init__``)."""
    found = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = (folder, *path.relative_to(ROOT / folder).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> str:
    """A package module's floor (``SOURCE_LAYERS``), a training module's (``TRAINING_LAYERS``); else its folder."""
    folder, _, rest = module.partition(".")
    if folder == "trinity_env":
        part = rest.partition(".")[0]
        return part if part in SOURCE_LAYERS else "top"
    if folder == "training":
        return next((name for name, members in TRAINING_LAYERS.items() if (rest or "__init__") in members), "trainers")
    return folder


def _floor(module: str) -> int:
    """The index of ``module``'s floor within its folder (benchmarks and scripts: one floor each)."""
    folder = module.partition(".")[0]
    floors = {"trinity_env": SOURCE_LAYERS, "training": list(TRAINING_LAYERS)}.get(folder, [folder])
    return floors.index(_layer(module))


def _known(name: str) -> str | None:
    """``name`` or the nearest module above it (``a.b.func`` -> ``a.b``); ``None`` outside the folders."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> list[tuple[str, int]]:
    """The modules of the folders that ``module`` imports and the line of each import.

    Every import statement counts, at module level or inside a function or class (a lazy
    import is a dependency all the same, and a cycle through one is a cycle: both modules must
    load first), except those under ``if TYPE_CHECKING:``, which never run (they name a type
    for an annotation). ``importlib.import_module`` is not an import statement and is not seen.
    ``from p import name`` imports ``p.name`` when that is a module, else ``p``; relative imports
    are resolved. A parent package is not an import of its children.
    """
    path = MODULES[module]
    return _imports_in(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")


def _imports_in(source: str, module: str, is_package: bool = False) -> list[tuple[str, int]]:
    """``_imports`` of ``module`` with this source."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            known = _known(target) if target.split(".")[0] in FOLDERS else None
            if known is not None and known != module:
                found.append((known, node.lineno))
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_source_reader_sees_every_kind_of_import():
    """Lazy imports inside functions, relative ones and ``from package import submodule``."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import numpy\n"
        "from . import kernels\n"
        "from ..core.state import GameState\n"
        "if TYPE_CHECKING:\n"
        "    from trinity_env.evaluation.match import play_game\n"
        "def f():\n"
        "    import trinity_env.agents.registry\n"
        "    from trinity_env.envs import aec, raw_env\n"
    )
    found = _imports_in(source, "trinity_env.fast.games")
    assert found == [
        ("trinity_env.fast.kernels", 3),
        ("trinity_env.core.state", 4),
        ("trinity_env.agents.registry", 8),
        ("trinity_env.envs.aec", 9),
        ("trinity_env.envs", 9),
    ]
    assert "trinity_env.evaluation.arena" in {target for target, _ in GRAPH["trinity_env.cli.arena"]}  # in a function
    assert _layer("trinity_env.registration") == "top" and _layer("trinity_env.core.state") == "core"
    assert _imports_in("from .session import trainer_parser\n", "training.fast_ppo") == [("training.session", 1)]
    assert _imports_in("def f():\n    from training import az_config\n", "benchmarks.az") == [("training.az_config", 2)]
    assert {"training.alphazero", "benchmarks.networks", "scripts.make_az_standard"} <= set(GRAPH)


def _upward(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Each import in ``graph`` that points up: into a folder its folder may not import (``FOLDERS``), or within
    the package or ``training`` to a floor above its own."""
    found = []
    for module, edges in graph.items():
        folder = module.partition(".")[0]
        for target, line in edges:
            into = target.partition(".")[0]
            if into not in FOLDERS[folder] or (into == folder and _floor(target) > _floor(module)):
                found.append(f"{module} ({_layer(module)}) imports {target} ({_layer(target)}) at line {line}")
    return found


def test_no_module_imports_upward_a_layer_above_its_own():
    upward = _upward(GRAPH)
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_layer_check_can_fail():
    """Up a floor of the package, of ``training``, into ``training`` from the package, between benchmarks and
    scripts: each is seen; down and sideways are not."""
    graph = {
        "trinity_env.core.state": [("trinity_env.agents.registry", 1)],
        "training.config": [("training.fast_ppo", 2)],
        "trinity_env.cli.train": [("training.fast_ppo", 3)],
        "benchmarks.az": [("scripts.make_az_standard", 4), ("training.az_config", 5), ("benchmarks.engine", 6)],
        "training.alphazero_ray": [("training.alphazero", 7), ("trinity_env.arguments", 8)],
    }
    assert [line.rpartition(" ")[2] for line in _upward(graph)] == ["1", "2", "3", "4"]


def test_the_training_floors_name_its_modules():
    """Each name in ``TRAINING_LAYERS`` is a module of ``training/``, on one floor only."""
    names = [name for members in TRAINING_LAYERS.values() for name in members]
    found = {module.partition(".")[2] or "__init__" for module in MODULES if module.partition(".")[0] == "training"}
    assert sorted(set(names) - found) == [] and len(names) == len(set(names))
    assert _layer("training.az_config") == "parts" and _layer("training.a_new_trainer") == "trainers"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The shortest cycle through each module that is on one (Tarjan's components, then a BFS), each cycle once."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles, seen = [], set()
    for component in components:
        for start in sorted(component):  # the shortest cycle through each member, each cycle once
            parents, queue = {start: None}, [start]
            while queue:
                node = queue.pop(0)
                if node != start and start in graph[node]:  # no self-loops: an import of itself is dropped
                    path = [node]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    if frozenset(path) not in seen:
                        seen.add(frozenset(path))
                        cycles.append([*reversed(path), start])
                    break
                for nxt in sorted(graph[node] & component):
                    if nxt not in parents:
                        parents[nxt] = node
                        queue.append(nxt)
    return cycles


def test_the_module_imports_have_no_cycle():
    """Over the package, ``training``, ``benchmarks`` and ``scripts`` together, lazy imports included."""
    graph = {module: {target for target, _ in edges} for module, edges in GRAPH.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_the_cycle_finder_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []

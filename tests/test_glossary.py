"""docs/glossary.md, one name per idea (issue 40): every place its table says a name lives exists in code, and
the names it retires appear nowhere in the code or the shipped configs.

(Beside tests/test_docs.py rather than in it: that file is past the house's ~500 lines.)"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"
CODE = ("trinity_env", "training", "configs")
TEXT_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".js", ".html", ".md", ".txt"}

RETIRED = {
    "the draft mode 'random' (RULES.md's spelling, read as 'dealt'; the project writes 'dealt')": re.compile(
        r"""\bdraft["']?\s*[:=]\s*["']?random\b"""
    ),
    "the bare training key eval_every (now eval_every_steps, _games or _iterations)": re.compile(
        r"""(?m)^\s*eval_every\s*:|["']eval_every["']\s*:\s*\d|\beval_every\s*="""
    ),
    "the bare training key snapshot_every (now snapshot_every_steps or _iterations)": re.compile(
        r"""(?m)^\s*snapshot_every\s*:|["']snapshot_every["']\s*:\s*\d|\bsnapshot_every\s*=|\.snapshot_every\b"""
    ),
    "the az spec's search= (now mode=)": re.compile(r"""\baz(?:-standard)?:[^\s"'`]*[:,]search="""),
    "AlphaZero's bare training key checkpoint_every (now checkpoint_every_iterations)": re.compile(
        r"""(?m)^\s*checkpoint_every\s*:|["']checkpoint_every["']\s*:\s*\d|\bcheckpoint_every\s*=|\.checkpoint_every\b"""
    ),
    "AlphaZero's training key search (now mode, as the az spec's)": re.compile(
        r"""(?m)^\s*search\s*:\s*(?:gumbel|puct)\b|["']search["']\s*:\s*["'](?:gumbel|puct)|\bconfig\.search\b"""
    ),
    "RLlib's max_league (now pool_size, as PPO's)": re.compile(
        r"""(?m)^\s*max_league\s*:|["']max_league["']\s*:\s*\d|\bmax_league\s*=|\.max_league\b"""
    ),
}
"""Retired spellings, searched for in trinity_env/, training/ and configs/ (where a retired name is only named, in
the table that refuses it with its new name, it is a key whose value is the new name, not a number)."""


RETIRED_DEFINITIONS = {
    "as_agent": {"trinity_env/agents/__init__.py"},
    "one_line": {"trinity_env/core/files.py"},
    "describe": set(),
    "check_count": {"trinity_env/agents/baselines.py"},
    "int_field": {"trinity_env/agents/loaders/network_checkpoint.py"},
    "game_seed": {"trinity_env/evaluation/arena.py"},
}
"""Function names that had several meanings (issue 53) and the one module each may still define them in (none: the
name is retired): the others were renamed by what they do (``env_opponent``, ``policy_as_agent``, ``printable_line``,
``describe_error``...: docs/glossary.md) or merged."""
DEFINITION_FOLDERS = ("trinity_env", "training", "benchmarks", "scripts")


def _rows() -> list[list[str]]:
    lines = [line for line in GLOSSARY.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    assert lines[0].startswith("| name | what it means | where it lives | names it replaces |"), lines[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def _resolve(dotted: str) -> object:
    """The object a dotted path names: the longest importable module, then attributes; a dataclass field
    without a default (not a class attribute) counts as there."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if hasattr(obj, name):
                obj = getattr(obj, name)
            elif dataclasses.is_dataclass(obj) and name in {f.name for f in dataclasses.fields(obj)}:
                obj = name
            else:
                raise AttributeError(f"{dotted}: {'.'.join(parts[:cut])} has no {name!r}")
        return obj
    raise ModuleNotFoundError(f"{dotted}: no module of it imports")


def _places(cell: str) -> list[str]:
    return re.findall(r"`((?:trinity_env|training)(?:\.\w+)+)`", cell)


def test_every_place_the_glossary_names_exists_in_code():
    rows = _rows()
    assert len(rows) >= 20
    for name, meaning, where, _ in rows:
        assert meaning and _places(where), f"glossary row {name!r} says what it means and where it lives"
        for dotted in _places(where):
            _resolve(dotted)  # raises naming the missing module or attribute


def test_the_glossary_names_are_the_ones_the_code_uses():
    from trinity_env.agents.mcts import MCTSAgent
    from trinity_env.agents.spec_arguments import AZ_ARGUMENTS
    from trinity_env.evaluation.arena import ARENA_DEFAULTS
    from trinity_env.spec.config import DRAFT_MODES

    names = {row[0] for row in _rows()}
    modes = {m.group(1) for name in names if (m := re.fullmatch(r"`(\w+)` \(draft mode\)", name))}
    assert modes == set(DRAFT_MODES) == {"pick", "dealt", "fixed"}
    assert ARENA_DEFAULTS["draft"] == "dealt"
    assert AZ_ARGUMENTS["sims"][0] == "simulations"  # the az spec's sims sets simulations: both listed as they are
    assert "simulations" in inspect.signature(MCTSAgent.check_arguments).parameters
    retired_names = ("random", "eval_every", "Replay", "snapshot_every", "max_league", "describe", "as_agent")
    for retired in (*retired_names, "checkpoint_every"):
        assert any(f"`{retired}`" in row[3] for row in _rows()), f"the glossary says what replaced {retired!r}"


def _code_files() -> list[Path]:
    return [
        path
        for top in CODE
        for path in sorted((ROOT / top).rglob("*"))
        if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts
    ]


@pytest.mark.parametrize("what", sorted(RETIRED))
def test_retired_names_are_gone_from_the_code_and_configs(what):
    pattern = RETIRED[what]
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _code_files()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, f"{what} is still written in: {found}"


def _definitions(name: str) -> set[str]:
    pattern = re.compile(rf"(?m)^\s*(?:async\s+)?def {name}\(")
    return {
        str(path.relative_to(ROOT))
        for folder in DEFINITION_FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    }


@pytest.mark.parametrize("name", sorted(RETIRED_DEFINITIONS))
def test_a_name_that_had_several_meanings_is_defined_in_one_place_at_most(name):
    assert _definitions(name) <= RETIRED_DEFINITIONS[name], f"{name} is defined again: one name, one meaning"


def test_the_definition_scan_finds_what_it_is_for():
    assert _definitions("env_opponent") == {"trinity_env/spec/agent.py"}
    assert _definitions("describe_value") == {"trinity_env/core/checks.py"}


def test_the_training_package_has_no_class_named_replay():
    """training's buffer is ReplayBuffer: Replay is core's recorded game, and only that."""
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "training").rglob("*.py"))
        if re.search(r"(?m)^\s*class Replay\b\s*[(:]", path.read_text(encoding="utf-8"))
    ]
    assert not found


@pytest.mark.parametrize(
    "text",
    [
        "env: {draft: random}",
        'config = make_config(draft="random")',
        '{"draft": "random"}',
        "draft: random   # dealt",
        "eval_every: 5000",
        '"eval_every": 5000,',
        "TrainConfig(eval_every=5)",
        "snapshot_every: 200000",
        '"snapshot_every": 50,',
        "if iteration % config.snapshot_every == 0:",
        "max_league: 8",
        "versions=min(versions, config.max_league),",
        'make("az-standard:sims=64,search=puct")',
        "az:runs/x,search=gumbel",
    ],
)
def test_the_retired_name_patterns_find_what_they_are_for(text):
    assert any(pattern.search(text) for pattern in RETIRED.values())


@pytest.mark.parametrize(
    "text",
    [
        "env: {draft: dealt}",
        "deck: random",
        'first_player: "random"',
        'retired = {"eval_every": "eval_every_steps"}',
        "eval_every_games: 5000",
        'SPEC_DRAFT_SPELLINGS = {"random": "dealt"}',
        "snapshot_every_steps: 200000",
        'retired = {"snapshot_every": "snapshot_every_iterations", "max_league": "pool_size"}',
        "pool_size: 8",
        "az-standard:sims=64,mode=puct",
        "mcts:200,draft=search",
    ],
)
def test_the_retired_name_patterns_leave_the_names_in_use_alone(text):
    assert not any(pattern.search(text) for pattern in RETIRED.values())

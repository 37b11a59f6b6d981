"""Speed measurements of the engine, the environments, search and training.

Each module is a script, run from the repository root as ``python -m benchmarks.<name>`` (``--help`` says what it
measures): the engine and envs (``engine``, ``env``, ``fast``, ``first_run``, the JAX engine's ``jax``), search and
the solver (``mcts``, ``solver``, ``solver_opening``, ``endgames``), networks and training (``az``, ``az_ray``,
``networks``, ``trainers``, ``rllib``), the value head's data (``value_scaling``, ``value_sources``, ``dataset``,
``dataset_deep``), evaluation (``accuracy``, ``rating_coverage``, ``rating_interval``) and the JAX trainer's
self-play (``jax_selfplay``).
"""

import json
import os
from collections.abc import Iterable
from pathlib import Path


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, printed beside every timing: a busy machine slows figures unevenly."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(result: dict[str, object], as_json: bool, lines: Iterable[str], load_before: str) -> None:
    """Print a benchmark's figures, with the load averages from before its timings (``load_before``) and now, both
    also kept in ``result``: ``result`` as one JSON object with ``--json`` (for scripts), else ``lines`` and the load
    averages, for a person (``lines`` is read only then)."""
    result["load_average_before"], result["load_average_after"] = load_before, load_average()
    if as_json:
        print(json.dumps(result))
        return
    for line in lines:
        print(line)
    print(f"  load average before: {load_before}; after: {result['load_average_after']} ({os.cpu_count()} cores)")


def write_result(path: Path | None, result: dict[str, object]) -> None:
    """``result`` as a JSON file at ``path`` (its folder made), through the write door; nothing where ``path`` is
    ``None``."""
    if path is None:
        return
    from trinity_env.core.writes import write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(result, indent=1) + "\n")
    print(f"wrote {path}")

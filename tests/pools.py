"""Small reference pool files for tests: cheap members, on a draft mode's rules, in the shipped files' format."""

from __future__ import annotations

import json
from pathlib import Path

from trinity_env.evaluation.anchored import POOL_VERSION, ReferencePool


def write_pool(path: Path, draft: str, agents=("random", "greedy"), elo=(0.0, 532.434)) -> ReferencePool:
    """A pool file of ``agents`` rated ``elo`` (test figures; by default the dealt pool's ratings of these two) on
    ``draft``'s rules, as ``scripts/make_reference_pool.py`` would write one; the pool read back."""
    document = {
        "version": POOL_VERSION,
        "agents": list(agents),
        "elo": list(elo),
        "elo_95": [[x - 30.0, x + 30.0] for x in elo],
        "anchor": "random",
        "games_per_pair": 4,
        "seed": 7,
        "config": {"draft": draft},
        "command": f"python -m scripts.make_reference_pool --draft {draft}",
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    return ReferencePool.load(path)


def small_pools(folder: Path) -> dict[str, Path]:
    """Two small pools by draft mode, named as the shipped ones (``anchored.POOL_FILES``' shape)."""
    files = {"dealt": folder / "reference_pool.json", "pick": folder / "reference_pool_draft.json"}
    for draft, path in files.items():
        write_pool(path, draft)
    return files

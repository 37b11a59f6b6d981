"""What a refactor must not change, as digests: seeded arena results, solver values and node counts, trained weights.

Run it on two commits and compare the JSON (issue 53's "seeded arena JSON, solver node counts and PPO/AlphaZero
weights are unchanged by the change"):

    git worktree add /tmp/base BASE
    (cd /tmp/base && "$OLDPWD/.venv/bin/python" "$OLDPWD/scripts/fingerprint.py" --json /tmp/base.json)
    .venv/bin/python scripts/fingerprint.py --json /tmp/head.json && diff /tmp/base.json /tmp/head.json

Run from the repository root it measures that checkout's code (the root comes first on ``sys.path``); it talks to
the code through the command line and the oldest public API (``GameState``, ``Solver``), so it runs on commits from
before the typed recut. About three minutes on 2 cores. It writes only in a temporary folder (and ``--json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path.cwd()
ARENAS = {  # name: the arena's arguments; agents that use every part of the registry and the search
    "dealt": ["--agents", "random", "greedy", "lookahead", "mcts:25", "az-standard:sims=16", "--games", "6"],
    "draft": [
        "--agents",
        "greedy",
        "mcts:25,draft=search",
        "az-standard:sims=16",
        "--games",
        "4",
        "--config",
        "standard",
    ],
}


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trinity(*args: str) -> None:
    """The checkout's own command line, one process at a time (seeded results must not depend on the workers)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
    subprocess.run(
        [sys.executable, "-m", "trinity_env.cli", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
    )


def arenas(work: Path) -> dict[str, dict[str, str]]:
    out = {}
    for name, args in ARENAS.items():
        folder = work / f"arena-{name}"
        trinity("arena", *args, "--seed", "5", "--workers", "1", "--quiet", "--out", str(folder))
        out[name] = {file: file_digest(folder / file) for file in ("arena.json", "arena.csv")}
    return out


def empty_count(state) -> int:
    """``GameState.empty_tiles``: a method before the typed recut, a property after it."""
    tiles = state.empty_tiles
    return len(tiles() if callable(tiles) else tiles)


def solver_positions(count: int = 12) -> dict[str, object]:
    """Values, best moves and node counts of the exact solver on seeded positions with 8 to 11 empty tiles."""
    sys.path.insert(0, str(ROOT))
    from trinity_env.core import GameState, random_hand, standard_deck
    from trinity_env.search.solver import Solver

    rows = []
    rng = random.Random(53)
    while len(rows) < count:
        deck = standard_deck()
        hands = [random_hand(deck, 3, rng) for _ in range(2)]
        state = GameState.new_game([deck, deck], max_a_cards=3, first_player=rng.randint(0, 1), hands=hands)
        target = 8 + len(rows) % 4
        while not state.is_over and empty_count(state) > target:
            state = state.apply(rng.choice(state.legal_actions()))
        if state.is_over:
            continue
        solution = Solver().solve(state)  # a fresh table each: the nodes of this position alone
        moves = [f"{move[0]}@{move[1]}" if isinstance(move, tuple) else str(move) for move in solution.best_moves]
        rows.append(
            {"empty": empty_count(state), "value": solution.value, "nodes": solution.nodes, "best_moves": moves}
        )
    return {"positions": rows, "nodes": sum(row["nodes"] for row in rows)}


def weights_digest(checkpoint: Path) -> str:
    """Every tensor of a checkpoint's network, in name order: equal digests are equal weights, bit for bit."""
    import torch

    weights = torch.load(checkpoint, map_location="cpu", weights_only=True)["model"]  # both trainers' one format
    if not weights:
        raise SystemExit(f"{checkpoint}: no weights in its 'model' field")
    digest = hashlib.sha256()
    for name in sorted(weights):
        digest.update(name.encode())
        digest.update(weights[name].detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


def trained(work: Path) -> dict[str, str]:
    """A few seeded updates of the PPO trainer (quick) and two iterations of AlphaZero (az-quick)."""
    out = {}
    for config, budget in (("quick", ["--total-steps", "24576"]), ("az-quick", ["--total-games", "512"])):
        run = work / config
        trinity("train", config, "--run", str(run), *budget)
        out[config] = weights_digest(run / "latest.pt")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the digests here")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as work:
        result = {"arena": arenas(Path(work)), "solver": solver_positions(), "weights": trained(Path(work))}
    text = json.dumps(result, indent=1)
    print(f"# {commit.strip()}\n{text}")
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()

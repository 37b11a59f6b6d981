"""Write trinity_env/evaluation/data/reference_pool.json: the reference pool's ratings, fitted once and frozen.

Run from the repository root (the second pool, on drafted hands, with ``--draft pick``):

    nice -n 5 python -m scripts.make_reference_pool --games 400 --seed 41 --workers 1
    nice -n 5 python -m scripts.make_reference_pool --games 400 --seed 43 --workers 1 --draft pick

The pool is the difficulty ladder's eight agents (``trinity_env.agents.ladder.LADDER``: random ... mcts:6400). They
play a round robin (``trinity_env.evaluation.arena.round_robin``: seats swapped, hands dealt at random, game ``k``
of agents ``i`` < ``j`` seeded by ``game_seed(seed, i, j, k)``; with ``--draft pick`` each game starts with the
secret draft, every agent drafting as its spec says), and the Bradley-Terry fit of all its games is
anchored so that ``random`` (``level:1``) is rated 0; the 95% intervals bootstrap the games, each fit anchored the
same way. The file keeps every pair's points and games, so the fit can be checked without playing again
(tests/test_anchored_ratings.py does), and the command that made it. ``trinity_env.evaluation.anchored`` reads it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from trinity_env.agents.ladder import LADDER
from trinity_env.evaluation.anchored import POOL_VERSION
from trinity_env.evaluation.arena import ARENA_DEFAULTS, round_robin
from trinity_env.evaluation.ratings import bootstrap_elo, fit_elo
from trinity_env.prepare import families_for, warm

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "trinity_env" / "evaluation" / "data"
OUTS = {"dealt": DATA / "reference_pool.json", "pick": DATA / "reference_pool_draft.json"}
"""Where each draft mode's pool is written (``anchored.POOL_FILES`` reads them)."""
RULES = {
    "dealt": "dealt hands (draft: dealt), the standard rules and deck",
    "pick": "the secret draft (draft: pick), the standard rules and deck",
}
ANCHOR = "random"
"""The agent rated 0: the weakest possible player, the same whoever else is in the pool."""


def pool_document(
    agents: list[str],
    score: np.ndarray,
    games: np.ndarray,
    games_per_pair: int,
    seed: int,
    command: str,
    draft: str = "dealt",
) -> dict:
    """The pool file's contents: ratings anchored at ``ANCHOR``, bootstrap intervals, the games behind them."""
    anchor = agents.index(ANCHOR)
    elo = fit_elo(score, games, anchor=anchor)
    low, high = bootstrap_elo(score, games, np.random.default_rng(seed), anchor=anchor)
    levels = {spec: f"level:{level}" for level, spec in LADDER.items()}
    return {
        "version": POOL_VERSION,
        "agents": agents,
        "levels": [levels.get(agent) for agent in agents],
        "elo": [round(float(r), 3) for r in elo],
        "elo_95": [[round(float(a), 3), round(float(b), 3)] for a, b in zip(low, high)],
        "anchor": ANCHOR,
        "scale": f"Elo (400 points: 10 to 1 odds), {ANCHOR} (level:1) rated 0; fitted once and frozen",
        "games_per_pair": games_per_pair,
        "seed": seed,
        "config": dict(ARENA_DEFAULTS, draft=draft),
        "rules": RULES[draft],
        "command": command,
        "score": score.tolist(),
        "games": games.astype(int).tolist(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per pair (default 400)")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--draft", choices=sorted(OUTS), default="dealt", help="how hands are made (default dealt)")
    parser.add_argument("--out", type=Path, help="where to write (default: the shipped file of the draft mode)")
    args = parser.parse_args()
    out = args.out or OUTS[args.draft]
    agents = list(LADDER.values())
    command = f"python -m scripts.make_reference_pool --games {args.games} --seed {args.seed} --workers {args.workers}"
    command += "" if args.draft == "dealt" else f" --draft {args.draft}"
    warm(families_for(agents))
    started, cpu = time.time(), time.process_time()
    config = dict(ARENA_DEFAULTS, draft=args.draft)
    result = round_robin(agents, args.games, seed=args.seed, config=config, workers=args.workers, progress=False)
    print(
        f"played {int(result.games.sum() // 2)} games in {time.time() - started:.0f} s "
        f"({time.process_time() - cpu:.0f} s of CPU in this process)"
    )
    print(result.table())
    document = pool_document(agents, result.score, result.games, args.games, args.seed, command, args.draft)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    for agent, elo, (low, high) in zip(agents, document["elo"], document["elo_95"]):
        print(f"{agent:>10}: {elo:+7.1f} [{low:+.1f}, {high:+.1f}]")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

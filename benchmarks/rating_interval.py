"""The rating interval's coverage where the true results are known: results drawn at random against the pools'
members, many seeds, for shapes of results the Elo model does not fit.

    python -m benchmarks.rating_interval                 # seconds; writes docs/benchmark/rating_interval.json

The card's interval (``ratings.ROBUST``) is the likelihood ratio's widened by ``phi``, the variance of the points
the games show over the variance the model predicts: the sandwich (Huber-White) variance of the maximum-likelihood
rating, which is right whatever the shape of the results so long as the games are independent draws. They are: each
game of a rating has its own seed (``arena.game_seed``), which deals its hands and drives every random choice in it.
A deterministic policy against a deterministic member meets few distinct games (with the draft, the seed chooses
only who picks first: two games a seat), and its results against that member are all-or-nothing for each of them,
but which of them a game is, is drawn by its seed: a share of ``k/4`` is a fair draw like any other.

Each scenario below gives the policy a true expected share against every member; a seed draws each member's points
from the binomial of the protocol's games; the rating and both intervals are fitted as the card fits them; the
reference is the mean rating over the seeds (what the protocol estimates). This measures the interval alone, where
``benchmarks/rating_coverage.py`` measures it on real games.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks import write_result
from benchmarks.rating_coverage import TARGET  # the coverage a stated 95% interval must reach (issue 51)
from trinity_env.evaluation.anchored import ReferencePool, pools_for
from trinity_env.evaluation.arena import ARENA_DEFAULTS
from trinity_env.evaluation.ratings import ELO_SCALE, LIKELIHOOD, ROBUST, fit_against_fixed
from trinity_env.scorecard import PROTOCOLS
from trinity_env.spec.config import make_config

ROOT = Path(__file__).resolve().parent.parent
FEW_GAMES_DRAWS = 3
"""How many random "few distinct games" scenarios each pool gets (shares that are multiples of a quarter)."""


def scenarios(pool: ReferencePool, seed: int) -> dict[str, np.ndarray]:
    """The true shares against each member of ``pool``, by name: one the model fits and several it does not."""
    fixed = np.array(pool.elo)
    members = len(fixed)
    found = {
        "the model fits (a +500 policy)": 1 / (1 + np.exp((fixed - 500) / ELO_SCALE)),
        "half the points against every member": np.full(members, 0.5),
        "loses to weak members, beats strong ones": np.resize([0.3, 0.9, 0.2, 0.8], members),
    }
    rng = np.random.default_rng(seed)
    for n in range(FEW_GAMES_DRAWS):  # a deterministic policy against deterministic members: 4 distinct games each
        found[f"four distinct games a member, draw {n + 1}"] = rng.integers(0, 5, size=members) / 4
    return found


def study(pool: ReferencePool, shares: np.ndarray, games: int, seeds: int, seed: int) -> dict:
    """``seeds`` ratings from binomial results at ``shares``, ``games`` against each member: the seed-to-seed sd,
    each interval's mean half width and how often it covers the mean rating."""
    rng = np.random.default_rng(seed)
    fixed, counts = np.array(pool.elo), np.full(len(shares), games)
    fits = {kind: [] for kind in (ROBUST, LIKELIHOOD)}
    for _ in range(seeds):
        score = rng.binomial(games, shares).astype(float)
        for kind, found in fits.items():
            found.append(fit_against_fixed(fixed, score, counts, interval=kind))
    elo = np.array([fit[0] for fit in fits[ROBUST]])
    reference = float(elo.mean())
    row = {"games_per_member": games, "seeds": seeds, "reference": reference, "elo_sd": float(elo.std(ddof=1))}
    for kind, found in fits.items():
        bounds = np.array(found)
        row[f"{kind}_half_width"] = float(np.mean(bounds[:, 2] - bounds[:, 1]) / 2)
        row[f"{kind}_coverage"] = float(np.mean((bounds[:, 1] <= reference) & (reference <= bounds[:, 2])))
    return row


def table(rows: list[dict]) -> str:
    """The study as a markdown table: two text columns, then numbers."""
    columns = ["pool", "true results", "games a member", "seed-to-seed sd"]
    for kind in ("robust", "likelihood ratio"):
        columns += [f"half width ({kind})", f"covered ({kind})"]
    lines = ["| " + " | ".join(columns) + " |", "|---|---|" + "---:|" * (len(columns) - 2)]
    for row in rows:
        cells = [row["pool_name"], row["scenario"], str(row["games_per_member"]), f"{row['elo_sd']:.0f}"]
        for kind in (ROBUST, LIKELIHOOD):
            cells += [f"{row[f'{kind}_half_width']:.0f}", f"{row[f'{kind}_coverage']:.1%}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rating_interval", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=1000, help="simulated ratings a scenario (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="the study's seed (default 0)")
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "benchmark" / "rating_interval.json")
    args = parser.parse_args(argv)
    if args.seeds < 2 or args.seed < 0:
        parser.error("--seeds must be at least 2 and --seed at least 0")
    rows = []
    for pool in pools_for([make_config(ARENA_DEFAULTS), make_config(draft="pick")]):
        for n, (name, shares) in enumerate(scenarios(pool, args.seed).items()):
            for protocol in ("quick", "full"):
                games = PROTOCOLS[protocol].rating_games
                row = study(pool, shares, games, args.seeds, args.seed * 1_000 + n)
                rows.append({"pool_name": pool.name, "scenario": name, "shares": list(shares), **row})
    command = "python -m benchmarks.rating_interval" + (f" --seeds {args.seeds}" if args.seeds != 1000 else "")
    document = {
        "command": command + (f" --seed {args.seed}" if args.seed else ""),
        "target": TARGET,
        "robust_coverage_min": min(row[f"{ROBUST}_coverage"] for row in rows),
        "likelihood_coverage_min": min(row[f"{LIKELIHOOD}_coverage"] for row in rows),
        "rows": rows,
    }
    print(table(rows))
    print(
        f"robust interval: covers at least {document['robust_coverage_min']:.1%} (target {TARGET:.0%}); likelihood "
        f"ratio: at least {document['likelihood_coverage_min']:.1%}"
    )
    write_result(args.json, document)


if __name__ == "__main__":
    main()

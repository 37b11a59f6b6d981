"""How often the benchmark's 95% rating interval covers the rating it estimates: many seeds, quick and full.

    python -m benchmarks.rating_coverage --workers 2                      # minutes on 2 idle cores
    python -m benchmarks.rating_coverage --quick-seeds 200 --full-seeds 40 --members all --policies greedy mcts:25

For each policy and each reference pool (dealt hands; with the draft), the policy is rated against the pool as the
score card rates it (``anchored.rate_against_pool``) at ``--full-seeds`` seeds with the full protocol's games
against each member, and at ``--quick-seeds`` seeds with the quick protocol's (the first games of a full run are the
quick run of its seed, read from its games file, so they are not played twice). The reference is the mean of the
full protocol's ratings over its seeds: what the card estimates, up to the full protocol's own small spread. The
study prints and writes (``--json``, default ``docs/benchmark/rating_coverage.json``, which docs/benchmark.md quotes)
how often each protocol's stated interval covers it, for the card's interval (``ratings.ROBUST``) and for the
likelihood-ratio interval it replaced (``ratings.LIKELIHOOD``), with the ratings' seed-to-seed spread beside the
intervals' mean half width. A full run's coverage is counted against the mean of the other seeds' full ratings.

The default policies are one deterministic (``greedy``: against the draft pool's deterministic members it meets a
handful of distinct games) and one stochastic (``random``); ``--policies`` takes any spec (``lookahead``,
``mcts:25``, ...). The
default members leave out the pool's two strongest (``mcts:1200``, ``mcts:6400``, four fifths of the playing time);
``--members all`` keeps the whole pool. A cut pool plays other games than the whole one (the members are numbered
within it), the same way for every seed, so the study measures the interval on the games it plays.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from trinity_env.core.writes import write_text
from trinity_env.evaluation.anchored import ReferencePool, pools_for, rate_against_pool
from trinity_env.evaluation.arena import ARENA_DEFAULTS, CHUNK
from trinity_env.evaluation.ratings import LIKELIHOOD, ROBUST, fit_against_fixed
from trinity_env.scorecard import PROTOCOLS
from trinity_env.spec.config import make_config

ROOT = Path(__file__).resolve().parent.parent
POLICIES = {"greedy": "deterministic", "lookahead": "deterministic", "random": "stochastic", "mcts:25": "stochastic"}
DEFAULT_POLICIES = ("greedy", "random")
SLOW_MEMBERS = ("mcts:1200", "mcts:6400")
TARGET = 0.90
"""The coverage a stated 95% interval must reach in this study (issue 51)."""


def pools(members: str) -> list[ReferencePool]:
    """The dealt-hands and draft pools, cut to the default members unless ``members`` is ``all``."""
    found = pools_for([make_config(ARENA_DEFAULTS), make_config(draft="pick")])
    if members == "all":
        return found
    return [pool.only([a for a in pool.labels if a not in SLOW_MEMBERS]) for pool in found]


def quick_score(games_file: Path, members: int, quick_games: int) -> tuple[np.ndarray, np.ndarray]:
    """The points and games against each member of a full run's first ``quick_games`` games (its games file's
    chunks that start before them: the quick run of the same seed)."""
    score, games = np.zeros(members), np.zeros(members)
    for line in games_file.read_text(encoding="utf-8").splitlines()[1:]:
        record = json.loads(line)
        if record["first_game"] < quick_games:
            score[record["member"]] += record["points"]
            games[record["member"]] += record["games"]
    return score, games


def intervals(pool: ReferencePool, score: np.ndarray, games: np.ndarray) -> dict[str, list[float]]:
    """The rating with each interval: ``{ROBUST: [elo, low, high], LIKELIHOOD: [...]}``."""
    fixed = np.array(pool.elo)
    return {kind: list(fit_against_fixed(fixed, score, games, interval=kind)) for kind in (ROBUST, LIKELIHOOD)}


def study(policy: str, pool: ReferencePool, full_seeds: int, quick_seeds: int, workers: int) -> dict:
    """One policy against one pool: every seed's quick and full ratings, and their coverage of the reference."""
    quick_games, full_games = PROTOCOLS["quick"].rating_games, PROTOCOLS["full"].rating_games
    assert quick_games % CHUNK == 0, "a quick run must be whole chunks of a full run"
    quick, full = [], []
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(max(full_seeds, quick_seeds)):
            if seed < full_seeds:
                file = Path(folder) / f"seed{seed}.jsonl"
                rating = rate_against_pool(policy, full_games, seed=seed, workers=workers, pool=pool, games_file=file)
                full.append(intervals(pool, np.array(rating.score), np.array(rating.games)))
                if seed < quick_seeds:
                    quick.append(intervals(pool, *quick_score(file, len(pool.agents), quick_games)))
            else:
                rating = rate_against_pool(policy, quick_games, seed=seed, workers=workers, pool=pool)
                quick.append(intervals(pool, np.array(rating.score), np.array(rating.games)))
    full_elo = np.array([run[ROBUST][0] for run in full])
    reference = float(full_elo.mean())

    def coverage(runs: list[dict], kind: str, leave_one_out: bool) -> float:
        hits = 0
        for k, run in enumerate(runs):
            target = float(np.delete(full_elo, k).mean()) if leave_one_out else reference
            hits += run[kind][1] <= target <= run[kind][2]
        return hits / len(runs)

    def summary(runs: list[dict], leave_one_out: bool) -> dict:
        elo = np.array([run[ROBUST][0] for run in runs])
        return {
            "seeds": len(runs),
            "elo_mean": float(elo.mean()),
            "elo_sd": float(elo.std(ddof=1)) if len(runs) > 1 else None,
            **{
                f"{kind}_half_width": float(np.mean([(run[kind][2] - run[kind][1]) / 2 for run in runs]))
                for kind in (ROBUST, LIKELIHOOD)
            },
            **{f"{kind}_coverage": coverage(runs, kind, leave_one_out) for kind in (ROBUST, LIKELIHOOD)},
            "ratings": [run[ROBUST] for run in runs],
        }

    return {
        "policy": policy,
        "kind": POLICIES.get(policy, "given"),
        "pool_name": pool.name,
        "members": list(pool.labels),
        "reference": reference,
        "quick": summary(quick, leave_one_out=False),
        "full": summary(full, leave_one_out=True) if full_seeds > 1 else None,
    }


def table(rows: list[dict]) -> str:
    """The study as a markdown table: each policy and pool, each protocol's coverage with both intervals."""
    lines = [
        "| policy | pool | reference (full, mean) | protocol | seeds | seed-to-seed sd | half width (robust) "
        "| covered (robust) | covered (likelihood ratio) |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        for name in ("quick", "full"):
            part = row[name]
            if part is None:
                continue
            lines.append(
                f"| `{row['policy']}` ({row['kind']}) | {row['pool_name']} | {row['reference']:+.0f} | {name} | "
                f"{part['seeds']} | {part['elo_sd']:.0f} | {part['robust_half_width']:.0f} | "
                f"{part['robust_coverage']:.1%} | {part['likelihood_coverage']:.1%} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=list(DEFAULT_POLICIES))
    parser.add_argument("--quick-seeds", type=int, default=30)
    parser.add_argument("--full-seeds", type=int, default=6)
    parser.add_argument("--members", choices=["default", "all"], default="default")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", default=str(ROOT / "docs" / "benchmark" / "rating_coverage.json"))
    args = parser.parse_args(argv)
    if args.full_seeds < 2 or args.quick_seeds < 1:
        parser.error("--full-seeds must be at least 2 (the reference is their mean) and --quick-seeds at least 1")
    start = time.perf_counter()
    rows = []
    for pool in pools(args.members):
        for policy in args.policies:
            rows.append(study(policy, pool, args.full_seeds, args.quick_seeds, args.workers))
            quick = rows[-1]["quick"]
            print(
                f"{policy} vs {pool.name}: reference {rows[-1]['reference']:+.0f}, quick covered "
                f"{quick['robust_coverage']:.1%} (robust) / {quick['likelihood_coverage']:.1%} (likelihood ratio)",
                flush=True,
            )
    quick_coverage = [row["quick"]["robust_coverage"] for row in rows]
    document = {
        "command": "python -m benchmarks.rating_coverage "
        + f"--quick-seeds {args.quick_seeds} --full-seeds {args.full_seeds} --members {args.members} "
        + f"--policies {' '.join(args.policies)}",
        "protocols": {name: PROTOCOLS[name].rating_games for name in ("quick", "full")},
        "target": TARGET,
        "quick_robust_coverage_min": min(quick_coverage),
        "quick_robust_coverage_mean": float(np.mean(quick_coverage)),
        "quick_likelihood_coverage_min": min(row["quick"]["likelihood_coverage"] for row in rows),
        "seconds": math.ceil(time.perf_counter() - start),
        "rows": rows,
    }
    write_text(Path(args.json), json.dumps(document, indent=1) + "\n")
    print(table(rows))
    print(
        f"quick protocol, robust interval: covered {min(quick_coverage):.1%} at least, {np.mean(quick_coverage):.1%} "
        f"on average (target {TARGET:.0%}); {document['seconds']} s; wrote {args.json}"
    )


if __name__ == "__main__":
    main()

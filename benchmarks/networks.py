"""The board network against the MLP at equal CPU time: `az-quick` trained once with each, on this machine.

    python -m benchmarks.networks                       # both runs (about 20 minutes on 2 cores), printed
    python -m benchmarks.networks --write               # ... and written to docs/alphazero/networks.{md,json}
    python -m benchmarks.networks --games 2048 --runs /tmp/networks   # a shorter try

Each run is `configs/train/az-quick.yaml` (the same seed, search, labels and evaluations) with
`--games` games (four evaluations) and only the network changed: the MLP it used to ship with
(`network: mlp, hidden: 256, layers: 2`) or the board network it ships with now (`network: board,
hidden: 64, layers: 2`). A run's CPU time (this process and its
labelling workers, user + system) is measured around it; the CPU time at each evaluation is that
total shared out by the run's own training clock, so the two runs can be read at equal CPU time.
Run it on a quiet machine: the load average is printed and written with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
from pathlib import Path

from training.alphazero import train
from training.az_config import AZConfig
from training.report import label

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "alphazero"
NETWORKS = {
    "mlp": {"network": "mlp", "hidden": 256, "layers": 2},
    "board": {"network": "board", "hidden": 64, "layers": 2},
}
"""The two contenders, as ``az-quick`` overrides."""
COLUMNS = ["mcts:400", "endgames", "exact:policy", "exact:value", "exact:value@10"]


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the labelling workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_one(network: str, games: int, folder: Path) -> dict:
    """Train ``az-quick`` with ``network`` for ``games`` games (four evaluations) in ``folder``; its figures."""
    config = AZConfig.load("az-quick", total_games=games, eval_every_games=max(games // 4, 1), **NETWORKS[network])
    start = cpu_seconds()
    history = train(config, folder / network, overwrite=True, progress=True)
    total = cpu_seconds() - start
    last = history[-1]["seconds"]
    rows = [
        {
            "games": h["games"],
            "cpu_seconds": round(total * h["seconds"] / last, 1),
            "results": {spec: list(v) for spec, v in h["results"].items()},
        }
        for h in history
    ]
    return {"network": network, "fields": NETWORKS[network], "cpu_seconds": round(total, 1), "evaluations": rows}


def table(runs: list[dict]) -> str:
    """Markdown: one row per evaluation of each run, its CPU time and the shares with 95% intervals."""
    head = "| network | games | CPU minutes | " + " | ".join(label(c) for c in COLUMNS) + " |"
    lines = [head, "|---|---:|---:|" + "---|" * len(COLUMNS)]
    for run in runs:
        for row in run["evaluations"]:
            cells = []
            for spec in COLUMNS:
                share = row["results"].get(spec)
                cells.append(f"{share[0]:.1%} [{share[1]:.1%}, {share[2]:.1%}]" if share else "-")
            lines.append(
                f"| {run['network']} | {row['games']:,} | {row['cpu_seconds'] / 60:.1f} | " + " | ".join(cells) + " |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_480, help="games each run plays (az-quick's budget)")
    parser.add_argument("--runs", default="runs/networks", help="where the two run folders go")
    parser.add_argument("--write", action="store_true", help="write docs/alphazero/networks.md and networks.json")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    runs = [run_one(network, args.games, Path(args.runs)) for network in NETWORKS]
    document = {
        "games": args.games,
        "load_before": round(load[0], 2),
        "load_after": round(os.getloadavg()[0], 2),
        "runs": runs,
    }
    text = table(runs)
    print(text)
    if args.write:
        DOCS.mkdir(parents=True, exist_ok=True)
        (DOCS / "networks.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        (DOCS / "networks.md").write_text(text + "\n", encoding="utf-8")
        print(f"wrote {DOCS / 'networks.md'} and networks.json")


if __name__ == "__main__":
    main()

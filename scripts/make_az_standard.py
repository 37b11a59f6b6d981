"""Ship a trained AlphaZero run as ``az-standard`` and measure it: the figures of docs/alphazero.md.

    python scripts/make_az_standard.py --run runs/az-standard [--network latest] [--only previous dealt]

1. The first time, it keeps the network it replaces and that network's figures (config, metrics,
   report, learning curve) in ``docs/alphazero/<--previous>/``, so the docs can show both curves
   and the new network can play the old one.
2. It copies the run's network (``--network``: ``latest.pt``, the run's last one, or ``best.pt``)
   to ``trinity_env/agents/data/az-standard.pt``, and the run's ``config.json``, ``metrics.csv``,
   ``report.md`` and ``win_rate.png`` to ``docs/alphazero/``; it draws both learning curves against
   training time in ``docs/alphazero/vs_previous.png``.
3. It runs each measurement of the docs (the same commands the pages print), each writing its own
   files. ``docs/alphazero/measured.json`` records which ones measured the network shipped now (by
   its SHA-256), so a stopped run (Ctrl-C, a session that ended) goes on where it stopped and a new
   network is measured afresh; ``--redo`` measures again, ``--only`` picks measurements.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from trinity_env.agents.spec import format_spec

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "alphazero"
RUN_FILES = ("config.json", "metrics.csv", "report.md", "win_rate.png")
PREVIOUS_FIGURES = (
    *RUN_FILES,
    "dealt",
    "mcts6400",
    "raw-policy",
    "drafted",
    "endgames.json",
    "puzzles.json",
    "benchmark.json",
)
"""What ``keep_previous`` moves: the old network's run files and every measurement of it that a new one replaces."""
PREVIOUS_ELSEWHERE = {
    "accuracy.json": ("accuracy/accuracy.json", shutil.copy),  # benchmarks.accuracy --rescore keeps the other rows
    "exploit-sims0-1m.json": ("exploitability/az-standard-sims0-1m.json", shutil.move),
    "exploit-sims64-1m.json": ("exploitability/az-standard-sims64-1m.json", shutil.move),
}
"""The old network's figures kept outside ``docs/alphazero/``: the name in the folder, the file (under the
docs folder, the parent of ``DOCS``), copied or moved."""
PREVIOUS_NETWORK = "network.pt"
MEASURED = DOCS / "measured.json"


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def measurements(previous: str) -> dict[str, list[str]]:
    """Each measurement's command by name (each writes its own files under ``docs/``)."""
    old = format_spec("az", [f"docs/alphazero/{previous}/{PREVIOUS_NETWORK}"])  # a value, quoted where it must be
    trinity = [sys.executable, "-m", "trinity_env.cli"]
    module = [sys.executable, "-m"]

    def exploit(simulations: int) -> list[str]:
        """``trinity exploit``: a million PPO steps against az-standard with ``simulations`` per move."""
        spec = f"az-standard:sims={simulations}"
        json = f"docs/exploitability/az-standard-sims{simulations}-1m.json"
        return [*trinity, "exploit", "--agent", spec, "--steps", "1000000", "--seed", "0", "--quiet", "--json", json]

    return {
        "previous": [
            *trinity,
            "arena",
            "--agents",
            "az-standard",
            old,
            "--games",
            "200",
            "--quiet",
            "--out",
            "docs/alphazero/previous",
        ],
        "dealt": [
            *trinity,
            "arena",
            "--agents",
            "az-standard",
            "mcts:1600",
            "ppo-standard",
            "--games",
            "200",
            "--quiet",
            "--out",
            "docs/alphazero/dealt",
        ],
        "mcts6400": [
            *trinity,
            "arena",
            "--agents",
            "az-standard",
            "mcts:6400",
            "--games",
            "200",
            "--quiet",
            "--out",
            "docs/alphazero/mcts6400",
        ],
        "raw-policy": [
            *trinity,
            "arena",
            "--agents",
            "az-standard:sims=0",
            "ppo-standard",
            "mcts:400",
            "mcts:1600",
            "--games",
            "200",
            "--quiet",
            "--out",
            "docs/alphazero/raw-policy",
        ],
        "drafted": [
            *trinity,
            "arena",
            "--agents",
            "az-standard",
            "mcts:1600,draft=search",
            "--games",
            "200",
            "--config",
            "standard",
            "--quiet",
            "--out",
            "docs/alphazero/drafted",
        ],
        "endgames": [
            *module,
            "benchmarks.az",
            "--endgames",
            "az-standard",
            "az-standard:sims=0",
            "az-standard:solver=10",
            "mcts:1600",
            "ppo-standard",
            "--json",
            "docs/alphazero/endgames.json",
        ],
        "puzzles": [
            *trinity,
            "puzzles",
            "score",
            "trinity_env/evaluation/data/puzzles.jsonl",
            "--agents",
            "az-standard",
            "az-standard:sims=0",
            "--json",
            "docs/alphazero/puzzles.json",
        ],
        "accuracy": [*module, "benchmarks.accuracy", "--rescore", "az-standard:sims=0", "az-standard"],
        "speed": [*module, "benchmarks.az", "--json", "docs/alphazero/benchmark.json"],
        "exploit-raw": exploit(0),
        "exploit-searched": exploit(64),
    }


def keep_previous(previous: str) -> None:
    """Move the replaced network's figures into ``docs/alphazero/<previous>/`` (once) beside its network."""
    from trinity_env.agents.registry import SHIPPED_DIR

    folder = DOCS / previous
    if (folder / PREVIOUS_NETWORK).is_file():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for name in PREVIOUS_FIGURES:
        if (DOCS / name).exists():
            shutil.move(DOCS / name, folder / name)
    for name, (path, keep) in PREVIOUS_ELSEWHERE.items():
        if (DOCS.parent / path).exists():
            keep(DOCS.parent / path, folder / name)
    shutil.copy(SHIPPED_DIR / "az-standard.pt", folder / PREVIOUS_NETWORK)
    print(f"kept the previous az-standard and its figures in {_shown(folder)}")


def ship(run: Path, network_file: str) -> None:
    """The run's network as ``az-standard.pt`` (network and games only), its figures in ``docs/alphazero/``."""
    from trinity_env.agents.az import load_network, save_network
    from trinity_env.agents.registry import SHIPPED_DIR

    network, payload = load_network(run / network_file)
    save_network(SHIPPED_DIR / "az-standard.pt", network, {"games": int(payload["games"])})
    for name in RUN_FILES:
        shutil.copy(run / name, DOCS / name)
    print(f"shipped {run / network_file} ({int(payload['games']):,} games) as az-standard")


def _curve(path: Path) -> dict[str, list[tuple[float, float]]]:
    """``metrics.csv`` (``training.evaluation.read_metrics``) as (training minutes, share) by measure."""
    from training.evaluation import read_metrics

    curves: dict[str, list[tuple[float, float]]] = {}
    for row in read_metrics(path):
        curves.setdefault(row[2], []).append((float(row[1]) / 60, float(row[3])))
    return curves


def plot_against_previous(previous: str) -> Path:
    """Both runs' evaluations against mcts:400 and on the endgame suite, by training minutes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    new, old = _curve(DOCS / "metrics.csv"), _curve(DOCS / previous / "metrics.csv")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, measure, title in zip(axes, ("mcts:400", "endgames"), ("vs mcts:400", "endgame suite"), strict=True):
        for curves, name in ((old, f"previous ({previous})"), (new, "az-standard")):
            if measure in curves:
                minutes, shares = zip(*curves[measure], strict=True)
                ax.plot(minutes, shares, marker="o", label=name)
        ax.set_title(title)
        ax.set_xlabel("training minutes (this machine)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate / share")
    axes[0].legend()
    fig.tight_layout()
    path = DOCS / "vs_previous.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def measured(network: str) -> list[str]:
    """The measurements already made of the network with SHA-256 ``network``."""
    if not MEASURED.is_file():
        return []
    record = json.loads(MEASURED.read_text(encoding="utf-8"))
    return list(record["done"]) if record.get("network") == network else []


def record_measured(network: str, done: list[str]) -> None:
    MEASURED.write_text(json.dumps({"network": network, "done": done}, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=Path("runs/az-standard"))
    parser.add_argument("--network", choices=("latest.pt", "best.pt"), default="latest.pt")
    parser.add_argument("--previous", default="mlp-96k", help="the folder under docs/alphazero/ for the old network")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these measurements only")
    parser.add_argument("--redo", action="store_true", help="measure again what is already measured")
    parser.add_argument("--no-ship", action="store_true", help="measure the network shipped now")
    args = parser.parse_args(argv)
    steps = measurements(args.previous)
    unknown = sorted(set(args.only or ()) - set(steps))
    if unknown:
        parser.error(f"unknown measurement {', '.join(unknown)}; known: {', '.join(steps)}")
    if not args.no_ship:
        if not (args.run / args.network).is_file():
            parser.error(f"{args.run / args.network} does not exist")
        keep_previous(args.previous)
        ship(args.run, args.network)
        print(f"wrote {_shown(plot_against_previous(args.previous))}")
    from trinity_env.agents.registry import SHIPPED_DIR

    network = _sha256(SHIPPED_DIR / "az-standard.pt")
    done = measured(network)
    for name, command in steps.items():
        if args.only and name not in args.only:
            continue
        if name in done and not args.redo:
            print(f"{name}: already measured (docs/alphazero/measured.json)")
            continue
        print(f"{name}: {' '.join(command[1:])}", flush=True)
        try:
            subprocess.run(command, cwd=ROOT, check=True)
        except KeyboardInterrupt:
            sys.exit(f"stopped in {name}; what was measured before it is recorded, run again to go on")
        except subprocess.CalledProcessError as failed:
            sys.exit(f"{name} failed (exit {failed.returncode}); what was measured before it is recorded")
        done = sorted(set(done) | {name})
        record_measured(network, done)


if __name__ == "__main__":
    main()

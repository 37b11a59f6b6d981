"""``make train-az`` over several seeds: the spread a user's run should land in, written where the docs read it.

Run from the repository root (about 10 minutes a seed on one idle core of this machine's kind; resumable):

    nice -n 5 python -m scripts.train_az_seeds --seeds 0 1 2

Each seed trains ``configs/train/az-quick.yaml`` with only ``seed`` changed (seed 0 is exactly ``make train-az``)
in ``runs/az-quick-seeds/seed-N`` (an unfinished run resumes where it stopped; a finished one is read, not
trained again), then its report, metrics and config are copied to ``docs/alphazero/quick/seed-N/``. The summary
``docs/alphazero/quick/seeds.json`` holds every seed's evaluations, the lowest and highest share of each measure at
each evaluation over the seeds, and the processor the runs were made on (float sums differ between CPU kernels, so
a run elsewhere can differ in the last bits and then diverge); ``seeds.png`` draws the curves. docs/alphazero.md
quotes the table ``seeds_table`` makes from the JSON (a docs test checks it).
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "alphazero" / "quick"
RUNS = ROOT / "runs" / "az-quick-seeds"
COPIED = ("config.json", "metrics.csv", "report.md", "win_rate.png")
MEASURES = {"mcts:400": "vs mcts:400", "endgames": "endgame suite", "exact:policy": "policy keeps exact value"}
"""The measures the summary's table shows (metrics.csv's names: the page's words)."""


def processor() -> dict[str, object]:
    """What the runs ran on: the CPU's model name and the vector extensions that change float sums."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    wanted = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni")
    return {"model": model, "machine": platform.machine(), "extensions": [f for f in wanted if f in flags]}


def read_metrics(path: Path) -> dict[int, dict[str, list[float]]]:
    """metrics.csv as ``{games: {measure: [share, low, high]}}`` and each evaluation's minutes under ``seconds``."""
    rows: dict[int, dict[str, list[float]]] = {}
    with path.open(encoding="utf-8", newline="") as file:
        for row in csv.DictReader(file):
            cell = rows.setdefault(int(row["games"]), {"seconds": [float(row["seconds"])]})
            cell[row["measure"]] = [float(row["rate"]), float(row["low"]), float(row["high"])]
    return rows


def summary(seeds: list[int], folders: dict[int, Path]) -> dict[str, object]:
    """The seeds' evaluations side by side and, for each evaluation and measure, the lowest and highest share
    (``spread``) and the band a new run should land in (``band``): from the lowest seed's 95% interval's low end to
    the highest's high end. Three seeds' shares alone miss half of the next runs (a fourth draw falls outside three
    draws' range one time in two) and each share is itself an estimate from a few hundred games or positions; the
    band adds that noise."""
    runs = {seed: read_metrics(folders[seed] / "metrics.csv") for seed in seeds}
    games = sorted(set.intersection(*(set(run) for run in runs.values())))
    spread = {
        str(g): {m: [min(runs[s][g][m][0] for s in seeds), max(runs[s][g][m][0] for s in seeds)] for m in MEASURES}
        for g in games
    }
    band = {
        str(g): {m: [min(runs[s][g][m][1] for s in seeds), max(runs[s][g][m][2] for s in seeds)] for m in MEASURES}
        for g in games
    }
    config = json.loads((folders[seeds[0]] / "config.json").read_text(encoding="utf-8"))
    return {
        "config": "az-quick",
        "eval_games": config["eval_games"],
        "seeds": seeds,
        "processor": processor(),
        "command": "python -m scripts.train_az_seeds --seeds " + " ".join(map(str, seeds)),
        "runs": {str(s): {str(g): runs[s][g] for g in games} for s in seeds},
        "spread": spread,
        "band": band,
    }


def seeds_table(document: dict) -> str:
    """The page's table: each evaluation's band a run lands in, its range over the seeds, then every seed's share."""
    seeds = document["seeds"]
    lines = [
        "| games | measure | a run lands in | lowest to highest over seeds | "
        + " | ".join(f"seed {s}" for s in seeds)
        + " |",
        "|---|---|---|---|" + "---|" * len(seeds),
    ]
    for g, cells in document["spread"].items():
        for measure, words in MEASURES.items():
            low, high = cells[measure]
            below, above = document["band"][g][measure]
            each = " | ".join(f"{document['runs'][str(s)][g][measure][0]:.1%}" for s in seeds)
            lines.append(f"| {int(g):,} | {words} | {below:.1%} to {above:.1%} | {low:.1%} to {high:.1%} | {each} |")
    return "\n".join(lines)


def targets_row(document: dict) -> str:
    """The page's targets row: the last evaluation's lowest and highest share against mcts:400 over the seeds, and
    the wall time the runs took (the target's 15 minutes are an idle machine's; a busy one says so)."""
    last = list(document["spread"])[-1]
    low, high = document["spread"][last]["mcts:400"]
    minutes = sorted(run[last]["seconds"][0] / 60 for run in document["runs"].values())
    verdict = "met" if low >= 0.6 else f"missed by {100 * (0.6 - low):.1f} points by the lowest seed"
    return (
        f"| `make train-az` (≤ 15 min) vs mcts:400 | ≥ 60% | {low:.1%} to {high:.1%} over {len(document['seeds'])} "
        f"seeds | {verdict}; the runs took {minutes[0]:.1f} to {minutes[-1]:.1f} min on the loaded machine, "
        "not timed idle |"
    )


def plot(document: dict, path: Path) -> None:
    """Each seed's curve against mcts:400 with its 95% interval, over the band a run lands in."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 3.8))
    games = [int(g) for g in document["band"]]
    low, high = zip(*(document["band"][g]["mcts:400"] for g in document["band"]))
    axis.fill_between(games, low, high, color="grey", alpha=0.2, label="a run lands in")
    for seed in document["seeds"]:
        run = document["runs"][str(seed)]
        x = [int(g) for g in run]
        share = [run[g]["mcts:400"][0] for g in run]
        below = [run[g]["mcts:400"][0] - run[g]["mcts:400"][1] for g in run]
        above = [run[g]["mcts:400"][2] - run[g]["mcts:400"][0] for g in run]
        axis.errorbar(x, share, yerr=[below, above], marker="o", capsize=3, label=f"seed {seed}")
    axis.set_ylim(0, 1)
    axis.set_xlabel("self-play games")
    axis.set_ylabel("points vs mcts:400")
    axis.set_title(f"make train-az over {len(document['seeds'])} seeds ({document['eval_games']} games an evaluation)")
    axis.grid(alpha=0.3)
    axis.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def train_seed(seed: int) -> Path:
    """Seed ``seed``'s run folder, trained to its end (resumed where a run stopped; read where one finished)."""
    from training.alphazero import train, write_report
    from training.az_config import AZConfig

    config = AZConfig.load("az-quick", seed=seed)
    run = RUNS / f"seed-{seed}"
    metrics, history = run / "metrics.csv", None
    while not (metrics.exists() and config.total_games in read_metrics(metrics)):
        # on a busy machine max_minutes (a safety stop) ends a session early: resuming continues it exactly
        history = train(config, run, resume=(run / "latest.pt").exists(), progress=True)
    if history is not None:  # else finished before: its report is there
        write_report(run, history, f"alphazero, config az-quick, seed {seed}")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    if len(set(args.seeds)) < 3 or min(args.seeds) < 0:
        parser.error("--seeds takes at least three different seeds, each at least 0")
    folders = {}
    for seed in args.seeds:
        folders[seed] = train_seed(seed)
        DOCS.joinpath(f"seed-{seed}").mkdir(parents=True, exist_ok=True)
        for name in COPIED:
            shutil.copyfile(folders[seed] / name, DOCS / f"seed-{seed}" / name)
    document = summary(args.seeds, folders)
    (DOCS / "seeds.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    plot(document, DOCS / "seeds.png")
    print(seeds_table(document))
    print(targets_row(document))
    print(f"wrote {DOCS / 'seeds.json'} and {DOCS / 'seeds.png'}")


if __name__ == "__main__":
    main()

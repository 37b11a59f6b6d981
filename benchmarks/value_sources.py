"""What exact value targets buy: a value head trained on the solver's labels, scored against perfect play.

    trinity dataset build runs/solved --positions 100000   # the labels
    python -m benchmarks.value_sources --dataset runs/solved                   # both networks, printed
    python -m benchmarks.value_sources --dataset runs/solved --write           # ... and docs/alphazero/value_sources.*

A fresh network of each architecture (the MLP and the board network of ``benchmarks.networks``)
learns only its value head's loss on the dataset's exact values (mean squared error against -1, 0,
+1; AdamW, batch 256, ``--steps`` steps, seeded), and its value head is then scored on the
shipped accuracy set (``trinity accuracy``'s figures: the sign against the exact value, positions
not drawn), by empty count. Beside them, the value heads that ``az-quick`` self-play trained
(game results, exact values at 6 empty tiles or fewer; ``docs/alphazero/networks.json``). The
dataset's games and the accuracy set's are disjoint streams of games (``docs/dataset.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks import load_average
from trinity_env.agents.az import make_network, numpy_evaluator
from trinity_env.evaluation.accuracy import DEFAULT_SET, load_set, score_network
from trinity_env.evaluation.solved_positions import load

from .networks import NETWORKS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "alphazero"


def train_value(
    network_name: str, observations: np.ndarray, masks: np.ndarray, values: np.ndarray, steps: int, seed: int
) -> torch.nn.Module:
    """A fresh network whose value head learned ``values`` for ``steps`` minibatch steps (the policy head untouched
    by any loss)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    network = make_network(tactics=True, **NETWORKS[network_name])
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-3, weight_decay=1e-4)
    network.train()
    for _ in range(steps):
        rows = rng.integers(0, len(values), 256)
        _, predicted = network(torch.from_numpy(observations[rows]), torch.from_numpy(masks[rows]))
        loss = (predicted - torch.from_numpy(values[rows])).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return network.eval()


def table(rows: dict[str, dict[int, float]]) -> str:
    counts = sorted({e for shares in rows.values() for e in shares if e != "all"})
    lines = [
        "| value head | " + " | ".join(f"{e} empty" for e in counts) + " | all |",
        "|---|" + "---:|" * (len(counts) + 1),
    ]
    for name, shares in rows.items():
        cells = [f"{shares[e]:.1%}" if e in shares else "-" for e in counts]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {shares['all']:.1%} |")
    return "\n".join(lines)


def sign_shares(scores) -> dict:
    shares: dict = {row.empty: row.value_sign.value for row in scores}
    shares["all"] = sum(r.value_sign.hits for r in scores) / sum(r.value_sign.total for r in scores)
    return shares


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="a folder built by trinity dataset build")
    parser.add_argument("--steps", type=int, default=4000, help="learner steps a network (batch 256)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="write docs/alphazero/value_sources.md and .json")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"load average {load_average()} on {os.cpu_count()} cores")
    data = load(args.dataset)
    observations, masks, values = data.training_arrays()
    print(f"{len(values):,} solved positions ({args.dataset}), {int(data.empty.min())}-{int(data.empty.max())} empty")
    positions = load_set(DEFAULT_SET)
    rows: dict[str, dict] = {}
    document: dict = {"dataset_positions": len(values), "steps": args.steps, "seed": args.seed, "runs": {}}
    for name in NETWORKS:
        start = time.perf_counter()
        network = train_value(name, observations, masks, values, args.steps, args.seed)
        seconds = time.perf_counter() - start
        label = f"{name}, exact labels only ({args.steps:,} steps)"
        rows[label] = sign_shares(score_network(numpy_evaluator(network), positions))
        shares = {str(k): v for k, v in rows[label].items()}
        document["runs"][label] = {"seconds": round(seconds, 1), "value_sign": shares}
        print(f"{label}: {seconds:.0f} s, value sign {rows[label]['all']:.1%}")
    selfplay = DOCS / "networks.json"
    if selfplay.is_file():
        for run in json.loads(selfplay.read_text(encoding="utf-8"))["runs"]:
            last = run["evaluations"][-1]
            share = last["results"]["exact:value"][0]
            rows[f"{run['network']}, az-quick self-play ({last['games']:,} games; validation set)"] = {"all": share}
    text = table(rows)
    print(text)
    if args.write:
        (DOCS / "value_sources.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        (DOCS / "value_sources.md").write_text(text + "\n", encoding="utf-8")
        print(f"wrote {DOCS / 'value_sources.md'} and value_sources.json")


if __name__ == "__main__":
    main()

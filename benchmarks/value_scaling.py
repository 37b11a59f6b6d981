"""The learned player's scaling study: what the value head and the raw policy need, measured on solved positions.

    python -m benchmarks.value_scaling --sizes 30000 --variants board-128x2 --steps 2000   # one short run, printed
    python -m benchmarks.value_scaling --write   # the study: every variant and size, to docs/alphazero/scaling.*
    python -m benchmarks.value_scaling --sizes 300000 --variants board-128x2 --append   # one more run, added
    python -m benchmarks.value_scaling --shards 0-90,157-247 ...   # only these shards: the same positions later

The data is the solved-positions dataset (``docs/dataset/default``, ``trinity dataset``):
exact values at 4-10 empty tiles and, at 4-9, every move that keeps the value. Every game whose
index is a multiple of 10 is held out (the positions of a game are never split between the two
sides); training draws from the first ``size`` positions of the other games.

Each run trains one fresh network (``VARIANTS``) for ``--steps`` minibatch steps (AdamW 1e-3,
weight decay 1e-4, batch 256, one torch thread, seeded) on two losses: the value's squared error
against the exact value, and, where the best moves are recorded, the policy's negative log of the
probability it gives to the set of value-keeping moves. Every ``--eval-every-steps`` steps the run is scored
on the held-out positions (at most ``--held-out`` of each empty count): the value's sign against the
exact value, and whether the raw policy's first choice keeps the value (at 4-9 empty, where the
dataset records it), by empty count, and the value's sign on as many of the run's own training positions (a fixed
sample: how well it fits what it trained on, against how well that carries to new games), with the run's CPU time
so far (this process's user + system time: the curves are read at equal CPU time, whatever else the machine did).
The load average is printed.

Writes ``docs/alphazero/scaling.json`` (every curve), ``scaling.md`` (the table at the end of each
run) and ``scaling.png`` (held-out value sign against CPU time).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from benchmarks import load_average
from training.pretrain import Targets, losses, policy_loss, score
from trinity_env.agents.az import make_network
from trinity_env.agents.networks.board_network import BoardNetwork
from trinity_env.agents.networks.tactics import FEATURES, tactical_features
from trinity_env.agents.view import observation_blocks
from trinity_env.core import ArgumentError
from trinity_env.core.board import TILES
from trinity_env.evaluation.solved_build import shard_range
from trinity_env.evaluation.solved_positions import load
from trinity_env.fast.layout import DECK_SIZE
from trinity_env.spec.observation import OBSERVATION_HIGH, THEIR_CARD_FEATURES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "alphazero"
DATASET = ROOT / "docs" / "dataset" / "default"
BATCH = 256


class OutcomeBoardNetwork(BoardNetwork):
    """The board network whose value is read off its moves: every placement's logit is trained as the chance that
    the move keeps a won position won (its exact outcome: on dealt hands, where no position is drawn, a move wins
    exactly when the position is won and the move is one of its best), and the value is the best legal
    placement's outcome, ``2 * sigmoid(max logit) - 1``, averaged with the trunk's own value. One ply of
    look-ahead built into the heads, so the value can use what each capture and domino does."""

    architecture = "board-outcome"

    def forward(self, observations, masks, tactical=None):
        logits, trunk_value = super().forward(observations, masks, tactical)
        place = logits[:, 16:]
        best = place.max(dim=1).values
        from_moves = torch.where(best > -1e8, 2 * torch.sigmoid(best) - 1, trunk_value)
        return logits, (trunk_value + from_moves) / 2


class TacticalValueBoardNetwork(BoardNetwork):
    """The board network whose value also reads the mover's legal placements: each one (card, tile) is embedded
    from its tactical features (what it captures directly, the domino after it, the lane it completes or blocks:
    ``trinity_env.fast.tactics``), its card's and its tile's embedding and the trunk (width ``pair``), and the
    maximum and the mean over the legal placements join the trunk in a two-layer value head. The inputs axis of
    the study: the tactics reach the value, not only the policy's logits."""

    architecture = "board-tactical-value"

    def __init__(self, hidden: int, layers: int, pair: int = 32, pools: int = 1):
        super().__init__(hidden, layers, True)
        self.pair_tactics = torch.nn.Linear(FEATURES, pair)
        self.pair_card = torch.nn.Linear(hidden, pair)
        self.pair_tile = torch.nn.Linear(hidden, pair)
        self.pair_trunk = torch.nn.Linear(hidden, pair)
        self.joint = torch.nn.Sequential(
            torch.nn.Linear(hidden + 2 * pools * pair, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1)
        )

    def forward(self, observations, masks, tactical=None):
        if tactical is None:
            tactical = tactical_features(observations)
        tiles, cards, trunk = self.encode(observations)
        logits = self.logits(observations, masks, tactical, tiles, cards, trunk)
        pools = self.pools(observations, masks, tactical, tiles, cards, trunk)
        return logits, torch.tanh(self.joint(torch.cat([trunk, *pools], dim=1)).squeeze(-1))

    def pools(self, observations, masks, tactical, tiles, cards, trunk) -> list[torch.Tensor]:
        """What the value reads beside the trunk: the mover's legal placements, embedded and pooled (``pooled``),
        ``[B, 2 * pair]``."""
        pairs = self.pair_tactics(tactical) + self.pair_card(cards)[:, :, None] + self.pair_tile(tiles)[:, None]
        return [pooled(torch.relu(pairs + self.pair_trunk(trunk)[:, None, None]), masks[:, DECK_SIZE:])]


def pooled(pairs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The maximum and the mean of ``pairs`` (``[B, 16 cards, 15 tiles, width]``, not negative) over the placements
    ``legal`` marks (``[B, 240]``, card-major as the actions), ``[B, 2 * width]``."""
    weight = legal.reshape(-1, DECK_SIZE, TILES, 1).float()
    pairs = pairs * weight
    count = weight.sum((1, 2)).clamp(min=1)
    return torch.cat([pairs.amax((1, 2)), pairs.sum((1, 2)) / count], dim=1)


def their_view(observations: np.ndarray) -> np.ndarray:
    """The observations as the opponent would read the board and its own deck (int8 ``[B, 339]``): the tiles'
    owners swapped and the opponent's deck's sides in the mover's deck's place, for ``tactical_batch`` (which reads
    only those), so that its features are the opponent's placements' (open hands)."""
    original = np.asarray(observations, dtype=np.int8)
    flipped = original.copy()
    tiles, mine, _ = observation_blocks(flipped)
    board, _, theirs = observation_blocks(original)
    tiles[..., 0], tiles[..., 1] = board[..., 1], board[..., 0]
    mine[..., :4] = theirs[..., :4]
    return flipped


class ThreatsBoardNetwork(TacticalValueBoardNetwork):
    """``TacticalValueBoardNetwork`` whose value also pools the opponent's placements as they stand (every card in
    the opponent's open hand on every empty tile): their tactical features (``their_view``), their card's sides and
    the tile's embedding, so that the value sees what the opponent threatens as well as what the mover can do."""

    architecture = "board-threats"

    def __init__(self, hidden: int, layers: int, pair: int = 32):
        super().__init__(hidden, layers, pair, pools=2)
        self.threat_tactics = torch.nn.Linear(FEATURES, pair)
        self.threat_card = torch.nn.Linear(THEIR_CARD_FEATURES, pair)
        self.threat_tile = torch.nn.Linear(hidden, pair)
        self.threat_trunk = torch.nn.Linear(hidden, pair)

    def pools(self, observations, masks, tactical, tiles, cards, trunk) -> list[torch.Tensor]:
        """The mover's placements' pool, then the opponent's: its cards in hand on the empty tiles (open hands). The
        mover's is built first: the order autograd sums the gradients in, which the study's runs were made with."""
        mine = super().pools(observations, masks, tactical, tiles, cards, trunk)
        board, _, theirs = observation_blocks(observations)
        empty = (board[..., 0] == 0) & (board[..., 1] == 0)  # [B, 15]
        in_hand = theirs[..., 5] == 1  # [B, 16]
        legal = (in_hand[:, :, None] & empty[:, None, :]).reshape(-1, DECK_SIZE * TILES)
        threats = tactical_features(their_view(observations.numpy()))
        their_cards = self.threat_card(theirs.float() / OBSERVATION_HIGH)
        pairs = self.threat_tactics(threats) + their_cards[:, :, None] + self.threat_tile(tiles)[:, None]
        their = pooled(torch.relu(pairs + self.threat_trunk(trunk)[:, None, None]), legal)
        return [*mine, their]


VARIANTS: dict[str, Callable[[], torch.nn.Module]] = {
    "mlp-256x2": lambda: make_network("mlp", 256, 2, True),
    "board-64x2": lambda: make_network("board", 64, 2, True),
    "board-128x2": lambda: make_network("board", 128, 2, True),
    "board-128x2-no-tactics": lambda: make_network("board", 128, 2, False),
    "board-128x4": lambda: make_network("board", 128, 4, True),
    "board-256x4": lambda: make_network("board", 256, 4, True),
    "outcome-128x2": lambda: OutcomeBoardNetwork(128, 2, True),
    "outcome-128x4": lambda: OutcomeBoardNetwork(128, 4, True),
    "tactical-value-64x2": lambda: TacticalValueBoardNetwork(64, 2),
    "threats-64x2": lambda: ThreatsBoardNetwork(64, 2),
}
"""The networks compared: ``board-128x2`` is ``az-standard``'s (``configs/train/az-standard.yaml``)."""
DEFAULT_SIZES = (30_000, 100_000, 300_000, 1_000_000)


def outcome_loss(
    logits: torch.Tensor, best: torch.Tensor, has: torch.Tensor, values: torch.Tensor, masks: torch.Tensor
) -> torch.Tensor:
    """For ``OutcomeBoardNetwork``: each legal placement's logit against its exact outcome (a win exactly where the
    position is won and the move keeps it), binary cross-entropy over the legal placements of recorded rows."""
    if not bool(has.any()):
        return logits.new_zeros(())
    place, legal = logits[has, 16:], masks[has, 16:].bool()
    wins = ((best[has, 16:] > 0) & (values[has, None] > 0)).float()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(place.clamp(-30, 30), wins, reduction="none")
    return (loss * legal).sum() / legal.sum()


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def run(variant: str, size: int, data: Targets, steps: int, eval_every_steps: int, seed: int) -> dict:
    """Train ``variant`` on the first ``size`` training positions for ``steps`` steps; its curve."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    network = VARIANTS[variant]()
    outcome = isinstance(network, OutcomeBoardNetwork)
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-3, weight_decay=1e-4)
    pool = data.train[: min(size, len(data.train))]
    fitted = np.sort(np.random.default_rng(seed + 1).choice(pool, min(len(pool), len(data.held)), replace=False))
    start = cpu_seconds()
    curve = []
    network.train()
    for step in range(1, steps + 1):
        rows = np.sort(pool[rng.integers(0, len(pool), BATCH)])
        if outcome:
            observations = torch.from_numpy(data.observations[rows])
            masks = torch.from_numpy(data.masks[rows])
            logits, values = network(observations, masks, tactical_features(observations))
            target = torch.from_numpy(data.values[rows])
            best, has = torch.from_numpy(data.best[rows]), torch.from_numpy(data.has_best[rows])
            loss = (values - target).pow(2).mean() + policy_loss(logits, best, has)
            loss = loss + outcome_loss(logits, best, has, target, masks)
        else:
            value_loss, policy = losses(network, data, rows)
            loss = value_loss + policy
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % eval_every_steps == 0 or step == steps:
            point = {
                "step": step,
                "cpu_seconds": round(cpu_seconds() - start, 1),
                "loss": round(float(loss.detach()), 4),
            }
            point.update(score(network, data))
            point["train_sign"] = score(network, data, fitted)["value_sign"]
            curve.append(point)
            print(
                f"  {variant} {len(pool):,} positions, step {step:,}: {point['cpu_seconds']:.0f} CPU s, value sign "
                f"{point['value_sign']['all']:.1%} (on training positions {point['train_sign']['all']:.1%}), policy "
                f"keeps {point['policy_keeps']['all']:.1%}",
                flush=True,
            )
    parameters = sum(p.numel() for p in network.parameters())
    return {
        "variant": variant,
        "positions": len(pool),
        "steps": steps,
        "seed": seed,
        "parameters": parameters,
        "curve": curve,
    }


def table(runs: list[dict]) -> str:
    """Markdown: each run's last evaluation, value sign and policy by empty count."""
    shown = (4, 6, 8, 10)
    head = (
        "| network | positions | steps | CPU min | "
        + " | ".join(f"sign {c}" for c in shown)
        + " | sign all | sign all, trained on | "
        + " | ".join(f"keeps {c}" for c in shown if c < 10)
        + " | keeps all |"
    )
    lines = [head, "|---|---:|---:|---:|" + "---:|" * (2 * len(shown) + 2)]
    for r in runs:
        last = r["curve"][-1]
        signs, keeps = last["value_sign"], last["policy_keeps"]
        cells = [f"{signs[str(c)]:.1%}" if str(c) in signs else "-" for c in shown] + [f"{signs['all']:.1%}"]
        cells.append(f"{last['train_sign']['all']:.1%}" if "train_sign" in last else "-")
        cells += [f"{keeps[str(c)]:.1%}" if str(c) in keeps else "-" for c in shown if c < 10]
        cells.append(f"{keeps['all']:.1%}")
        lines.append(
            f"| {r['variant']} | {r['positions']:,} | {r['steps']:,} | {last['cpu_seconds'] / 60:.1f} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def plot(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, r in enumerate(runs):
        x = [p["cpu_seconds"] / 60 for p in r["curve"]]
        name = f"{r['variant']}, {r['positions'] // 1000}k, {r['steps'] / 1000:g}k steps"
        color = plt.cm.tab20(i % 20)  # one colour a run (the default cycle repeats after ten)
        axes[0].plot(x, [p["value_sign"]["all"] for p in r["curve"]], marker=".", label=name, color=color)
        if all("train_sign" in p for p in r["curve"]):
            axes[0].plot(x, [p["train_sign"]["all"] for p in r["curve"]], linestyle=":", color=color)
        axes[1].plot(x, [p["policy_keeps"]["all"] for p in r["curve"]], marker=".", label=name, color=color)
    titles = (
        "value sign, held out (dotted: on trained positions), 4-10 empty",
        "raw policy keeps the value (4-9 empty)",
    )
    for axis, title in zip(axes, titles):
        axis.set_xlabel("CPU minutes (one thread)")
        axis.set_title(title)
        axis.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DATASET), help="a folder built by trinity dataset build")
    parser.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="training positions, comma-separated"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--steps", type=int, default=6000, help="learner steps a run (batch 256)")
    parser.add_argument("--eval-every-steps", type=int, default=1000, help="steps between held-out evaluations")
    parser.add_argument("--held-out", type=int, default=3000, help="held-out positions of each empty count, at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--shards",
        type=shard_list,
        default=None,
        help="only these finished shards, e.g. 0-90,157-247 (a dataset still being built gives the same positions)",
    )
    parser.add_argument("--write", action="store_true", help="write docs/alphazero/scaling.{json,md,png}")
    parser.add_argument(
        "--append",
        action="store_true",
        help="add these runs to docs/alphazero/scaling.json (a run of the same variant, positions, steps and seed "
        "is replaced) and write the table and plot of them all",
    )
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    sizes = [int(s) for s in args.sizes.split(",")]
    torch.set_num_threads(1)
    print(f"load average {load_average()} on {os.cpu_count()} cores; torch {torch.__version__}")
    began = time.perf_counter()
    positions = load(Path(args.dataset), shards=args.shards)
    data = Targets.from_positions(positions, args.held_out, args.seed)
    print(
        f"{len(positions):,} positions ({args.dataset}): {len(data.train):,} to train on, {len(data.held):,} held out"
    )
    runs = []
    done: set[int] = set()
    for size in sizes:
        size = min(size, len(data.train))  # all of it, where the dataset holds fewer
        if size in done:
            print(f"skipping {size:,} positions again: the dataset holds {len(data.train):,} to train on")
            continue
        done.add(size)
        for variant in variants:
            runs.append(run(variant, size, data, args.steps, args.eval_every_steps, args.seed))
            runs[-1] |= {
                "dataset_positions": len(positions),
                "shards": None if args.shards is None else shard_text(args.shards),
                "held_out": len(data.held),
                "load_average": load_average(),
            }
    print(table(runs))
    print(f"{time.perf_counter() - began:.0f} s; load average {load_average()}")
    if args.write or args.append:
        write(args.dataset, runs, append=args.append)


def shard_list(text: str) -> list[int]:
    """``0-90,157-247`` (ranges and single numbers, comma-separated) as the shard numbers, in order."""
    numbers: list[int] = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise argparse.ArgumentTypeError(f"shards must be like 0-90,157-247, got {text!r}")
        try:
            numbers.extend(shard_range((int(low), int(high or low))))
        except ArgumentError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return numbers


def shard_text(numbers: list[int]) -> str:
    """The shard numbers as ``shard_list`` reads them: ``0-90,157-247``."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


def _key(run: dict) -> tuple:
    return run["variant"], run["positions"], run["steps"], run["seed"], run.get("shards")


def write(dataset: str, runs: list[dict], append: bool) -> None:
    """``docs/alphazero/scaling.{json,md,png}``: these runs, or (``append``) these beside the ones already there."""
    path = DOCS / "scaling.json"
    if append and path.exists():
        kept = [r for r in json.loads(path.read_text(encoding="utf-8"))["runs"] if _key(r) not in map(_key, runs)]
        runs = sorted(kept + runs, key=lambda r: (r["steps"], r["positions"], list(VARIANTS).index(r["variant"])))
    document = {"dataset": dataset, "runs": runs}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (DOCS / "scaling.md").write_text(table(runs) + "\n", encoding="utf-8")
    plot(runs, DOCS / "scaling.png")
    print(f"wrote {DOCS / 'scaling.md'}, scaling.json and scaling.png ({len(runs)} runs)")


if __name__ == "__main__":
    main()

"""Pre-training the AlphaZero network on solved positions, before self-play.

    python -m training.pretrain docs/dataset/default runs/pretrained.pt --steps 20000
    trinity train my-az.yaml      # self-play from it: a config with initial_network: runs/pretrained.pt

The targets are the solver's, read from the dataset (``trinity dataset build``): the value is the exact value for the
player to move, and the policy's target is the set of moves that keep it (the loss is ``-log`` of the probability the
policy gives to that set), where the build recorded them (4-9 empty tiles by default). Only open-hand datasets on
dealt hands are accepted: an exact label is computed with both hands in view, and in the hidden-hands variant or the
draft the mover cannot see what the label was computed from (``check_open_hands``). The network's inputs are the
mover's observations exactly as the AEC env encodes them.

Every game whose index is a multiple of 10 is held out (a game's positions are never split); the held-out value sign
and "the first choice keeps the value" are printed as the run goes. The budget is in learner steps; Ctrl-C or SIGTERM
stops at the next step and writes the network so far (exit 130 or 143), so nothing finished is lost. Seeded: the same
dataset, config and seed give the same weights on one machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from trinity_env.agents.az import NETWORKS, AZModel, make_network, save_network
from trinity_env.arguments import non_negative_int, positive_int, whole_number
from trinity_env.core import ArgumentError
from trinity_env.core.paths import prepare_file
from trinity_env.core.writes import write_text
from trinity_env.evaluation.solved_positions import DatasetError, SolvedPositions, load
from trinity_env.fast.tactics import tactical_batch

from .session import GracefulStop, TrainingInterrupted, one_line, run_command, torch_threads

COUNTS = (4, 5, 6, 7, 8, 9, 10, 11, 12)
HELD_OUT_EVERY = 10
"""Games whose index is a multiple of this are held out."""


def check_open_hands(positions: SolvedPositions) -> None:
    """Refuse a dataset whose labels the mover could not have computed from what it sees: only dealt hands, open."""
    draft = positions.manifest.get("draft")
    if draft != "dealt":
        raise DatasetError(f"pre-training needs a dataset of dealt hands (its manifest says draft {draft!r})")
    if positions.manifest.get("open_hands") is not True:  # a manifest without the field is not trusted
        raise DatasetError(
            "pre-training needs open hands: an exact label sees both hands, a hidden-hand mover sees one"
        )


@dataclass
class Targets:
    """A dataset as training arrays: observations (int8 [N, 339]), masks (int8 [N, 256]), exact values (float32 [N]),
    value-keeping moves (int8 [N, 256]), whether those are recorded (bool [N]), empty tiles and game indices;
    ``train`` and ``held`` index the rows (held out: games that are multiples of ``HELD_OUT_EVERY``)."""

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray
    best: np.ndarray
    has_best: np.ndarray
    empty: np.ndarray
    game: np.ndarray
    train: np.ndarray
    held: np.ndarray

    @classmethod
    def from_positions(cls, positions: SolvedPositions, held_per_count: int = 2000, seed: int = 0) -> Targets:
        check_open_hands(positions)
        observations, masks, values = positions.training_arrays()
        empty = positions.empty.astype(np.int64)
        held = positions.game % HELD_OUT_EVERY == 0
        rng = np.random.default_rng(seed)
        chosen = [rng.permutation(np.flatnonzero(held & (empty == c)))[:held_per_count] for c in COUNTS]
        return cls(
            observations=observations,
            masks=masks,
            values=values,
            best=positions.best_masks(),
            has_best=positions.has_best(),
            empty=empty,
            game=positions.game,
            train=np.flatnonzero(~held),
            held=np.sort(np.concatenate(chosen)),
        )


def policy_loss(logits: torch.Tensor, best: torch.Tensor, has: torch.Tensor) -> torch.Tensor:
    """``-log P(a value-keeping move)`` averaged over the rows whose best moves are recorded (0 without any)."""
    if not bool(has.any()):
        return logits.new_zeros(())
    log_p = torch.log_softmax(logits[has], dim=1)
    kept = torch.logsumexp(log_p.masked_fill(best[has] == 0, -1e9), dim=1)
    return -kept.mean()


def losses(network: AZModel, targets: Targets, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The value's squared error and the policy loss on ``rows``."""
    observations = targets.observations[rows]
    tactical = torch.from_numpy(tactical_batch(observations)) if getattr(network, "tactics", False) else None
    logits, values = network(torch.from_numpy(observations), torch.from_numpy(targets.masks[rows]), tactical)
    value = (values - torch.from_numpy(targets.values[rows])).pow(2).mean()
    policy = policy_loss(logits, torch.from_numpy(targets.best[rows]), torch.from_numpy(targets.has_best[rows]))
    return value, policy


def score(network: AZModel, targets: Targets, rows: np.ndarray | None = None) -> dict[str, dict[str, float]]:
    """Held-out value sign and "the policy's first choice keeps the value", by empty count and ``all``."""
    rows = targets.held if rows is None else rows
    was_training = network.training
    network.eval()
    values, first = [], []
    with torch.no_grad():
        for start in range(0, len(rows), 2048):
            part = rows[start : start + 2048]
            logits, value = network(torch.from_numpy(targets.observations[part]), torch.from_numpy(targets.masks[part]))
            values.append(value.numpy())
            first.append(logits.argmax(dim=1).numpy())
    network.train(was_training)
    if not len(rows):
        return {"value_sign": {}, "policy_keeps": {}}
    value, choice = np.concatenate(values), np.concatenate(first)
    right = np.sign(value) == targets.values[rows]
    kept = targets.best[rows, choice] > 0
    has = targets.has_best[rows]
    signs, keeps = {}, {}
    for count in COUNTS:
        mine = targets.empty[rows] == count
        if mine.any():
            signs[str(count)] = float(right[mine].mean())
        if (mine & has).any():
            keeps[str(count)] = float(kept[mine & has].mean())
    signs["all"] = float(right.mean())
    if has.any():
        keeps["all"] = float(kept[has].mean())
    return {"value_sign": signs, "policy_keeps": keeps}


@dataclass(frozen=True)
class PretrainConfig:
    """The learner's settings: ``steps`` minibatches of ``batch_size`` positions (AdamW), a ``seed``."""

    steps: int = 20_000
    batch_size: int = 256
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    value_coef: float = 1.0
    eval_every_steps: int = 2_000
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "eval_every_steps", "seed"):
            value = getattr(self, name)
            if type(value) is not int or value < (0 if name == "seed" else 1):
                raise ArgumentError(f"{name} must be a whole number >= {0 if name == 'seed' else 1}, got {value!r}")
        for name in ("learning_rate", "weight_decay", "value_coef"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 10:
                raise ArgumentError(f"{name} must be a number in [0, 10), got {value!r}")


def pretrain(
    network: AZModel,
    targets: Targets,
    config: PretrainConfig,
    *,
    stop: Callable[[], bool] = lambda: False,
    report: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Train ``network`` in place for ``config.steps`` steps (fewer where ``stop()`` turns true: checked every
    step); the held-out scores every ``eval_every_steps`` steps and at the end, each handed to ``report``."""
    if not len(targets.train):
        raise DatasetError("the dataset has no training positions (every game is held out)")
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    optimizer = torch.optim.AdamW(network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    network.train()
    curve, step, began = [], 0, time.perf_counter()
    sums = np.zeros(2)
    stopping = stop()
    while step < config.steps and not stopping:
        rows = np.sort(targets.train[rng.integers(0, len(targets.train), config.batch_size)])
        value, policy = losses(network, targets, rows)
        loss = config.value_coef * value + policy
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        sums += (float(value.detach()), float(policy.detach()))
        stopping = stop()
        if step % config.eval_every_steps == 0 or step == config.steps or stopping:
            since = step - (curve[-1]["step"] if curve else 0)
            point = {
                "step": step,
                "seconds": round(time.perf_counter() - began, 1),
                "value_loss": round(float(sums[0]) / since, 4),
                "policy_loss": round(float(sums[1]) / since, 4),
            } | score(network, targets)
            sums[:] = 0
            curve.append(point)
            if report is not None:
                report(point)
    network.eval()
    return curve


def _line(point: dict, total: int) -> str:
    signs, keeps = point["value_sign"], point["policy_keeps"]
    left = point["seconds"] / point["step"] * (total - point["step"])
    estimate = f"about {left / 60:.0f} min left" if left >= 90 else f"about {left:.0f} s left"
    return (
        f"step {point['step']:,}/{total:,} ({point['seconds']:.0f} s, {estimate}): losses "
        f"value {point['value_loss']:.3f}, policy {point['policy_loss']:.3f}; held out: value sign "
        f"{signs.get('all', float('nan')):.1%}, first choice keeps the value {keeps.get('all', float('nan')):.1%}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.pretrain", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="a folder written by trinity dataset build")
    parser.add_argument("out", help="the network file to write (an az checkpoint: az:OUT plays it)")
    parser.add_argument("--network", default="board", choices=sorted(NETWORKS), help="the architecture (board)")
    parser.add_argument("--hidden", type=whole_number(1, 1024), default=128)
    parser.add_argument("--layers", type=whole_number(1, 16), default=2)
    parser.add_argument("--no-tactics", action="store_true", help="without the tactical features")
    parser.add_argument("--steps", type=positive_int, default=PretrainConfig.steps, help="learner steps")
    parser.add_argument("--eval-every-steps", type=positive_int, default=PretrainConfig.eval_every_steps)
    parser.add_argument("--max-positions", type=positive_int, default=2_000_000, help="refuse a larger dataset")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--json", default=None, help="also write the held-out curve and the settings to this file")
    run_command(parser, _run, argv)


def _run(args: argparse.Namespace) -> None:
    config = PretrainConfig(steps=args.steps, eval_every_steps=args.eval_every_steps, seed=args.seed)
    network = make_network(args.network, args.hidden, args.layers, not args.no_tactics)
    for option, path in (("OUT", args.out), ("--json", args.json)):
        if path:
            prepare_file(path, option, ArgumentError)  # writable, before any step
    try:
        targets = Targets.from_positions(load(args.dataset, max_positions=args.max_positions), seed=args.seed)
        if not len(targets.train):
            raise DatasetError(f"{args.dataset}: no training positions (every game is held out)")
    except DatasetError as error:
        raise ArgumentError(one_line(error)) from None
    print(
        f"pre-training a {args.network} {args.hidden}x{args.layers} network on {len(targets.train):,} solved positions "
        f"({len(targets.held):,} held out) for {config.steps:,} steps of {config.batch_size}; writing {args.out}",
        flush=True,
    )
    stopper = GracefulStop()
    with stopper.installed(), torch_threads(1):
        curve = pretrain(
            network,
            targets,
            config,
            stop=lambda: stopper.requested,
            report=lambda point: print(_line(point, config.steps), flush=True),
        )
    steps = curve[-1]["step"] if curve else 0
    save_network(args.out, network, {"pretrain_steps": steps, "pretrain_seed": config.seed})
    if args.json:
        document = {
            "dataset": args.dataset,
            "network": {"network": args.network, "hidden": args.hidden, "layers": args.layers},
            "tactics": not args.no_tactics,
            "config": dataclasses.asdict(config),
            "train_positions": len(targets.train),
            "held_out": len(targets.held),
            "curve": curve,
        }
        write_text(args.json, json.dumps(document, indent=1) + "\n")
    if stopper.requested:
        raise TrainingInterrupted(f"the network after {steps:,} steps is in {args.out}")
    print(f"wrote {args.out} after {steps:,} steps", flush=True)


if __name__ == "__main__":
    main()

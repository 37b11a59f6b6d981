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

The network's shape is held to the one size table the trainers' configs and every loader use
(``trinity_env.agents.loaders.checkpoint.network_size_problem``) before anything is built or read: nothing trainable
here is unloadable. Like the trainers, a run keeps its whole state (network, optimiser, random states, curve) in
``OUT``'s resume file (``resume_path``: ``board-128x2.resume.pt`` beside ``board-128x2.pt``), written atomically every
``--checkpoint-every-steps`` steps and when it stops or ends, so a killed run loses at most the steps since then;
``--resume`` goes on from it (a larger ``--steps`` extends a finished run) and ends on the same weights as a run
never stopped. A fresh start over an unfinished run's resume file is refused in one line: ``--resume``, or delete it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trinity_env.agents.az import NETWORKS, AZModel, load_network, make_network, save_network
from trinity_env.agents.loaders.checkpoint import MAX_HIDDEN, MAX_LAYERS, CheckpointError, network_size_problem
from trinity_env.agents.ppo import torch_threads
from trinity_env.arguments import non_negative_int, positive_int, whole_number
from trinity_env.core import ArgumentError
from trinity_env.core.paths import prepare_file
from trinity_env.core.writes import write_text
from trinity_env.evaluation.solved_positions import DatasetError, SolvedPositions, load
from trinity_env.fast.tactics import tactical_batch

from .session import GracefulStop, RunFinished, TrainingInterrupted, one_line, run_command

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


@dataclass
class Progress:
    """Where a run stands: ``step`` learner steps done, the ``curve`` so far, the value and policy losses summed
    since the curve's last point (``sums``) and the learner's ``seconds`` before this process; with the network,
    the optimiser's state and the random states (``Snapshot``), everything the rest of the run depends on."""

    step: int = 0
    curve: list[dict] = field(default_factory=list)
    sums: tuple[float, float] = (0.0, 0.0)
    seconds: float = 0.0


@dataclass
class Snapshot:
    """A run's state at a step: its ``progress``, the optimiser's ``state_dict``, numpy's generator state (a dict)
    and torch's random state (a tensor). ``pretrain`` takes one to go on from and hands them to ``save``."""

    progress: Progress
    optimizer: dict
    rng: dict
    torch_rng: Any


def pretrain(
    network: AZModel,
    targets: Targets,
    config: PretrainConfig,
    *,
    stop: Callable[[], bool] = lambda: False,
    report: Callable[[dict], None] | None = None,
    resume: Snapshot | None = None,
    save: Callable[[Snapshot], None] | None = None,
    checkpoint_every_steps: int = 0,
) -> list[dict]:
    """Train ``network`` in place for ``config.steps`` steps (fewer where ``stop()`` turns true: checked every
    step); the held-out scores every ``eval_every_steps`` steps and at the end, each handed to ``report``.

    ``resume``: a ``Snapshot`` to go on from (``network`` holding its weights): the run ends on the same weights and
    curve as one never stopped. ``save`` gets a ``Snapshot`` every ``checkpoint_every_steps`` steps (0: never), and
    once more where the run ends or stops."""
    if not len(targets.train):
        raise DatasetError("the dataset has no training positions (every game is held out)")
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    optimizer = torch.optim.AdamW(network.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    progress = Progress()
    if resume is not None:
        optimizer.load_state_dict(resume.optimizer)
        rng.bit_generator.state = resume.rng
        torch.set_rng_state(resume.torch_rng)
        progress = dataclasses.replace(resume.progress, curve=list(resume.progress.curve))
    network.train()
    step, curve, began = progress.step, progress.curve, time.perf_counter() - progress.seconds
    sums = np.array(progress.sums, dtype=np.float64)

    def snapshot() -> Snapshot:
        seconds = time.perf_counter() - began
        done = Progress(step, list(curve), (float(sums[0]), float(sums[1])), seconds)
        return Snapshot(done, optimizer.state_dict(), rng.bit_generator.state, torch.get_rng_state())

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
        checkpoint = bool(checkpoint_every_steps) and step % checkpoint_every_steps == 0
        if save is not None and checkpoint and not stopping and step < config.steps:  # the end is saved below
            save(snapshot())
    if save is not None:
        save(snapshot())
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


def resume_path(out: str | Path) -> Path:
    """The file that keeps a run's whole state beside its network ``OUT``: ``NAME.resume.pt`` for ``NAME.pt``."""
    out = Path(out)
    stem = out.name[: -len(".pt")] if out.name.endswith(".pt") else out.name
    return out.with_name(f"{stem}.resume.pt")


def run_settings(args: argparse.Namespace, config: PretrainConfig, positions: SolvedPositions) -> dict:
    """What a run's weights depend on besides its step count: a resumed run must match them all (``--steps`` may
    grow; ``--eval-every-steps`` and ``--checkpoint-every-steps`` only change when it reports and saves)."""
    manifest = json.dumps(positions.manifest, sort_keys=True, default=str).encode("utf-8")
    learner = {k: v for k, v in dataclasses.asdict(config).items() if k not in ("steps", "eval_every_steps")}
    return {
        "dataset_positions": len(positions),
        "dataset_manifest_sha256": hashlib.sha256(manifest).hexdigest(),
        "network": args.network,
        "hidden": args.hidden,
        "layers": args.layers,
        "tactics": not args.no_tactics,
        "learner": learner,
    }


def save_state(path: Path, network: AZModel, snapshot: Snapshot, settings: dict, steps: int) -> None:
    """The run's state in ``path`` (an az checkpoint with the rest as extra fields), atomically
    (``network_checkpoint.save_network``: the one write door), never through a link."""
    progress = snapshot.progress
    extra = {
        "pretrain_steps": progress.step,
        "pretrain_seed": settings["learner"]["seed"],
        "pretrain_total_steps": steps,
        "settings": json.dumps(settings, sort_keys=True),
        "curve": json.dumps(progress.curve),
        "sums": json.dumps(list(progress.sums)),
        "seconds": float(progress.seconds),
        "optimizer": snapshot.optimizer,
        "rng": json.dumps(snapshot.rng),
        "torch_rng": snapshot.torch_rng,
    }
    save_network(path, network, extra)


def load_state(path: Path) -> tuple[AZModel, Snapshot, dict, int]:
    """The network, ``Snapshot``, settings and total steps of a resume file; ``CheckpointError`` names the file."""
    network, payload = load_network(path)
    try:
        settings = json.loads(payload["settings"])
        progress = Progress(
            int(payload["pretrain_steps"]),
            list(json.loads(payload["curve"])),
            tuple(float(x) for x in json.loads(payload["sums"])),
            float(payload["seconds"]),
        )
        snapshot = Snapshot(progress, payload["optimizer"], json.loads(payload["rng"]), payload["torch_rng"])
        total = int(payload["pretrain_total_steps"])
        if not isinstance(settings, dict) or len(progress.sums) != 2 or not isinstance(snapshot.optimizer, dict):
            raise ValueError("malformed fields")
    except (KeyError, ValueError, TypeError) as err:
        raise CheckpointError(f"{path} is not a pre-training resume file ({type(err).__name__}: {err})") from None
    return network, snapshot, settings, total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.pretrain", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="a folder written by trinity dataset build")
    parser.add_argument("out", help="the network file to write (an az checkpoint: az:OUT plays it)")
    parser.add_argument("--network", default="board", choices=sorted(NETWORKS), help="the architecture (board)")
    parser.add_argument("--hidden", type=whole_number(1, MAX_HIDDEN), default=128)
    parser.add_argument("--layers", type=whole_number(1, MAX_LAYERS), default=2)
    parser.add_argument("--no-tactics", action="store_true", help="without the tactical features")
    parser.add_argument("--steps", type=positive_int, default=PretrainConfig.steps, help="learner steps")
    parser.add_argument("--eval-every-steps", type=positive_int, default=PretrainConfig.eval_every_steps)
    parser.add_argument(
        "--checkpoint-every-steps",
        type=positive_int,
        default=500,
        help="write the run's state to OUT's resume file (NAME.resume.pt) every N steps (500)",
    )
    parser.add_argument(
        "--resume", action="store_true", help="go on from OUT's resume file (the same dataset and settings)"
    )
    parser.add_argument("--max-positions", type=positive_int, default=2_000_000, help="refuse a larger dataset")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--json", default=None, help="also write the held-out curve and the settings to this file")
    run_command(parser, _run, argv)


def _run(args: argparse.Namespace) -> None:
    problem = network_size_problem(args.hidden, args.layers, args.network)  # the trainers' and loaders' one table
    if problem is not None:
        raise ArgumentError(f"--hidden {args.hidden} --layers {args.layers}: {problem}")
    config = PretrainConfig(steps=args.steps, eval_every_steps=args.eval_every_steps, seed=args.seed)
    state = resume_path(args.out)
    for option, path in (("OUT", args.out), ("its resume file", str(state)), ("--json", args.json)):
        if path:
            prepare_file(path, option, ArgumentError)  # writable, before any step
    resumed = None
    if args.resume and state.exists():
        resumed = load_state(state)
        done = resumed[1].progress.step
        if done >= config.steps:  # OUT written again: a run killed between its two last writes left it behind
            save_network(args.out, resumed[0], {"pretrain_steps": done, "pretrain_seed": config.seed})
            raise RunFinished(
                f"{state} already holds {done:,} steps (--steps {config.steps:,}): a larger --steps goes on"
            )
    elif not args.resume and state.exists():
        _network, unfinished, _settings, total = load_state(state)
        if unfinished.progress.step < total:
            raise ArgumentError(
                f"{state} holds an unfinished pre-training ({unfinished.progress.step:,} of {total:,} steps): "
                "add --resume to go on, or delete it to start again"
            )
    try:
        positions = load(args.dataset, max_positions=args.max_positions)
        targets = Targets.from_positions(positions, seed=args.seed)
        if not len(targets.train):
            raise DatasetError(f"{args.dataset}: no training positions (every game is held out)")
    except DatasetError as error:
        raise ArgumentError(one_line(error)) from None
    settings = run_settings(args, config, positions)
    if resumed is not None:
        network, snapshot, recorded, _ = resumed
        changed = sorted(k for k in settings.keys() | recorded.keys() if settings.get(k) != recorded.get(k))
        if changed:
            raise ArgumentError(f"{state} was made with other settings ({', '.join(changed)}): --resume needs the same")
    else:
        torch.manual_seed(config.seed)  # the first weights too: a seed gives one run
        network, snapshot = make_network(args.network, args.hidden, args.layers, not args.no_tactics), None
    going_on = f" from step {snapshot.progress.step:,}" if snapshot is not None else ""
    print(
        f"pre-training a {args.network} {args.hidden}x{args.layers} network on {len(targets.train):,} solved positions "
        f"({len(targets.held):,} held out) for {config.steps:,} steps of {config.batch_size}{going_on}; "
        f"writing {args.out}",
        flush=True,
    )
    stopper, saved = GracefulStop(), []

    def save(done: Snapshot) -> None:
        save_state(state, network, done, settings, config.steps)
        saved[:] = [done.progress.step]

    with stopper.installed(), torch_threads(1):
        curve = pretrain(
            network,
            targets,
            config,
            stop=lambda: stopper.requested,
            report=lambda point: print(_line(point, config.steps), flush=True),
            resume=snapshot,
            save=save,
            checkpoint_every_steps=args.checkpoint_every_steps,
        )
    steps = saved[-1]  # pretrain saves once more where it ends or stops
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
        raise TrainingInterrupted(f"the network after {steps:,} steps is in {args.out}; --resume goes on from {state}")
    print(f"wrote {args.out} after {steps:,} steps", flush=True)


if __name__ == "__main__":
    main()

"""The JAX self-play trainer's bar, timed: the wall time until ``jax-quick`` beats random and greedy.

Trains ``configs/train/jax-quick.yaml`` (``training.jax_ppo``) with an evaluation every ``--eval-every`` steps
(400 seat-swapped games against the jitted ``random`` and ``greedy``, in JAX) and stops at the first one that
clears the config's targets (90% and 60%, draws counting half), or at the budget. It prints and writes:
the wall time from the start (the compile, the training and the evaluations so far) to that evaluation, the
steps and self-play games then, the win shares with their 95% Wilson intervals, the compile time, and the
self-play rate (games and learner steps per second of training, the compile and evaluations apart). The load
averages before and after are kept: on a shared machine every figure is low in proportion. The policy is
written to ``--run`` (the benchmark's own run folder, replaced each time) as ``policy.onnx`` for
``trinity benchmark --agent onnx:RUN/policy.onnx --protocol quick``.

Usage: python -m benchmarks.jax_selfplay [--json docs/jax/selfplay.json] [--run runs/jax-selfplay]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
from pathlib import Path

import jax

from benchmarks import load_average, write_result
from training.jax_ppo import JaxPPOConfig, train
from trinity_env.evaluation.ratings import SHARE_KEYS, Share


def measure(config: JaxPPOConfig, run: Path) -> dict:
    summary = train(config, run, log=lambda line: print(line, flush=True), overwrite=True)  # a run of its own
    reached = summary["reached_target"]
    device = jax.devices()[0]
    return {
        "config": summary["config"],
        "reached_target": reached is not None,
        "wall_s_to_target": reached["wall_s"] if reached else None,
        "steps_to_target": reached["steps"] if reached else None,
        "games_to_target": reached["games"] if reached else None,
        "at_target": {name: reached[name] for name in ("random", "greedy")} if reached else None,
        "last": summary["final"],
        "steps": summary["steps"],
        "train_s": summary["train_s"],
        "compile_s": summary["compile_s"],
        "evaluating_s": summary["evaluating_s"],
        "selfplay_games_per_s": summary["games_per_s"],
        "learner_steps_per_s": summary["steps_per_s"],
        "history": summary["history"],
        "device": f"{device.platform}: {device.device_kind}",
        "jax": jax.__version__,
        "cpu_count": os.cpu_count(),
        "machine": platform.machine(),
    }


def _share(result: dict) -> str:
    return Share.from_json({key: result[key] for key in SHARE_KEYS}).text()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="jax-quick", help="a name in configs/train/ or a YAML path")
    parser.add_argument("--eval-every", type=int, default=100_000, help="learner steps between two evaluations")
    parser.add_argument("--run", type=Path, default=Path("runs/jax-selfplay"), help="where the policy is written")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.eval_every < 1:
        parser.error("--eval-every must be at least 1")
    config = JaxPPOConfig.load(args.config)
    config = dataclasses.replace(config, eval_every_steps=args.eval_every, stop_at_target=True)
    before = load_average()
    print(f"jax-quick to its bar on {jax.devices()[0].device_kind}, {os.cpu_count()} cores; load {before}")
    result = measure(config, args.run)
    result["load_average_before"], result["load_average_after"] = before, load_average()
    if result["reached_target"]:
        shares = "; ".join(f"vs {n} {_share(r)}" for n, r in result["at_target"].items())
        print(
            f"bar reached after {result['wall_s_to_target']:.1f} s ({result['steps_to_target']:,} steps, "
            f"{result['games_to_target']:,} games): {shares}"
        )
    else:
        shares = "; ".join(f"vs {n} {_share(r)}" for n, r in result["last"].items())
        print(f"bar not reached in {result['steps']:,} steps: {shares}")
    print(
        f"compile {result['compile_s']:.1f} s; self-play {result['selfplay_games_per_s']:.0f} games/s, "
        f"{result['learner_steps_per_s']:.0f} learner steps/s; load average before {before}, "
        f"after {result['load_average_after']}"
    )
    write_result(args.json, result)


if __name__ == "__main__":
    main()

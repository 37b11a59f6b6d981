"""Environment steps per second of the two trainers, measured in the same run.

Both train on the quick config's rules (dealt hands) with evaluations pushed past the end,
so the figure is learning throughput: ``fast_ppo`` (batched engine, 256 games) against
``selfplay_ppo`` (sb3-contrib MaskablePPO on the single-agent env). The target is 10x.

Usage: python -m benchmarks.trainers [--fast-steps N] [--sb3-steps M]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from training import fast_ppo, selfplay_ppo
from training.config import TrainConfig


def rate(trainer, config: TrainConfig) -> float:
    with tempfile.TemporaryDirectory() as run:
        start = time.perf_counter()
        trainer.train(config, Path(run), progress=False)
        return config.total_steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast-steps", type=int, default=262_144)
    parser.add_argument("--sb3-steps", type=int, default=16_384)
    args = parser.parse_args()
    base = TrainConfig.load("quick").to_dict() | {
        "max_minutes": 0.0,
        "eval_games": 2,
        "eval_opponents": ["random"],
        "eval_endgames": False,
        "tensorboard": False,
    }
    # the same MLP in both; SB3's policy has no tactical features, so the ratio compares like with like
    fast = TrainConfig.from_dict(base | {"total_steps": args.fast_steps, "eval_every_steps": 10**9, "tactics": False})
    tactics = TrainConfig.from_dict(base | {"total_steps": args.fast_steps, "eval_every_steps": 10**9, "tactics": True})
    sb3 = TrainConfig.from_dict(base | {"total_steps": args.sb3_steps, "eval_every_steps": 10**9, "tactics": False})
    fast_rate = rate(fast_ppo, fast)
    tactics_rate = rate(fast_ppo, tactics)
    sb3_rate = rate(selfplay_ppo, sb3)
    print("training throughput, learner steps per second (evaluations excluded but a final 2-game one)")
    print(f"  fast_ppo (batched engine)           : {fast_rate:>9,.0f}")
    print(f"  fast_ppo with tactical features     : {tactics_rate:>9,.0f}")
    print(f"  selfplay_ppo (MaskablePPO/SB3)      : {sb3_rate:>9,.0f}")
    print(f"  ratio fast_ppo / selfplay_ppo (>=10): {fast_rate / sb3_rate:>9.1f}")


if __name__ == "__main__":
    main()

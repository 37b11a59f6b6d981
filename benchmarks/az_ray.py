"""AlphaZero on Ray: self-play games per second with 1, 2, 4... actors, the learner's share, and a 64-core estimate.

For each actor count, a local Ray cluster plays ``--iterations`` iterations of the config's
``games_per_iteration`` games with one fixed (untrained) network, as the trainer does; the learner's
time for an iteration (its ``sample_reuse`` minibatch steps on those positions) is measured once in this
process. An iteration of the synchronous trainer takes self-play plus learning, so its games per second
are ``games / (self-play + learning)`` and the learner is busy ``learning / (self-play + learning)`` of it
(the rest it waits for games). From the measured per-actor rate and learning time, the same sums give the
figure a 64-core cluster would reach (63 self-play actors and the learner). Needs the rllib extra (Ray).

Usage: python -m benchmarks.az_ray [--config az-quick] [--actors 1 2 4] [--iterations 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks import load_average


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="az-quick")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per actor count")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    import ray

    from training.alphazero_ray import RaySelfPlay
    from training.az_config import AZConfig
    from training.az_learner import learn, make_optimizer
    from training.az_selfplay import LocalSelfPlay
    from training.replay_buffer import ReplayBuffer
    from trinity_env.agents.az import make_network

    config = AZConfig.load(args.config)
    torch.set_num_threads(config.torch_threads)
    network = make_network(config.network, config.hidden, config.layers, config.tactics).eval()
    games = config.games_per_iteration

    played = LocalSelfPlay(config).play(network, 0, np.random.default_rng(0), None, collect=False)
    replay = ReplayBuffer(config.replay_size)
    replay.add(played.observations, played.masks, played.policies, played.values)
    steps = max(1, round(config.sample_reuse * len(played.values) / config.batch_size))
    optimizer = make_optimizer(network, config)
    learn(network, optimizer, replay, config, np.random.default_rng(0), 2)  # warm-up
    started = time.perf_counter()
    learn(network, optimizer, replay, config, np.random.default_rng(0), steps)
    learning = time.perf_counter() - started

    load = load_average()
    print(
        f"config {args.config}: {games} games an iteration, {steps} learner steps ({learning:.2f} s) an iteration; "
        f"load average {load} on {os.cpu_count()} cores"
    )
    rows = []
    ray.init(
        num_cpus=max(max(args.actors), os.cpu_count() or 1),
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
    )
    try:
        for actors in args.actors:
            selfplay = RaySelfPlay(config, actors)
            rng = np.random.default_rng(0)
            selfplay.play(network, 0, rng, None, collect=False)  # warm-up: actors start, compile, load
            walls, busy = [], []
            for k in range(args.iterations):
                selfplay.play(network, k + 1, rng, None, collect=False)
                walls.append(selfplay.wall_seconds)
                busy.extend(selfplay.actor_seconds)
            selfplay.close()
            wall = statistics.median(walls)
            per_actor = games / actors / statistics.median(busy)
            row = {
                "actors": actors,
                "selfplay_seconds": wall,
                "games_per_second": games / (wall + learning),
                "selfplay_games_per_second": games / wall,
                "per_actor_games_per_second": per_actor,
                "learner_utilisation": learning / (wall + learning),
            }
            rows.append(row)
            print(
                f"{actors} actor(s): self-play {wall:.2f} s an iteration, {row['games_per_second']:.1f} games/s "
                f"with the learner ({row['selfplay_games_per_second']:.1f} self-play alone), "
                f"{per_actor:.1f} games/s per actor, learner busy {row['learner_utilisation']:.0%}"
            )
    finally:
        ray.shutdown()
    base = rows[0]["games_per_second"]
    for row in rows[1:]:
        print(f"{row['actors']} actors / {rows[0]['actors']}: {row['games_per_second'] / base:.2f}x games/s")
    rate = statistics.median(row["per_actor_games_per_second"] for row in rows)
    cluster = games / (games / (63 * rate) + learning)
    print(
        f"on paper, 64 cores (63 actors at {rate:.1f} games/s each, this learner): {cluster:.0f} games/s, "
        f"learner busy {learning / (games / (63 * rate) + learning):.0%}; the learner then bounds the run at "
        f"{games / learning:.0f} games/s: a larger games_per_iteration or a faster learner (a GPU) raises it"
    )
    if args.json:
        figures = {
            "config": args.config,
            "learning_seconds": learning,
            "load": load,
            "rows": rows,
            "cluster_64_games_per_second": cluster,
        }
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()

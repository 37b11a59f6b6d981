"""BenchMARL's MAPPO (or IQL) on Trinity Towers, through BenchMARL's own ``Experiment``, with no glue.

``trinity_env.integrations.benchmarl`` hands BenchMARL the task (the AEC env in TorchRL's wrapper, float32
observations, masks on), creates the save folder, writes a line of player_0's results after each collection
(BenchMARL's bar shows the zero-sum mean of both players' returns: 0) and exports an actor to ONNX.

After training, the two groups' policies (one per seat) play ``--games`` games against each other; each game must
end by the rules with every move inside its mask (an illegal move would end it early, with ``termination_code`` 0).
``--export policy.onnx`` writes the ``player_0`` group's actor as an ONNX file every evaluation tool takes, in
either seat: ``trinity benchmark --agent onnx:policy.onnx`` (the ``onnx`` extra in this venv too).

Needs BenchMARL 1.5, which pins ``torchrl<0.12``: a venv of its own (``make test-benchmarl`` builds
``.venv-benchmarl`` from the ``benchmarl`` extra).

Usage: python examples/benchmarl_mappo.py [--algorithm mappo|iql] [--iterations N] [--frames F] [--games G] [--seed S]
       [--draft pick|dealt] [--folder DIR] [--export PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import warnings

from trinity_env.integrations.benchmarl import export_actor, illegal_moves, make_experiment, make_task, play_games


def main(argv: list[str] | None = None) -> tuple:
    """Train, play, export (``--export``); the experiment and the games' rollouts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", choices=("mappo", "iql"), default="mappo")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--frames", type=int, default=64, help="env steps (both seats' moves) per iteration")
    parser.add_argument("--games", type=int, default=2, help="games of the trained policies at the end")
    parser.add_argument("--draft", choices=("pick", "dealt"), default="dealt")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", default=None, help="BenchMARL's save folder, created (default: a temporary one)")
    parser.add_argument("--export", default=None, metavar="PATH", help="write player_0's actor to this ONNX file")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's and BenchMARL's deprecations
        experiment = make_experiment(
            args.algorithm,
            folder=args.folder or tempfile.mkdtemp(),
            iterations=args.iterations,
            frames=args.frames,
            seed=args.seed,
            task=make_task(draft=args.draft),
        )
        experiment.run()
        rollouts = play_games(experiment, args.games, seed=args.seed + 1)
    if args.export:
        print(f"wrote {export_actor(experiment, args.export)}")
    for number, rollout in enumerate(rollouts):
        code = int(rollout["next", "player_0", "info", "termination_code"][-1].item())
        winner = int(rollout["next", "player_0", "info", "winner"][-1].item())
        print(
            f"game {number}: {len(rollout)} moves, termination_code {code}, winner {winner}, "
            f"illegal moves {illegal_moves(rollout)}"
        )
    return experiment, rollouts


if __name__ == "__main__":
    main()

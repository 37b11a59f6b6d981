"""``trinity play``: a person plays an agent in the terminal."""

from __future__ import annotations

import argparse

from trinity_env.arguments import config_path, output_path
from trinity_env.cli.common import add_allow_code
from trinity_env.cli.options import add_seed


def add(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="play an agent in the terminal")
    play.add_argument(
        "--opponent", default="greedy", help="agent spec (default greedy; a checkpoint or run folder by path: ./x.pt)"
    )
    play.add_argument("--seat", default="random", choices=["0", "1", "random"], help="your seat")
    add_seed(play, None)
    play.add_argument(
        "--config", type=config_path("rules"), default=None, help="a rules config (name in configs/rules/ or YAML path)"
    )
    play.add_argument(
        "--save", type=output_path, default=None, help="write the game as a replay to this file (for trinity review)"
    )
    add_allow_code(play)
    play.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    from trinity_env.agents.spec import AgentSpec
    from trinity_env.play import play_in_terminal

    opponent = AgentSpec.parse(args.opponent, allow_code=args.allow_code)
    play_in_terminal(opponent, seat=args.seat, seed=args.seed, config=args.config, save=args.save)

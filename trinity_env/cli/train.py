"""``trinity train``: train an agent by self-play from a shipped config or a YAML file (the train extra; the
trainers live in ``training/``, whose command lines this one dispatches to). The config names its trainer in its
``trainer:`` field (``ppo``, ``alphazero``, ``rllib`` or ``jax``; ``training.config.ConfigFile.trainer``): a config
that names none is refused in one line naming the field and the choices, never guessed from its file's name. The file
is read once, its typed config built once and handed to the trainer's ``run`` with a ``RunRequest``: no command line
is rebuilt for the trainer to parse again."""

from __future__ import annotations

import argparse
from pathlib import Path

from trinity_env.arguments import config_path, folder_path, positive_int
from trinity_env.cli.common import trainers
from trinity_env.cli.options import add_workers, renamed
from trinity_env.core import TrinityError
from trinity_env.core.errors import ArgumentError
from trinity_env.core.limits import check_processes
from trinity_env.core.shipped import names_path, resolve


def add(commands: argparse._SubParsersAction) -> None:
    train = commands.add_parser(
        "train", help="train an agent by self-play from a shipped config or a YAML file (needs the train extra)"
    )
    train.add_argument(
        "config",
        nargs="?",
        type=config_path("training"),
        default="quick",
        help="quick, standard, az-quick, az-standard, rllib, jax-quick or a path",
    )
    train.add_argument(
        "--run", dest="run_folder", type=folder_path, default=None, help="the run folder (default runs/CONFIG)"
    )
    again = train.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="continue the run in RUN")
    again.add_argument("--overwrite", action="store_true", help="delete the run in RUN and start again")
    train.add_argument(
        "--total-steps",
        type=positive_int,
        default=None,
        metavar="N",
        help="PPO: learner steps to train for, over the config's (with --resume: extend the run to N)",
    )
    train.add_argument(
        "--total-games",
        type=positive_int,
        default=None,
        metavar="N",
        help="AlphaZero: self-play games to train for, over the config's (with --resume: extend the run to N)",
    )
    train.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="AlphaZero on Ray: self-play and labels on actors of a cluster ('local', auto, HOST:PORT; docs/ray.md)",
    )
    add_workers(train, "AlphaZero on Ray: self-play actors, on the cluster", shown=1, cluster=True)
    renamed(train, "--actors", instead="--workers N")
    renamed(train, "--trainer", instead="the config's trainer: field (ppo, alphazero, rllib or jax)")
    train.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    import importlib

    if not names_path(args.config):  # a bad name is refused, with the shipped ones, before the trainers load
        resolve(args.config, "train", ArgumentError)
    package = trainers()
    name = Path(args.config).stem if args.config.endswith((".yaml", ".yml")) else args.config
    file = importlib.import_module(f"{package.__name__}.config").read_config(args.config, ArgumentError)
    trainer = file.trainer(ArgumentError)
    modules = {"alphazero": "alphazero", "rllib": "rllib_selfplay", "ppo": "fast_ppo", "jax": "jax_ppo"}
    config_types = {"alphazero": "AZConfig", "rllib": "RLlibConfig", "ppo": "TrainConfig", "jax": "JaxPPOConfig"}
    budgets = {"ppo": "--total-steps", "alphazero": "--total-games", "jax": "--total-steps"}  # rllib: its iterations
    for option, value in (("--total-steps", args.total_steps), ("--total-games", args.total_games)):
        if value is not None and budgets.get(trainer) != option:
            takes = f"; its budget is {budgets[trainer]} N" if trainer in budgets else ""
            raise ArgumentError(f"{option} does not apply to the {trainer} trainer{takes}")
    on_ray = args.ray is not None or args.workers is not None
    if on_ray and trainer != "alphazero":
        raise ArgumentError(f"--ray and --workers are for the alphazero trainer (the {trainer} trainer: docs/rllib.md)")
    if on_ray:
        modules["alphazero"] = "alphazero_ray"
        if args.workers is not None and args.ray in (None, "local"):  # a local cluster: each actor a process here
            check_processes("--workers", args.workers, ArgumentError)
    extra = "rllib" if trainer == "rllib" or on_ray else "jax" if trainer == "jax" else "train"
    try:
        module = importlib.import_module(f"{package.__name__}.{modules[trainer]}")
        if trainer == "rllib" or on_ray:
            importlib.import_module("ray.rllib" if trainer == "rllib" else "ray")
    except ModuleNotFoundError as err:
        raise TrinityError(f"training needs the {extra} extra (pip install 'trinity-towers[{extra}]'): {err}") from None
    session = importlib.import_module(f"{package.__name__}.session")
    request = session.RunRequest(args.config, Path(args.run_folder or f"runs/{name}"), args.resume, args.overwrite)
    budget = session.command_line_budget(args)  # trinity train's --total-steps/--total-games, as the trainers read them

    def body() -> None:
        config = getattr(module, config_types[trainer]).load(file, budget=budget)
        if on_ray:
            module.run(config, request, args.ray or "local", args.workers or 1)
        else:
            module.run(config, request)

    session.run_trainer("trinity train", body)  # the trainer's messages start with this command's name

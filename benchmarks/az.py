"""Network-guided search speed: simulations per second of the batched search, and self-play games per second.

    python -m benchmarks.az [--games 256] [--simulations 32] [--checkpoint trinity_env/agents/data/az-standard.pt]
                              [--json docs/alphazero/benchmark.json]
    python -m benchmarks.az --endgames az-standard az-standard:sims=0 --json docs/alphazero/endgames.json
    python -m benchmarks.az --labelling 6 8 10     # one az-quick iteration: self-play vs the workers' labelling
    python -m benchmarks.az --network board --hidden 64 --layers 2   # a fresh network of that architecture
    python -m benchmarks.az --reference --json docs/alphazero/evaluators.json   # the fast evaluation vs torch's

A "simulation" is one descent of one tree, one leaf evaluated by the network (in a batched
forward pass for all trees) and one backup. It runs on one thread (torch and numba on one
thread each) and on two (both on two threads), and prints the load average, since the
machine may be shared: a loaded machine gives lower figures.

``--reference`` times the same search (one thread) with the board network's fast evaluation
(``trinity_env.agents.networks.board_fast``) in float32 (``fast``), with bfloat16 round products where this processor
multiplies bfloat16 natively and with int8 ones where it has VNNI and onnxruntime is installed, and with the
network's torch forward pass (the reference), alternately in the same run, best of ``--repeats``, in wall-clock and
in CPU time (this process's: on a shared machine the CPU time counts only the time the search had a core), and
prints the ratios with the load average and what ``precision: fastest`` picks here (``search_precision``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import torch

from benchmarks import load_average
from training.az_config import AZConfig
from training.az_selfplay import make_search, play_games
from trinity_env.agents.az import (
    NETWORKS,
    AZModel,
    AZNetwork,
    evaluator,
    forward_evaluator,
    load_network,
    make_network,
)
from trinity_env.agents.networks.board_network import BoardNetwork
from trinity_env.agents.networks.precision import NATIVE_BFLOAT16, NATIVE_INT8, installed, search_precision
from trinity_env.fast.games import FastGames
from trinity_env.search.az import BatchedSearch

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "trinity_env" / "agents" / "data" / "az-standard.pt"
BACKENDS = {"bfloat16": ("torch",), "int8": ("onnxruntime", "onnx")}
"""The library each narrower precision's products run on."""


def simulations_per_second(network: AZModel, games: int, simulations: int, threads: int, repeats: int) -> float:
    """Simulations per second of ``BatchedSearch`` over ``games`` positions from dealt games."""
    torch.set_num_threads(threads)
    numba.set_num_threads(threads)
    positions = FastGames(games, seed=1, draft="dealt")
    for _ in range(4):  # a few placements in, so that positions differ
        positions.step(positions.random_actions(np.arange(games)))
    search = BatchedSearch(games, simulations, threads=threads)
    evaluate = evaluator(network)
    search.run(positions.batch, evaluate, np.random.default_rng(0))  # warm-up (and compilation)
    start = time.perf_counter()
    for k in range(repeats):
        search.run(positions.batch, evaluate, np.random.default_rng(k), gumbel_scale=1.0)
    return repeats * games * simulations / (time.perf_counter() - start)


def evaluator_speeds(network: AZModel, games: int, simulations: int, repeats: int) -> dict:
    """Simulations per second of one-thread ``BatchedSearch`` with the network's forward pass (``reference``), with
    the board network's fast evaluation in float32 (``fast``; the MLP's: the search's evaluation) and with the
    narrower products this processor multiplies natively (by its flags: ``bfloat16``, ``int8``; their libraries),
    alternately on the same positions: the best of ``repeats`` runs each, in wall-clock and CPU time, and the
    ratios to the reference; ``search_precision``: what ``precision: fastest`` (an ``AZConfig``'s, ``evaluator``'s)
    picks here."""
    torch.set_num_threads(1)  # numba's threads left unstarted: its threading layer slows torch's
    positions = FastGames(games, seed=1, draft="dealt")
    for _ in range(4):
        positions.step(positions.random_actions(np.arange(games)))
    search = BatchedSearch(games, simulations)
    contenders = {"reference": forward_evaluator(network), "fast": evaluator(network)}
    board = isinstance(network, BoardNetwork)
    flags = _processor_flags()
    if board:
        for precision, native in (("bfloat16", NATIVE_BFLOAT16), ("int8", NATIVE_INT8)):
            if any(flag in native for flag in flags) and all(map(installed, BACKENDS[precision])):
                contenders[precision] = evaluator(network, precision)
    precision = search_precision() if board else "float32"  # what a config's precision: fastest picks here
    for evaluate in contenders.values():  # warm-up (and compilation)
        search.run(positions.batch, evaluate, np.random.default_rng(0))
    wall = dict.fromkeys(contenders, float("inf"))
    cpu = dict.fromkeys(contenders, float("inf"))
    for k in range(repeats):
        for name, evaluate in contenders.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            search.run(positions.batch, evaluate, np.random.default_rng(k), gumbel_scale=1.0)
            wall[name] = min(wall[name], time.perf_counter() - start)
            cpu[name] = min(cpu[name], time.process_time() - start_cpu)
    figures: dict = {"games": games, "simulations": simulations, "repeats": repeats, "search_precision": precision}
    for name in contenders:
        figures[f"{name}_simulations_per_second"] = round(games * simulations / wall[name])
        figures[f"{name}_simulations_per_cpu_second"] = round(games * simulations / cpu[name])
    figures["ratio"] = round(wall["reference"] / wall["fast"], 2)
    figures["cpu_ratio"] = round(cpu["reference"] / cpu["fast"], 2)
    for name in ("bfloat16", "int8"):
        if name in contenders:
            figures[f"{name}_ratio"] = round(wall["reference"] / wall[name], 2)
            figures[f"{name}_cpu_ratio"] = round(cpu["reference"] / cpu[name], 2)
    return figures


def _processor_flags() -> list[str]:
    """This processor's flags (Linux's ``/proc/cpuinfo``; none elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return next((line.split(":", 1)[1].split() for line in info if line.startswith("flags")), [])
    except OSError:
        return []


def self_play_games_per_second(network: AZModel, games: int, simulations: int, threads: int) -> float:
    """Whole self-play games per second (the trainer's ``play_games``, dealt hands and drafts as configured)."""
    torch.set_num_threads(threads)
    numba.set_num_threads(threads)
    config = AZConfig.from_dict({"games_per_iteration": games, "simulations": simulations, "solver_empty": 6})
    search = make_search(config)
    fast = FastGames(games, draft_share=config.draft_share, config=config.env)
    rng = np.random.default_rng(0)
    from trinity_env.search.solver import Solver

    solver = Solver()
    fast.reset(seed=0)
    play_games(network, config, search, fast, rng, solver)  # warm-up
    fast.reset(seed=1)
    start = time.perf_counter()
    played = play_games(network, config, search, fast, rng, solver)
    return played.games / (time.perf_counter() - start)


def endgame_scores(specs: list[str]) -> dict[str, float]:
    """The share of the endgame suite's won positions where each agent finds a winning move (printed too)."""
    from trinity_env.agents import make
    from trinity_env.evaluation.endgames import DEFAULT_SUITE, load_suite, score_agent

    suite = load_suite(DEFAULT_SUITE)
    scores = {}
    for spec in specs:
        scores[spec] = score_agent(make(spec), suite)
        print(f"  {spec:<24} finds a winning move in {scores[spec]:6.1%} of the endgame suite")
    return scores


def labelling_seconds(solver_empty: int, network: AZModel) -> dict:
    """One ``az-quick`` iteration's self-play (its positions kept for the workers) and one worker labelling them:
    what ``docs/alphazero.md`` says the workers cost, in seconds of wall clock on this machine."""
    from training.labelling import Labeller

    config = AZConfig.load("az-quick", solver_empty=solver_empty, label_workers=1)
    torch.set_num_threads(config.torch_threads)
    games = FastGames(config.games_per_iteration, draft_share=config.draft_share, config=config.env)
    games.reset(seed=0)
    start = time.perf_counter()
    played = play_games(network, config, make_search(config), games, np.random.default_rng(0), None, collect=True)
    self_play = time.perf_counter() - start
    with Labeller(1) as labeller:
        start = time.perf_counter()
        labeller.submit(played.label_positions, played.label_games)
        labeller.collect()
        labelling = time.perf_counter() - start
    return {
        "solver_empty": solver_empty,
        "positions": int(played.to_label.size),
        "self_play_seconds": self_play,
        "labelling_seconds": labelling,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=256, help="trees searched in lockstep")
    parser.add_argument("--simulations", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--checkpoint", default=str(SHIPPED) if SHIPPED.is_file() else None)
    parser.add_argument("--network", choices=list(NETWORKS), help="time a fresh network of this architecture instead")
    parser.add_argument("--hidden", type=int, default=256, help="with --network: its width")
    parser.add_argument("--layers", type=int, default=2, help="with --network: its layers")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--endgames", nargs="+", metavar="SPEC", help="score these agents on the endgame suite")
    parser.add_argument(
        "--labelling",
        nargs="+",
        type=int,
        metavar="EMPTY",
        help="time one az-quick iteration's labelling by one worker at these solver_empty values",
    )
    parser.add_argument(
        "--reference", action="store_true", help="time the search with the fast evaluation against torch's (one thread)"
    )
    args = parser.parse_args(argv)
    if args.reference and os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        # numpy's BLAS starts its threads when numpy loads: one thread means a process started with it so
        one_thread = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        command = [sys.executable, "-m", "benchmarks.az", *(sys.argv[1:] if argv is None else argv)]
        raise SystemExit(subprocess.run(command, env=one_thread, check=False).returncode)
    if args.reference:
        network = load_network(args.checkpoint)[0]
        before = load_average()
        print(f"network: {network.architecture}, hidden {network.hidden} x {network.layers}, tactics {network.tactics}")
        figures = evaluator_speeds(network, args.games, args.simulations, args.repeats)
        figures |= {"load_before": round(os.getloadavg()[0], 2), "cpu_count": os.cpu_count()}
        print(
            f"batched search, {args.games} trees x {args.simulations} simulations, one thread, best of {args.repeats}:"
        )
        print(f"  precision 'fastest' picks here: {figures['search_precision']} (int8 where the CPU has VNNI)")
        names = [
            name for name in ("reference", "fast", "bfloat16", "int8") if f"{name}_simulations_per_second" in figures
        ]
        for name in names:
            print(
                f"  {name:<9} {figures[f'{name}_simulations_per_second']:>7,} simulations/s wall-clock, "
                f"{figures[f'{name}_simulations_per_cpu_second']:>7,} per CPU second"
            )
        print(f"  fast / reference: {figures['ratio']:.2f}x wall-clock, {figures['cpu_ratio']:.2f}x CPU time")
        for name in ("bfloat16", "int8"):
            if name in names:
                print(
                    f"  {name} / reference: {figures[f'{name}_ratio']:.2f}x wall-clock, "
                    f"{figures[f'{name}_cpu_ratio']:.2f}x CPU time"
                )
        print(f"load average before: {before}; after: {load_average()} on {os.cpu_count()} cores")
        figures["load_before"], figures["load_after"] = float(before.split()[0]), round(os.getloadavg()[0], 2)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        return
    if args.labelling:
        network = AZNetwork()  # untrained, as a run starts
        print(f"load average {load_average()} on {os.cpu_count()} cores")
        for empty in args.labelling:
            row = labelling_seconds(empty, network)
            print(
                f"solver_empty {empty}: self-play {row['self_play_seconds']:.1f} s, {row['positions']:,} positions "
                f"labelled by one worker in {row['labelling_seconds']:.1f} s"
            )
        return
    if args.endgames:
        figures = endgame_scores(args.endgames)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        return
    if args.network:
        torch.manual_seed(0)
        network = make_network(args.network, args.hidden, args.layers, True).eval()
    else:
        network = load_network(args.checkpoint)[0] if args.checkpoint else AZNetwork()
    load = load_average()
    print(
        f"network: {network.architecture}, hidden {network.hidden} x {network.layers}, tactics {network.tactics}; "
        f"load average before: {load} on {os.cpu_count()} cores"
    )
    figures: dict = {"games": args.games, "simulations": args.simulations, "load_before": os.getloadavg()[0]}
    for threads in (1, 2):
        rate = simulations_per_second(network, args.games, args.simulations, threads, args.repeats)
        figures[f"simulations_per_second_{threads}_thread"] = round(rate)
        print(
            f"batched search, {args.games} trees x {args.simulations} simulations, {threads} thread(s): "
            f"{rate:,.0f} simulations/s"
        )
    for threads in (1, 2):
        rate = self_play_games_per_second(network, args.games, args.simulations, threads)
        figures[f"self_play_games_per_second_{threads}_thread"] = round(rate, 1)
        print(
            f"self-play, {args.games} games in lockstep, {args.simulations} simulations a move, "
            f"{threads} thread(s): {rate:,.1f} games/s"
        )
    figures["load_after"] = os.getloadavg()[0]
    print(f"load average after: {load_average()}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

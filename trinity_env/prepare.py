"""Compile the engine once, family by family: what a fresh install's first command would otherwise wait for.

numba compiles a kernel the first time it runs and caches the machine code (beside its module, or
under ``NUMBA_CACHE_DIR``), so every later process loads it in a fraction of a second. On a fresh
install the first run of each family pays the compile: the fast engine, the tactical features,
the baselines, MCTS, the AlphaZero search and the exact solver. ``trinity prepare`` runs each on
a tiny input and says what each took; ``make test`` runs it before the suite so that its parallel
workers load a warm cache instead of each compiling the same kernels; ``trinity serve`` runs it in
the background at start. Running it again costs about a second (the cache loads).

The commands that use a family call ``warm`` first: silent when the cache is warm, and on a cold
one a line saying what is being prepared and, when it is done, how long it took, instead of a
silent wait before their first move.
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np

__all__ = ["FAMILIES", "families_for", "prepare", "warm"]


def _engine() -> None:
    from trinity_env.fast.games import FastGames

    games = FastGames(4, seed=0, draft="dealt")
    live = np.arange(4)
    while live.size:
        step = games.step(games.random_actions(live), games=live)
        live = live[~step.terminated[live]]
    games.observations(), games.masks()


def _vector_env() -> None:
    from trinity_env.fast.vector_env import TrinityTowersVectorEnv

    env = TrinityTowersVectorEnv(2, opponent="random")
    env.reset(seed=0)
    for _ in range(3):
        masks = env.action_masks()
        env.step(masks.argmax(axis=1))


def _tactics() -> None:
    from trinity_env.fast.games import FastGames
    from trinity_env.fast.tactics import tactical_batch

    tactical_batch(FastGames(2, seed=0).observations())


def _play(*agents: object) -> None:
    """One move each of ``agents`` in a dealt game: every kernel they run is compiled."""
    from trinity_env.spec.config import make_config
    from trinity_env.spec.observation import observation_dict

    state = make_config(draft="dealt").new_game(random.Random(0))
    for agent in agents:
        agent.reset(0)
        state = state.apply(agent.act(observation_dict(state, state.to_move, True), state))


def _baselines() -> None:
    from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent

    _play(GreedyAgent(), LookaheadAgent())


def _mcts() -> None:
    from trinity_env.agents.mcts import MCTSAgent

    _play(MCTSAgent(simulations=16))


def _az_search() -> None:
    from trinity_env.fast.games import FastGames
    from trinity_env.search.az import BatchedSearch, SearchMode, uniform_evaluate

    for mode in SearchMode:
        BatchedSearch(2, 4, mode=mode).run(FastGames(2, seed=0).batch, uniform_evaluate, np.random.default_rng(0))


def _solver() -> None:
    from trinity_env.search.solver import Solver, SolverBudgetError
    from trinity_env.search.solver_hints import HINT_MIN_EMPTY, HINT_NODES_PER_SIMULATION
    from trinity_env.spec.config import make_config

    rng = random.Random(0)
    state = make_config(draft="dealt").new_game(rng)
    while len(state.empty_tiles()) > HINT_MIN_EMPTY + 1:  # large enough for the move hints' Monte Carlo search
        state = state.apply(rng.choice(state.legal_actions()))
    # the hints' least search (1,000 simulations), then a few nodes of the solver's own: every kernel runs, and the
    # answer (past the budget) is not wanted
    with contextlib.suppress(SolverBudgetError):
        Solver(table_bits=12, hint_simulations=1000).value(state, max_nodes=1000 * HINT_NODES_PER_SIMULATION + 20_000)


FAMILIES: dict[str, Callable[[], None]] = {
    "fast engine": _engine,
    "vector env": _vector_env,
    "tactical features": _tactics,
    "baselines": _baselines,
    "MCTS": _mcts,
    "AlphaZero search": _az_search,
    "exact solver": _solver,
}
"""Each kernel family by name, and a tiny run of it that compiles every kernel its commands use."""


AGENT_FAMILIES = ("baselines", "MCTS", "tactical features", "AlphaZero search")
"""The families agents run on, in the order ``families_for`` gives them."""


def families_for(agents: list) -> list[str]:
    """The kernel families the agents run on (spec strings or ``Player`` values: each one's ``families``);
    ``random`` and the PPO networks need none."""
    from trinity_env.agents.spec import player

    needed = {family for agent in agents for family in player(agent).families}
    return [name for name in AGENT_FAMILIES if name in needed]


def _run(name: str) -> float:
    start = time.perf_counter()
    FAMILIES[name]()
    return time.perf_counter() - start


def prepare(
    families: list[str] | None = None, out: TextIO | None = None, quiet: bool = False, jobs: int = 1
) -> dict[str, float]:
    """Run each family once (all by default), saying what each took on ``out`` (standard error by default; nothing
    when ``quiet``); the seconds by family. ``jobs`` > 1 compiles that many families at once in worker processes
    (the cache is on disk, so every later process finds them), the solver's first: it takes the longest."""
    out = None if quiet else out or sys.stderr
    names = families or list(FAMILIES)
    seconds: dict[str, float] = {}
    if jobs > 1 and len(names) > 1:
        import concurrent.futures

        from trinity_env.core.workers import spawn_context

        order = sorted(names, key=lambda name: name != "exact solver")
        context = spawn_context()  # a fresh interpreter (nothing compiled or threaded yet) that never runs __main__
        with concurrent.futures.ProcessPoolExecutor(min(jobs, len(names)), mp_context=context) as pool:
            running = {pool.submit(_run, name): name for name in order}
            for done in concurrent.futures.as_completed(running):
                seconds[running[done]] = done.result()
                if out is not None:
                    print(f"prepared {running[done]}: {seconds[running[done]]:.1f} s", file=out, flush=True)
        return {name: seconds[name] for name in names}
    for name in names:
        if out is not None:
            print(f"preparing {name}...", end="", file=out, flush=True)
        seconds[name] = _run(name)
        if out is not None:
            print(f" {seconds[name]:.1f} s", file=out, flush=True)
    return seconds


def warm(families: list[str], out: TextIO | None = None, after: float = 1.0) -> float:
    """Run ``families`` quietly; the seconds it took. Past ``after`` seconds (a cold cache: numba is compiling)
    one line on ``out`` (standard error by default) says so, and a second when it is done."""
    out = out or sys.stderr
    said = threading.Event()

    def say() -> None:
        said.set()
        print(f"preparing the {', '.join(families)} (first run only: compiling)...", file=out, flush=True)

    timer = threading.Timer(after, say)
    timer.daemon = True
    start = time.perf_counter()
    timer.start()
    try:
        for name in families:
            FAMILIES[name]()
    finally:
        timer.cancel()
    seconds = time.perf_counter() - start
    if said.is_set():
        print(f"ready ({seconds:.0f} s; later runs skip this)", file=out, flush=True)
    return seconds

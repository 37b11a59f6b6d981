"""One game between two agents, each seeing only what its seat may see; and running many games in worker processes."""

from __future__ import annotations

import multiprocessing
import random
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from trinity_env.core import GameState
from trinity_env.spec.agent import Agent, visible_state
from trinity_env.spec.config import EnvConfig
from trinity_env.spec.observation import observation_dict

T = TypeVar("T")
R = TypeVar("R")


def play_game(
    agents: tuple[Agent, Agent],
    config: EnvConfig,
    seed: int,
    on_state: Callable[[GameState], object] | None = None,
) -> GameState:
    """Play one game, ``agents[p]`` in seat p; the final state. Everything random comes from ``seed``.

    ``on_state`` sees every state of the game, the first and the last included.
    """
    rng = random.Random(seed)
    state = config.new_game(rng)
    for seat, agent in enumerate(agents):
        agent.reset(seed * 2 + seat)
    if on_state is not None:
        on_state(state)
    while not state.is_over:
        seat = state.to_move
        observation = observation_dict(state, seat, config.open_hands)
        state = state.apply(agents[seat].act(observation, visible_state(state, config.open_hands)))
        if on_state is not None:
            on_state(state)
    return state


def seat_swapped_points(
    agent: Agent,
    opponent: Agent,
    config: EnvConfig,
    games: Iterable[int],
    seed_of: Callable[[int], int],
    on_game: Callable[[int, list[GameState]], object] | None = None,
) -> float:
    """``agent``'s points against ``opponent`` (a win 1, a draw 0.5) over the games numbered ``games``.

    In game ``k`` the agent takes seat ``k % 2`` and the game is seeded with ``seed_of(k)``,
    so a match split into chunks (or spread over processes) scores exactly as one run. The
    arena, the trainers' evaluations and the tests all count results this way.
    ``on_game(k, states)`` sees every state of each game once it ends (the arena's replays).
    """
    points = 0.0
    for k in games:
        seats = (agent, opponent) if k % 2 == 0 else (opponent, agent)
        states: list[GameState] = []
        winner = play_game(seats, config, seed_of(k), None if on_game is None else states.append).winner
        if on_game is not None:
            on_game(k, states)
        points += 0.5 if winner is None else float(winner == k % 2)
    return points


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a long run (the arena, the balance lab): ``partial`` holds what was played by then.

    A ``KeyboardInterrupt``, so code that does not look for it stops as it always did; the
    command line catches it, writes the partial results and exits with status 130.
    """

    def __init__(self, partial: Any):
        super().__init__("interrupted")
        self.partial = partial


def _ignore_sigint() -> None:
    """Pool initializer: Ctrl-C is the parent's to handle (it terminates the pool); workers never print it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple) -> None:
    """Pool initializer: Ctrl-C ignored (see ``_ignore_sigint``), then the caller's own initializer."""
    _ignore_sigint()
    if initializer is not None:
        initializer(*initargs)


def _start_pool(workers: int, initializer: Callable[..., None] | None = None, initargs: tuple = ()) -> Any:
    context = multiprocessing.get_context("spawn")
    arguments = {"initializer": _start_worker, "initargs": (initializer, initargs)}
    if threading.current_thread() is not threading.main_thread():
        return context.Pool(workers, **arguments)
    # Spawned children inherit an ignored SIGINT, so a Ctrl-C that reaches the whole process
    # group while they are still importing does not print their tracebacks either.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return context.Pool(workers, **arguments)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


@contextmanager
def chunk_results(
    function: Callable[[T], R],
    tasks: Iterable[T],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
) -> Iterator[Iterator[R]]:
    """``function`` over ``tasks``, results in any order: here for one worker, else in a pool of spawned processes,
    each of which runs ``initializer(*initargs)`` first (what can reach a worker only as it starts: shared memory).

    With a pool, the iterator has ``next(timeout)`` (``multiprocessing.TimeoutError`` when no result came in time).
    Leaving the block normally closes the pool; leaving it with an exception (Ctrl-C included)
    terminates it at once, so queued tasks are dropped rather than waited for.
    """
    if workers <= 1:
        yield map(function, tasks)
        return
    pool = _start_pool(workers, initializer, initargs)
    try:
        yield pool.imap_unordered(function, tasks)
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()
    pool.join()

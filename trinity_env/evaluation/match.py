"""One game between two agents, each seeing only what its seat may see; and running many games in worker processes."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from trinity_env.core import GameState
from trinity_env.core.stops import check_stopped
from trinity_env.core.workers import run_unordered
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
        check_stopped()  # a stop whose KeyboardInterrupt the garbage collector swallowed stops here
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


@contextmanager
def chunk_results(
    function: Callable[[T], R],
    tasks: Iterable[T],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
) -> Iterator[Iterator[R]]:
    """``function`` over ``tasks``, results in any order: here for one worker, else in spawned worker processes
    (``core.workers.run_unordered``: they work from a notebook or an unguarded script, a worker that dies is
    ``WorkerDied`` at once), each of which runs ``initializer(*initargs)`` first.

    With workers, the iterator has ``next(timeout)`` (``multiprocessing.TimeoutError`` when no result came in time).
    Leaving the block with an exception (Ctrl-C included) ends the workers at once, so queued tasks are dropped
    rather than waited for.
    """
    if workers <= 1:
        yield map(function, tasks)
        return
    with run_unordered(function, tasks, workers, initializer, initargs) as results:
        yield results

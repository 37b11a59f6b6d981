"""Checks of what callers pass the fast engine: game indices, seats and actions, each in one place.

The numba kernels index their arrays without bounds checks, so an index past the end reads or
writes another object's memory (garbage results, or a crashed interpreter). Every public method
of ``FastGames`` and of the vector env passes its arguments through these helpers once, before
any kernel runs; each refusal is a one-line ``ArgumentError`` (game indices, seats),
``IllegalMoveError`` (actions) or ``PositionError`` (a state to store), all ``ValueError``.
"""

from __future__ import annotations

import numpy as np

from trinity_env.core import DECK_SIZE, NUM_ACTIONS, TILES, ArgumentError, GameState, IllegalMoveError, PositionError
from trinity_env.core.state import IN_HAND, PLAYED, UNPICKED, Outcome, Phase


def _integers(values, name: str, error: type[ValueError]) -> np.ndarray:
    """``values`` as an int64 array; bools, floats (NaN, inf, 3.7), strings and objects are refused, not cast."""
    array = np.asarray(values)
    if array.size and array.dtype.kind not in "iu":
        raise error(f"{name} must be integers (bools and floats are refused), got an array of {array.dtype}")
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        raise error(f"{name} must be integers within int64, got {array.max()}")
    return array.astype(np.int64)


def _describe(value) -> str:
    """``repr(value)`` on one line and short (an array's repr spans lines)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def game_indices(games, num_games: int, *, name: str = "games", distinct: bool = False) -> np.ndarray:
    """``games`` as a 1-D int64 array of indices 0..num_games-1; ``distinct``: a repeated game is refused."""
    array = _integers(games, name, ArgumentError)
    if array.ndim != 1:
        raise ArgumentError(f"{name} must be a 1-D array of game indices, got shape {array.shape}")
    outside = np.flatnonzero((array < 0) | (array >= num_games))
    if outside.size:
        more = f" (and {outside.size - 1} more outside)" if outside.size > 1 else ""
        raise ArgumentError(f"{name} must be game indices 0-{num_games - 1}, got {array[outside[0]]}{more}")
    if distinct and np.unique(array).size != array.size:
        raise ArgumentError(f"{name} must not repeat a game: each game moves once per step")
    return array


def game_index(game, num_games: int) -> int:
    """One game index: a Python or numpy integer (not a bool) in 0..num_games-1."""
    if isinstance(game, (bool, np.bool_)) or not isinstance(game, (int, np.integer)):
        raise ArgumentError(f"game must be an integer index 0-{num_games - 1}, got {_describe(game)}")
    if not 0 <= game < num_games:
        raise ArgumentError(f"game must be an index 0-{num_games - 1}, got {int(game)}")
    return int(game)


def seat_array(seats, num_games: int, *, name: str = "seats") -> np.ndarray:
    """``seats`` as an int64 array of shape ``(num_games,)``, one seat (0 or 1) per game."""
    array = _integers(seats, name, ArgumentError)
    if array.shape != (num_games,):
        raise ArgumentError(f"{name} must hold one seat per game, shape ({num_games},), got shape {array.shape}")
    bad = np.flatnonzero((array != 0) & (array != 1))
    if bad.size:
        raise ArgumentError(f"{name} must be 0 or 1, got {array[bad[0]]} for game {bad[0]}")
    return array


def action_array(
    actions, shape: tuple[int, ...], *, name: str = "actions", in_range: bool = True, games: np.ndarray | None = None
) -> np.ndarray:
    """``actions`` as an int64 array of ``shape``; ``in_range``: each an action id 0..NUM_ACTIONS-1
    (a refusal names the game: ``games[j]`` for ``actions[j]``, or ``j`` without ``games``).

    Legality depends on the games' state, so callers that need it check it themselves (a kernel
    that reads only the valid action ids this returns)."""
    array = _integers(actions, name, IllegalMoveError)
    if array.shape != shape:
        raise IllegalMoveError(f"{name} must have shape {shape}, got {array.shape}")
    if in_range:
        outside = np.flatnonzero((array < 0) | (array >= NUM_ACTIONS))
        if outside.size:
            j = outside[0]
            game = j if games is None else games[j]
            raise IllegalMoveError(f"{name} must be action ids 0-{NUM_ACTIONS - 1}, got {array[j]} for game {game}")
    return array


def game_count(num_games, name: str = "num_games") -> int:
    """A number of games: a Python or numpy integer (not a bool), at least 1."""
    if isinstance(num_games, (bool, np.bool_)) or not isinstance(num_games, (int, np.integer)):
        raise ArgumentError(f"{name} must be a whole number of games, at least 1, got {_describe(num_games)}")
    if num_games < 1:
        raise ArgumentError(f"{name} must be at least 1, got {num_games}")
    return int(num_games)


def _seat(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value in (0, 1)


def _problem(state: GameState) -> str | None:
    """What makes ``state`` unfit for the arrays (a seat, slot status or tile the kernels index by), or None."""
    if not isinstance(state.phase, Phase):
        return f"phase {state.phase!r} is not one of {', '.join(Phase)}"
    if not (_seat(state.to_move) and _seat(state.first_player)):
        return f"to_move and first_player must be 0 or 1, got {state.to_move!r} and {state.first_player!r}"
    if len(state.decks) != 2 or len(state.status) != 2:
        return "decks and status must hold one entry per player"
    for p in (0, 1):
        if len(state.decks[p]) > DECK_SIZE or len(state.status[p]) != len(state.decks[p]):
            return f"player {p}'s deck must hold at most {DECK_SIZE} cards, one status each"
        if any(s not in (UNPICKED, IN_HAND, PLAYED) for s in state.status[p]):
            return f"player {p}'s slot status must be {UNPICKED}, {IN_HAND} or {PLAYED}, got {state.status[p]}"
    if len(state.cards) != TILES or len(state.owners) != TILES:
        return f"cards and owners must hold one entry per tile ({TILES})"
    if any(o not in (-1, 0, 1) for o in state.owners):
        return f"owners must be -1 (empty), 0 or 1, got {state.owners}"
    if isinstance(state.max_a_cards, bool) or not 0 <= state.max_a_cards <= DECK_SIZE:
        return f"max_a_cards must be 0-{DECK_SIZE}, got {state.max_a_cards!r}"
    outcome = state.outcome
    if outcome is not None and (
        not isinstance(outcome, Outcome)
        or not (outcome.winner is None or _seat(outcome.winner))
        or outcome.lane not in (None, 0, 1, 2)
    ):
        return f"outcome must have a winner None, 0 or 1 and a lane None or 0-2, got {outcome!r}"
    last = state.last
    if last is not None and last.tile is not None:
        tiles = (last.tile, *last.captured, *last.domino)
        if any(isinstance(t, bool) or t not in range(TILES) for t in tiles):
            return f"the last placement's tiles must be 0-{TILES - 1}, got {tiles}"
    return None


def engine_state(state) -> GameState:
    """``state`` if it is a core ``GameState`` the engine's arrays can hold; else ``PositionError``.

    ``GameState`` is built by ``new_game``/``from_dict``, which keep these; one built by hand need not."""
    if not isinstance(state, GameState):
        raise PositionError(f"state must be a core GameState, got {type(state).__name__}")
    problem = _problem(state)
    if problem is not None:
        raise PositionError(f"state does not fit the fast engine: {problem}")
    return state

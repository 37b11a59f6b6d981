"""``FastGames``: B games of Trinity Towers stepped in lockstep by the numba kernels.

The player to move in each game acts; finished games are scored and restarted in the
same step (auto-reset), so a training loop never waits on a slow game. Everything random
(first movers, dealt hands, random decks) comes from ``seed``: the same seed gives the
same games, whatever else the process does.

One instance is for one thread at a time (numpy buffers are reused across calls, and a step
is several kernel calls that must not interleave with another's). The mutating methods
(``step``, ``reset``, ``restart``, ``set_state``, ``random_actions``) take a non-blocking
lock: a second thread calling one while another is inside gets ``ConcurrentUseError``
instead of a silently corrupted step. Threads that share games must take turns themselves,
or use one ``FastGames`` each.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

import numpy as np

from trinity_env.core import GameState, IllegalMoveError, TrinityError
from trinity_env.core.rewards import result_rewards, rewards
from trinity_env.fast import kernels
from trinity_env.fast.checks import action_array, engine_state, game_count, game_index, game_indices, seat_array
from trinity_env.fast.convert import read_state, write_state
from trinity_env.fast.decks import random_deck_batch
from trinity_env.fast.layout import OVER, PHASE, SCORE0, TERMINATION, TO_MOVE, WINNER, Batch
from trinity_env.spec.config import RANDOM_DECK, SAME_DECK, ConfigError, DraftMode, EnvConfig, make_config
from trinity_env.spec.observation import OBSERVATION_SIZE

# player 0's result reward by winner: 0 player 0 won, 1 player 1 won, -1 a draw or no result yet (the core's)
_RESULT = np.array([result_rewards(0)[0], result_rewards(1)[0], result_rewards(None)[0]], np.float32)
_DEAL = {DraftMode.PICK: 0, DraftMode.DEALT: 1, DraftMode.FIXED: 2}


class ConcurrentUseError(TrinityError, RuntimeError):
    """A second thread called a mutating method of a ``FastGames`` while another thread was inside one."""


class StepResult(NamedTuple):
    """What one lockstep step did. ``rewards[b, p]`` is player p's reward in game b;
    ``terminated[b]`` marks games that ended (and were restarted); ``winner[b]`` is the
    winner of a game that ended (-1 for a draw or a game still running), ``scores[b]``
    its lane scores; ``final_observations`` (when asked for) the ended games' last
    observations, taken before the restart; ``termination[b]`` how it ended (the layout's
    codes: 1 lane control, 2 full board, 3 no moves; 0 for a game still running)."""

    rewards: np.ndarray
    terminated: np.ndarray
    winner: np.ndarray
    scores: np.ndarray
    final_observations: np.ndarray | None = None
    termination: np.ndarray | None = None


def _deck_array(deck) -> np.ndarray:
    return np.asarray(deck, dtype=np.int8).reshape(16, 4)


class FastGames:
    """B games in lockstep; keywords are the environment config (``draft``, ``deck``, ...).

    ``draft_share`` (with ``draft="dealt"``): the share of new games that start with the
    draft instead of dealt hands, for training one policy on both.

    One thread at a time: a mutating method called while another thread is inside one raises
    ``ConcurrentUseError`` (see the module docstring). Copies and pickles get a lock of their own.

    Game indices, seats and actions are checked before any kernel runs (``trinity_env.fast.checks``):
    a bad one raises a one-line ``ArgumentError``, ``IllegalMoveError`` or (a state ``set_state`` cannot
    store) ``PositionError``, and changes nothing.
    """

    def __init__(self, num_games: int, *, seed: int | None = None, config=None, draft_share: float = 0.0, **keywords):
        self._lock = threading.Lock()
        num_games = game_count(num_games)
        self.config: EnvConfig = make_config(config, **keywords)
        if not 0 <= draft_share <= 1 or (draft_share and self.config.draft is not DraftMode.DEALT):
            raise ConfigError(f"draft_share must be in [0, 1] and needs draft='dealt', got {draft_share!r}")
        self.draft_share = float(draft_share)
        self.num_games = num_games
        self.batch = Batch.empty(num_games)
        self._fixed = np.zeros((2, 16), np.int8)
        if self.config.hands is not None:
            for p, hand in enumerate(self.config.hands):
                self._fixed[p, list(hand)] = 1
        # each seat's deck: an int8 [16, 4] array, or RANDOM_DECK / SAME_DECK (dealt at every restart)
        self._decks = [d if isinstance(d, str) else _deck_array(d) for d in self.config.decks]
        self._buffer_actions = np.zeros(num_games, np.int64)
        self._illegal = np.zeros(num_games, np.int8)
        self.reset(seed)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock is not copied: the copy is a new instance, free to use
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle

    def _enter(self, method: str) -> None:
        """Take the instance's lock without blocking, or raise ``ConcurrentUseError`` naming ``method``.

        Every mutating method calls this first and releases the lock in a ``finally``. Not
        blocking keeps the contract visible: a program that shares an instance between threads
        learns it at once instead of being serialised by chance. Uncontended, the acquire and
        release cost about 0.12 microseconds, next to the 20 of a one-game step (a wrapping
        decorator, with its extra frame and argument packing, measured 0.45).
        """
        if not self._lock.acquire(False):
            raise ConcurrentUseError(
                f"FastGames.{method} was called while another thread is using the same FastGames: "
                "one instance is for one thread at a time"
            )

    def reset(self, seed: int | None = None) -> None:
        """Start all games anew; ``seed`` reseeds every random stream."""
        self._enter("reset")
        try:
            self._np_rng = np.random.default_rng(seed)
            self.rng = self._np_rng.integers(1, 2**63, self.num_games, dtype=np.uint64)
            self._restart(np.arange(self.num_games))
        finally:
            self._lock.release()

    def restart(self, games: np.ndarray) -> None:
        """Abandon ``games`` (indices) and start each anew, as a finished game restarts.

        For an env that ends an episode the engine did not end (an illegal action).
        """
        self._enter("restart")
        try:
            self._restart(np.unique(game_indices(games, self.num_games)))  # a repeated game restarts once
        finally:
            self._lock.release()

    def _restart(self, games: np.ndarray) -> None:
        if games.size == 0:
            return
        decks = np.empty((games.size, 2, 16, 4), np.int8)
        for seat, deck in enumerate(self._decks):
            if isinstance(deck, np.ndarray):
                decks[:, seat] = deck
            elif deck == RANDOM_DECK:
                decks[:, seat] = random_deck_batch(self._np_rng, games.size)
            elif deck == SAME_DECK:
                decks[:, seat] = decks[:, 0]
            else:
                raise ConfigError(f"unknown deck {deck!r}")
        first = -1 if self.config.first_player == "random" else int(self.config.first_player)
        deal = np.full(games.size, _DEAL[self.config.draft])
        if self.draft_share:
            deal[self._np_rng.random(games.size) < self.draft_share] = _DEAL[DraftMode.PICK]
        for mode in np.unique(deal):
            rows = deal == mode
            kernels.reset_games(
                *self.batch,
                games[rows].astype(np.int64),
                np.ascontiguousarray(decks[rows]),
                first,
                self.config.max_a_cards,
                int(mode),
                self._fixed,
                self.rng,
            )

    # ------------------------------------------------------------------ views

    @property
    def to_move(self) -> np.ndarray:
        """The seat to move in each game (int8 [B])."""
        return self.batch.info[:, TO_MOVE].copy()

    def masks(self) -> np.ndarray:
        """Legal-action masks of the player to move, int8 [B, 256]."""
        out = np.zeros((self.num_games, 256), np.int8)
        kernels.masks_batch(self.batch.decks, self.batch.status, self.batch.owner, self.batch.info, out)
        return out

    def observations(self, seats: np.ndarray | None = None) -> np.ndarray:
        """Observations, int8 [B, 339], of ``seats`` (default: the player to move), as the AEC env encodes them.

        ``seats``: one seat (0 or 1) per game, shape ``(B,)``."""
        return self._observe(self.batch.info[:, TO_MOVE].astype(np.int64) if seats is None else self._seats(seats))

    def _seats(self, seats, name: str = "seats") -> np.ndarray:
        return seat_array(seats, self.num_games, name=name)

    def _observe(self, seats: np.ndarray) -> np.ndarray:
        """Observations of ``seats`` (already checked: int64, one 0 or 1 per game)."""
        out = np.zeros((self.num_games, OBSERVATION_SIZE), np.int8)
        kernels.observe_batch(
            self.batch.decks,
            self.batch.status,
            self.batch.sides,
            self.batch.owner,
            self.batch.info,
            seats,
            self.config.open_hands,
            out,
        )
        return out

    def state(self, game: int) -> GameState:
        """Game ``game`` (an index 0..B-1) as a core ``GameState``."""
        return read_state(self.batch, game_index(game, self.num_games))

    def set_state(self, game: int, state: GameState) -> None:
        """Put a core ``GameState`` into row ``game`` (puzzles, tests, search from a position)."""
        self._enter("set_state")
        try:
            game = game_index(game, self.num_games)
            write_state(self.batch, game, engine_state(state))
        finally:
            self._lock.release()

    # ------------------------------------------------------------------ stepping

    def step(
        self,
        actions: np.ndarray,
        games: np.ndarray | None = None,
        final_seats: np.ndarray | None = None,
    ) -> StepResult:
        """The player to move in each game (or only in ``games``) takes ``actions``; finished games restart.

        ``actions``: one action id (0-255) per game, or per entry of ``games`` (distinct indices 0..B-1).
        ``final_seats``: one seat (0 or 1) per game; also return, for games that end, the final
        observation of that seat. Raises ``IllegalMoveError`` naming the games whose action is
        illegal (or not an action id), ``ArgumentError`` for bad ``games`` or ``final_seats``;
        all are checked before anything moves.
        """
        self._enter("step")
        try:
            return self._step(actions, games, final_seats)
        finally:
            self._lock.release()

    def _step(self, actions: np.ndarray, games: np.ndarray | None, final_seats: np.ndarray | None) -> StepResult:
        # every argument is checked before any kernel runs: a refusal moves no game
        if final_seats is not None:
            final_seats = self._seats(final_seats, "final_seats")
        if games is None:
            actions = action_array(actions, (self.num_games,))
            full = actions
        else:
            games = game_indices(games, self.num_games, distinct=True)
            actions = action_array(actions, games.shape, games=games)
            full = self._buffer_actions
            full[:] = -1
            full[games] = actions
        active = full >= 0
        kernels.check_batch(
            self.batch.decks,
            self.batch.status,
            self.batch.owner,
            self.batch.info,
            full,
            self._illegal,
        )
        bad = np.flatnonzero(active & (self._illegal == 1))
        if bad.size:
            listed = ", ".join(f"game {b}: action {full[b]}" for b in bad[:5])
            raise IllegalMoveError(f"illegal action in {bad.size} game(s) ({listed}); no game moved")
        before = self._margins() if self.config.reward.shaped else None
        kernels.step_batch(*self.batch, full, self._illegal)
        return self._settle(before, active, final_seats)

    def _margins(self) -> np.ndarray:
        out = np.zeros(self.num_games, np.float32)
        kernels.margins_batch(self.batch.owner, out)
        return out

    def _settle(
        self, margins_before: np.ndarray | None, active: np.ndarray, final_seats: np.ndarray | None
    ) -> StepResult:
        info = self.batch.info
        done = info[:, PHASE] == OVER
        winner = np.where(done, info[:, WINNER], -1).astype(np.int8)
        change = np.float32(0)
        if margins_before is not None:
            change = self._margins() - margins_before
            change[~active] = 0
        paid = np.empty((self.num_games, 2), np.float32)
        paid[:, 0], paid[:, 1] = rewards(self.config.reward, _RESULT[winner], change)
        scores = np.where(done[:, None], info[:, SCORE0 : SCORE0 + 2], 0).astype(np.int8)
        termination = np.where(done, info[:, TERMINATION], 0).astype(np.int8)
        final = None if final_seats is None else self._observe(final_seats)
        self._restart(np.flatnonzero(done))
        return StepResult(paid, done, winner, scores, final, termination)

    def random_actions(self, games: np.ndarray) -> np.ndarray:
        """A uniformly random legal action in each of ``games``, from the games' own seeded streams.

        ``games``: a 1-D array of indices 0..B-1 (a game listed twice draws twice from its stream);
        a finished game (possible only after ``set_state``) has no legal action and is refused."""
        self._enter("random_actions")
        try:
            games = game_indices(games, self.num_games)
            over = np.flatnonzero(self.batch.info[games, PHASE] == OVER)
            if over.size:
                raise IllegalMoveError(f"game {games[over[0]]} is over: it has no legal action to draw")
            out = np.zeros(games.size, np.int64)
            kernels.random_actions(
                self.batch.decks, self.batch.status, self.batch.owner, self.batch.info, games, self.rng, out
            )
            return out
        finally:
            self._lock.release()

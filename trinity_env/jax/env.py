"""``TrinityTowers``: the game as a Pgx environment, jit-compiled and vmapped.

``env.init(key)``, ``env.step(state, action, key)`` and ``env.observe(state, player)`` are pure
functions of their arguments (the rules config is fixed when the env is built), with Pgx's
fields and semantics: ``current_player``, ``observation`` (the player to move's), ``rewards``
of both players for the step, ``terminated``, ``truncated`` (never set: every game ends within
31 actions), ``legal_action_mask`` (all True at a terminal state, as Pgx has it; ``legal_mask``
gives the rules' all-False one), ``_step_count``. An illegal action ends the game at once: -1
to the player who took it, +1 to the other, the board untouched. A step from a terminal state
changes nothing and pays zero. An action id outside 0-255 counts as illegal.

Where pgx is installed, ``TrinityTowers`` subclasses ``pgx.Env`` and ``State`` ``pgx.State``;
without it they keep the same interface.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trinity_env.core import DECK_SIZE, HAND_SIZE, NUM_ACTIONS, TILES
from trinity_env.core.decks import RANDOM_DECK_A_CARDS, RANDOM_DECK_SIDE_SUM, cards_with_side_sum
from trinity_env.core.rewards import result_rewards
from trinity_env.core.writes import write_text
from trinity_env.jax import rules
from trinity_env.jax.rules import DRAFT, IN_HAND, OVER, PLAY, UNPICKED, Game, dataclass
from trinity_env.spec.config import RANDOM_DECK, SAME_DECK, DraftMode, EnvConfig, make_config

try:
    from pgx.core import Env as _Env
    from pgx.core import State as _State
except ImportError:  # pgx absent: the same interface without its base classes
    _Env = _State = object  # type: ignore[assignment,misc]

ENV_ID = "trinity_towers"
VERSION = "v1"
_COMB = np.array([[math.comb(n, k) for k in range(DECK_SIZE + 1)] for n in range(DECK_SIZE + 1)], np.float32)
"""``_COMB[n, k]``: the number of ways to choose k of n (0 for k > n)."""
_RESULTS = tuple(int(result_rewards(winner)[0]) for winner in (0, 1, None))
"""Player 0's result reward when 0 wins, 1 wins, neither: whole numbers (``rules.shaped_reward`` takes them so)."""
assert tuple(result_rewards(winner)[0] for winner in (0, 1, None)) == _RESULTS


@dataclass
class State(_State):
    """A game (or a batch of games, under ``vmap``) as Pgx's state; ``_x`` holds the rules' arrays."""

    current_player: Any
    observation: Any
    rewards: Any
    terminated: Any
    truncated: Any
    legal_action_mask: Any
    _step_count: Any
    _x: Game

    @property
    def env_id(self) -> str:
        return ENV_ID

    def to_svg(self, *, color_theme: str | None = None, scale: float | None = None) -> str:
        """The board(s) as SVG: each tile's card (top, right, bottom, left) on its owner's colour."""
        return board_svg(self, dark=color_theme == "dark", scale=1.0 if scale is None else float(scale))

    def save_svg(self, filename: str | Path, *, color_theme: str | None = None, scale: float | None = None) -> None:
        write_text(filename, self.to_svg(color_theme=color_theme, scale=scale))


class TrinityTowers(_Env):
    """Trinity Towers as a Pgx env; keywords (or ``config``) are the env config, as ``trinity_env.env`` takes.

    Every rules variant of ``EnvConfig`` is supported: the draft (``pick``), dealt and fixed hands,
    ``first_player``, ``open_hands``, ``max_a_cards``, fixed, random and shared decks, both reward modes.
    """

    def __init__(self, config: EnvConfig | str | Path | dict | None = None, **keywords: Any):
        super().__init__()
        self.config: EnvConfig = make_config(config, **keywords)
        self._decks = [None if isinstance(d, str) else np.asarray(d, np.int8) for d in self.config.decks]
        self._fixed = None
        if self.config.hands is not None:
            self._fixed = np.zeros((2, DECK_SIZE), np.int8)
            for p, hand in enumerate(self.config.hands):
                self._fixed[p, list(hand)] = IN_HAND
        with_a, without_a = cards_with_side_sum(RANDOM_DECK_SIDE_SUM)
        self._pools = np.array(with_a, np.int8), np.array(without_a, np.int8)
        self._fixed_deal = self.config.draft is not DraftMode.DEALT and all(d is not None for d in self._decks)
        """Whether only the first mover is drawn at ``init`` (fixed decks, no dealt hands)."""
        self._starts: list | None = None
        """The two possible starts (by first mover) of a fixed deal, as numpy trees, built at the first ``init``."""

    # ------------------------------------------------------------------ Pgx's API

    @property
    def id(self) -> str:
        return ENV_ID

    @property
    def version(self) -> str:
        return VERSION

    @property
    def num_players(self) -> int:
        return 2

    @property
    def num_actions(self) -> int:
        return NUM_ACTIONS

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (rules.OBSERVATION_SIZE,)

    def init(self, key) -> State:
        if not self._fixed_deal:
            state = self._init(key)
            return state.replace(observation=self.observe(state))
        # Only the first mover is drawn: both starts are constants, built once while tracing (XLA would rebuild
        # them in every call), and a draw picks one.
        if self._starts is None:
            with jax.ensure_compile_time_eval():
                decks = jnp.asarray(np.stack(self._decks))
                starts = [self._start(decks, self._fixed_status(), jnp.int8(f)) for f in (0, 1)]
                starts = [s.replace(observation=self.observe(s)) for s in starts]
            self._starts = [jax.tree_util.tree_map(np.asarray, s) for s in starts]
        zero, one = self._starts
        if self.config.first_player != "random":
            return jax.tree_util.tree_map(jnp.asarray, one if int(self.config.first_player) else zero)
        first = jax.random.bernoulli(key)
        # a field the first mover does not change stays a constant (XLA would copy the draw into each entry)
        return jax.tree_util.tree_map(
            lambda a, b: jnp.asarray(a) if np.array_equal(a, b) else jnp.where(first, b, a), zero, one
        )

    def step(self, state: State, action, key=None) -> State:
        """Pgx's ``Env.step`` in effect (``tests/test_jax_engine.py`` compares the two), fused: Pgx's three
        ``lax.cond`` each become a select of the whole state under ``vmap``; here each field is selected once. The
        move itself is ``_moved``'s, as in Pgx's hook ``_step``."""
        del key  # everything random happens at init
        action = jnp.asarray(action, jnp.int32)
        done = state.terminated | state.truncated
        offered = _offered(state, action)
        illegal = ~done & ~offered
        moved, words = self._moved(state, action, ~done & offered)
        mover = state.current_player
        penalty = jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)
        terminated = jnp.where(done, state.terminated, illegal | moved.terminated)
        current = jnp.where(done | illegal, mover, moved.current_player)
        return moved.replace(
            current_player=current,
            observation=rules.observation(moved._x, words, current, self.config.open_hands),
            rewards=jnp.where(illegal, penalty, jnp.where(done, 0.0, moved.rewards)),
            terminated=terminated,
            legal_action_mask=jnp.where(done, state.legal_action_mask, terminated | moved.legal_action_mask),
            _step_count=state._step_count + (~done).astype(jnp.int32),
        )

    def observe(self, state: State, player_id=None):
        """``player_id``'s observation (default: the player to move's), int8 [339] as the AEC env shows it."""
        player = state.current_player if player_id is None else player_id
        return jax.lax.stop_gradient(self._observe(state, player))

    # ------------------------------------------------------------------ the game

    def _init(self, key) -> State:
        deck_keys, first_key, hand_keys = jax.random.split(key, 3)
        decks = self._deal_decks(deck_keys)
        config = self.config
        if config.first_player == "random":
            first = jax.random.bernoulli(first_key).astype(jnp.int8)
        else:
            first = jnp.int8(int(config.first_player))
        if config.draft is DraftMode.DEALT:
            keys = jax.random.split(hand_keys, 2)
            status = jnp.stack([_random_hand(keys[p], decks[p], config.max_a_cards) for p in (0, 1)])
        else:
            status = self._fixed_status()
        return self._start(decks, status, first)

    def _fixed_status(self):
        """The slots' statuses at the start where no hand is dealt: all unpicked (the draft) or the fixed hands."""
        if self.config.draft is DraftMode.PICK:
            return jnp.full((2, DECK_SIZE), UNPICKED, jnp.int8)
        return jnp.asarray(self._fixed)

    def _start(self, decks, status, first) -> State:
        """The state at the start of a game with these decks, statuses and first mover (no observation yet)."""
        config = self.config
        drafting = config.draft is DraftMode.PICK
        game = Game(
            decks=decks,
            status=status,
            sides=jnp.zeros((TILES, 4), jnp.int8),
            owner=jnp.full(TILES, -1, jnp.int8),
            phase=jnp.int8(DRAFT if drafting else PLAY),
            to_move=jnp.int32(0) if drafting else first.astype(jnp.int32),
            first_player=first,
            max_a_cards=jnp.int8(config.max_a_cards),
            winner=jnp.int8(-1),
            termination=jnp.int8(0),
            scores=jnp.zeros(2, jnp.int8),
            lane=jnp.int8(-1),
        )
        return state_of(game)

    def _deal_decks(self, key):
        first_key, second_key = jax.random.split(key)
        first = self._deck(0, first_key)
        second = first if self.config.decks[1] == SAME_DECK else self._deck(1, second_key)
        return jnp.stack([first, second])

    def _deck(self, seat: int, key):
        if self._decks[seat] is not None:
            return jnp.asarray(self._decks[seat])
        assert self.config.decks[seat] == RANDOM_DECK
        with_a, without_a = self._pools
        a_key, plain_key, order_key = jax.random.split(key, 3)
        chosen_a = jax.random.choice(a_key, len(with_a), (RANDOM_DECK_A_CARDS,), replace=False)
        chosen_plain = jax.random.choice(plain_key, len(without_a), (DECK_SIZE - RANDOM_DECK_A_CARDS,), replace=False)
        cards = jnp.concatenate([jnp.asarray(with_a)[chosen_a], jnp.asarray(without_a)[chosen_plain]])
        return jax.random.permutation(order_key, cards)

    def _step(self, state: State, action, key) -> State:
        """Pgx's hook, for ``pgx.Env.step`` (which ``step`` fuses): a state not over, any action id 0-255."""
        del key
        action = jnp.asarray(action, jnp.int32)
        return self._moved(state, action, _offered(state, action))[0]

    def _moved(self, state: State, action, legal):
        """The state after the mover's ``action`` where ``legal`` (else the same game): its mover, rewards, end and
        mask (all True once over), with the rules' words of the game after it (for its observation, which it leaves
        as it was, as it does the step count). The one move of both ``step`` and ``_step``."""
        before = state._x
        after, words, mask_words = rules.advance(before, action, legal)
        over = after.phase == OVER
        moved = state.replace(
            current_player=after.to_move.astype(jnp.int32),
            rewards=self._rewards(before, after),
            terminated=over,
            legal_action_mask=over | rules.mask_of(*mask_words),
            _x=after,
        )
        return moved, words

    def _rewards(self, before: Game, after: Game):
        """Both seats' rewards for the move from ``before`` to ``after`` (the core's reward module's rule)."""
        won, lost, drawn = _RESULTS
        result = jnp.where(after.winner == 0, won, jnp.where(after.winner == 1, lost, drawn))
        result = jnp.where(after.phase == OVER, result, 0)
        if self.config.reward.shaped:  # an unchanged board (a pick, or no move) changes no margin
            reward = rules.shaped_reward(result, before.owner, after.owner)
        else:
            reward = result.astype(jnp.float32)
        return jnp.stack([reward, 0.0 - reward]).astype(jnp.float32)

    def _observe(self, state: State, player_id):
        return rules.observe(state._x, player_id, self.config.open_hands)


def _offered(state: State, action):
    """Whether ``state``'s mask offers ``action`` (an id outside 0-255 is not offered)."""
    in_range = (action >= 0) & (action < NUM_ACTIONS)
    return in_range & state.legal_action_mask[jnp.clip(action, 0, NUM_ACTIONS - 1)]


def state_of(game: Game, step_count: int = 0) -> State:
    """The Pgx state of ``game``: its mover, rules mask (all True once over), no rewards yet; the
    observation is filled in by the env (``init`` and ``from_state``)."""
    over = game.phase == OVER
    mask = rules.legal_mask(game)
    return State(
        current_player=jnp.asarray(game.to_move, jnp.int32),
        observation=jnp.zeros(rules.OBSERVATION_SIZE, jnp.int8),
        rewards=jnp.zeros(2, jnp.float32),
        terminated=jnp.asarray(over),
        truncated=jnp.bool_(False),
        legal_action_mask=jnp.where(over, True, mask),
        _step_count=jnp.int32(step_count),
        _x=game,
    )


def _random_hand(key, deck, max_a_cards: int):
    """Statuses of a hand drawn uniformly from all legal hands of ``deck`` (the core's ``random_hand`` rule:
    the A count by its number of hands, then that many A cards and the rest uniformly)."""
    count_key, order_key = jax.random.split(key)
    a_card = rules.is_a_card(deck)
    a_slots = jnp.sum(a_card)
    counts = jnp.arange(HAND_SIZE + 1)
    comb = jnp.asarray(_COMB, jnp.float32)
    weights = comb[a_slots, counts] * comb[DECK_SIZE - a_slots, HAND_SIZE - counts] * (counts <= max_a_cards)
    k = jax.random.categorical(count_key, jnp.log(weights))
    order = jax.random.uniform(order_key, (DECK_SIZE,))
    rank = jnp.sum((a_card[None, :] == a_card[:, None]) & (order[None, :] < order[:, None]), axis=1)
    chosen = jnp.where(a_card, rank < k, rank < HAND_SIZE - k)
    return jnp.where(chosen, IN_HAND, UNPICKED).astype(jnp.int8)


def board_svg(state: State, *, dark: bool = False, scale: float = 1.0) -> str:
    """An SVG of the first games of ``state`` (one, or a batch): a column of boards, each tile's card
    written top-right-bottom-left on its owner's colour."""
    owner = np.asarray(state._x.owner).reshape(-1, TILES)[:16]
    sides = np.asarray(state._x.sides).reshape(-1, TILES, 4)[:16]
    cell, gap = 40 * scale, 10 * scale
    width, height = 5 * cell, len(owner) * (3 * cell + gap)
    colours = {-1: "#444" if dark else "#eee", 0: "#f7f3e8", 1: "#3a3a3a"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}">']
    for g in range(len(owner)):
        for t in range(TILES):
            x, y = (t % 5) * cell, g * (3 * cell + gap) + (t // 5) * cell
            fill = colours[int(owner[g, t])]
            parts.append(f'<rect x="{x:g}" y="{y:g}" width="{cell:g}" height="{cell:g}" fill="{fill}" stroke="#888"/>')
            if owner[g, t] >= 0:
                text = "".join("A" if v == 10 else str(int(v)) for v in sides[g, t])
                ink = "#000" if owner[g, t] == 0 else "#fff"
                parts.append(
                    f'<text x="{x + cell / 2:g}" y="{y + cell * 0.6:g}" font-size="{11 * scale:g}" '
                    f'text-anchor="middle" fill="{ink}">{html.escape(text)}</text>'
                )
    parts.append("</svg>")
    return "".join(parts)

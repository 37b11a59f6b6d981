"""The rules of docs/rules.md as pure JAX functions over one game's arrays (``Game``).

The third copy of the rules (after the core and the numba kernels), allowed only because
``tests/test_jax_engine.py`` and the invariant suite hold it to the core move by move. Every
function here works on one game; ``jax.vmap`` makes it a batch. Nothing branches in Python on a
traced value: both phases' updates are computed and the phase selects one (``jnp.where``).

The layout is the fast engine's (``trinity_env.fast.layout``, not imported: it loads numba): a
deck slot is unpicked, in hand, played, or absent (past a short deck of a loaded position);
``owner`` is -1 on an empty tile; phases and termination codes are the core's, in their order.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trinity_env.core import DECK_SIZE, HAND_SIZE, NEIGHBOURS, PLACE_OFFSET, TILES, A
from trinity_env.core.board import LANES, POSITIONS
from trinity_env.core.rewards import MARGIN_SCALE
from trinity_env.core.rules import IN_HAND, PLAYED, UNPICKED, Phase, Termination
from trinity_env.spec.observation import OBSERVATION_SIZE

try:
    from pgx._src.struct import dataclass
except ImportError:  # pgx absent: the same frozen pytree dataclass with ``replace``
    import dataclasses

    def dataclass(cls: Any) -> Any:
        cls = dataclasses.dataclass(frozen=True)(cls)
        cls.replace = lambda self, **changes: dataclasses.replace(self, **changes)
        names = [f.name for f in dataclasses.fields(cls)]
        return jax.tree_util.register_dataclass(cls, data_fields=names, meta_fields=[])


__all__ = [
    "ABSENT",
    "Game",
    "apply",
    "beats",
    "is_a_card",
    "lane_scores",
    "legal_mask",
    "margin",
    "margin_reward",
    "observe",
    "of",
]

ABSENT = max(UNPICKED, IN_HAND, PLAYED) + 1
"""The status of a slot past a short deck (a loaded position's), as in the fast engine's layout."""
PHASES = tuple(Phase)
DRAFT, PLAY, OVER = (PHASES.index(p) for p in (Phase.DRAFT, Phase.PLAY, Phase.OVER))
LANE_CONTROL, FULL_BOARD, NO_MOVES = (
    t.code for t in (Termination.LANE_CONTROL, Termination.FULL_BOARD, Termination.NO_MOVES)
)

SIDE_FACING = np.array([2, 3, 0, 1])
"""The side of a neighbour that faces back: top faces bottom, right faces left."""


def _neighbour_table() -> np.ndarray:
    """``[tile, side]``: the tile that side of a card on ``tile`` faces, or -1 (the core's ``NEIGHBOURS``)."""
    table = np.full((TILES, 4), -1, np.int32)
    for tile, found in enumerate(NEIGHBOURS):
        for n, mine, theirs in found:
            assert theirs == SIDE_FACING[mine]
            table[tile, mine] = n
    return table


NEIGHBOUR = _neighbour_table()
HAS_NEIGHBOUR = NEIGHBOUR >= 0
NEIGHBOUR_OR_SELF = np.where(HAS_NEIGHBOUR, NEIGHBOUR, np.arange(TILES)[:, None])


@dataclass
class Game:
    """One game's arrays (a batch adds leading axes). ``decks[p, i]``: the sides (top, right, bottom, left;
    A = 10) of player p's deck card i, 0 past a short deck; ``status[p, i]``: unpicked, in hand, played or
    absent; ``sides[t]`` and ``owner[t]``: the card on tile t and its owner (-1 and zeros on an empty tile);
    ``winner`` (-1 for none or a draw), ``termination`` (0 while the game runs, else the core's code),
    ``scores`` and ``lane`` (-1 unless a lane-control win) describe a finished game."""

    decks: Any
    status: Any
    sides: Any
    owner: Any
    phase: Any
    to_move: Any
    first_player: Any
    max_a_cards: Any
    winner: Any
    termination: Any
    scores: Any
    lane: Any


def of(player, pair):
    """``pair[player]`` for a pair stacked on the first axis, as a select (a gather under ``vmap`` is slower)."""
    return jnp.where(player == 0, pair[0], pair[1])


def _set_row(pair, player, row):
    """``pair`` with ``pair[player]`` replaced by ``row`` (a select: a scatter under ``vmap`` is slower)."""
    return jnp.stack([jnp.where(player == 0, row, pair[0]), jnp.where(player == 1, row, pair[1])])


def beats(side, facing):
    """The capture rule: a higher side wins, and A against A wins too."""
    return (side > facing) | ((side == facing) & (side == A))


def is_a_card(decks):
    """Whether each deck card has an A side (the A limit counts these)."""
    return jnp.any(decks == A, axis=-1)


def lane_scores(owner):
    """Lane-majority scores ``[player 0, player 1]`` of a board: a lane's majority owner scores its count."""
    lanes = owner.reshape(LANES, POSITIONS)
    zero = jnp.sum(lanes == 0, axis=1, dtype=jnp.int32)
    one = jnp.sum(lanes == 1, axis=1, dtype=jnp.int32)
    return jnp.stack([jnp.sum(jnp.where(zero > one, zero, 0)), jnp.sum(jnp.where(one > zero, one, 0))])


def margin(owner):
    """Player 0's lane-majority score minus player 1's."""
    scores = lane_scores(owner)
    return scores[0] - scores[1]


def legal_mask(game: Game):
    """The rules' legal actions of the player to move (bool [256]); all False once the game is over."""
    p = game.to_move
    status = of(p, game.status)
    a_card = is_a_card(of(p, game.decks))
    held = jnp.sum(a_card & ((status == IN_HAND) | (status == PLAYED)))
    picks = (status == UNPICKED) & ((held < game.max_a_cards) | ~a_card) & (game.phase == DRAFT)
    places = (status == IN_HAND)[:, None] & (game.owner == -1)[None, :] & (game.phase == PLAY)
    return jnp.concatenate([picks, places.reshape(DECK_SIZE * TILES)])


def _pick(game: Game, card) -> Game:
    p = game.to_move
    row = of(p, game.status)
    status = _set_row(game.status, p, jnp.where(jnp.arange(DECK_SIZE) == card, IN_HAND, row).astype(row.dtype))
    done = jnp.all(jnp.sum(status == IN_HAND, axis=1) >= HAND_SIZE)
    return game.replace(
        status=status,
        phase=jnp.where(done, PLAY, DRAFT).astype(game.phase.dtype),
        to_move=jnp.where(done, game.first_player.astype(game.to_move.dtype), 1 - p),
    )


def _place(game: Game, card, tile) -> Game:
    p = game.to_move
    opponent = 1 - p
    slot = jnp.arange(DECK_SIZE) == card
    deck, row = of(p, game.decks), of(p, game.status)
    placed = jnp.arange(TILES) == tile
    sides = jnp.where(placed[:, None], jnp.sum(jnp.where(slot[:, None], deck, 0), axis=0), game.sides)
    sides = sides.astype(game.sides.dtype)
    owner = jnp.where(placed, p, game.owner).astype(game.owner.dtype)
    status = _set_row(game.status, p, jnp.where(slot, PLAYED, row).astype(row.dtype))
    # taken[n, k]: the card on the tile beside n (in the direction of n's side k) beats n's side k
    taken = HAS_NEIGHBOUR & beats(sides[NEIGHBOUR_OR_SELF, SIDE_FACING[None, :]], sides)
    direct = (owner == opponent) & jnp.any(taken & jnp.equal(NEIGHBOUR, tile), axis=1)
    owner = jnp.where(direct, p, owner).astype(owner.dtype)
    domino = (owner == opponent) & jnp.any(taken & direct[NEIGHBOUR_OR_SELF], axis=1)  # one level
    owner = jnp.where(domino, p, owner).astype(owner.dtype)

    complete = jnp.all(owner.reshape(LANES, POSITIONS) == p, axis=1)
    controlled = jnp.any(complete)
    full = jnp.all(owner != -1)
    theirs_left = jnp.any(of(opponent, status) == IN_HAND)
    mine_left = jnp.any(of(p, status) == IN_HAND)
    over = controlled | full | ~(theirs_left | mine_left)
    scores = lane_scores(owner)
    by_score = jnp.where(scores[0] > scores[1], 0, jnp.where(scores[1] > scores[0], 1, -1))
    code = jnp.where(controlled, LANE_CONTROL, jnp.where(full, FULL_BOARD, NO_MOVES))
    small = game.winner.dtype
    return game.replace(
        status=status,
        sides=sides,
        owner=owner,
        phase=jnp.where(over, OVER, PLAY).astype(game.phase.dtype),
        to_move=jnp.where(over | theirs_left, opponent, p),
        winner=jnp.where(over, jnp.where(controlled, p, by_score), -1).astype(small),
        termination=jnp.where(over, code, 0).astype(small),
        scores=jnp.where(over, scores, 0).astype(small),
        lane=jnp.where(controlled, jnp.argmax(complete), -1).astype(small),
    )


_FIXED = ("decks", "first_player", "max_a_cards")
"""The fields no action changes: never selected between (a select over a batch costs as much as a rule)."""


def apply(game: Game, action, legal=True) -> Game:
    """The game after the player to move takes ``action``, with its captures and end; unchanged where ``legal``
    is False (the caller's check: not checked here)."""
    card, tile = jnp.divmod(jnp.clip(action - PLACE_OFFSET, 0, DECK_SIZE * TILES - 1), TILES)
    picked = _pick(game, jnp.clip(action, 0, DECK_SIZE - 1))
    placed = _place(game, card, tile)
    drafting = game.phase == DRAFT
    changes = {}
    for name in Game.__dataclass_fields__:
        if name in _FIXED:
            continue
        old, new = getattr(game, name), getattr(placed, name)
        if name in ("status", "phase", "to_move"):
            new = jnp.where(drafting, getattr(picked, name), new)
        else:  # a pick leaves the board and the outcome alone
            new = jnp.where(drafting, old, new)
        changes[name] = jnp.where(legal, new, old)
    return game.replace(**changes)


def observe(game: Game, seat, open_hands: bool):
    """``seat``'s observation (int8 [339]), entry for entry ``spec.observation.encode_observation``."""
    seat = jnp.asarray(seat, jnp.int32)
    other = 1 - seat
    mine, theirs = of(seat, game.status), of(other, game.status)
    my_deck, their_deck = of(seat, game.decks), of(other, game.decks)
    phase = game.phase
    a_cards = is_a_card(my_deck) & ((mine == IN_HAND) | (mine == PLAYED))
    scalars = jnp.stack(
        [
            phase == DRAFT,
            phase == PLAY,
            phase == OVER,
            (phase != OVER) & (game.to_move == seat),
            game.first_player == seat,
            game.max_a_cards,
            jnp.sum(a_cards),
            jnp.sum(mine == IN_HAND),
            jnp.sum(theirs == IN_HAND),
        ]
    ).astype(jnp.int8)
    occupied = game.owner != -1
    board = jnp.concatenate(
        [
            (occupied & (game.owner == seat))[:, None],
            (occupied & (game.owner != seat))[:, None],
            jnp.where(occupied[:, None], game.sides, 0),
        ],
        axis=1,
    ).astype(jnp.int8)
    own = jnp.concatenate([my_deck, (mine[:, None] == jnp.array([UNPICKED, IN_HAND, PLAYED]))], axis=1).astype(jnp.int8)
    shown = bool(open_hands) & (phase != DRAFT)
    unknown = ~shown & ((theirs == IN_HAND) | (theirs == UNPICKED))
    their = jnp.concatenate(
        [
            their_deck,
            (theirs == PLAYED)[:, None],
            (shown & (theirs == IN_HAND))[:, None],
            (shown & (theirs == UNPICKED))[:, None],
            unknown[:, None],
        ],
        axis=1,
    ).astype(jnp.int8)
    observation = jnp.concatenate([scalars, board.reshape(-1), own.reshape(-1), their.reshape(-1)])
    assert observation.shape[-1] == OBSERVATION_SIZE
    return observation


def margin_reward(before, after):
    """Player 0's shaping reward for one placement under ``reward: margin`` (the core's ``MARGIN_SCALE``)."""
    return (margin(after) - margin(before)).astype(jnp.float32) / MARGIN_SCALE

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

from typing import Any, NamedTuple

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
    "observe",
    "of",
    "shaped_reward",
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


def _shifted(flat, offset: int):
    """``flat[t + offset]`` for each t of a ``[..., TILES]`` array, 0 past either end (static slices, no gather)."""
    if offset > 0:
        return jnp.pad(flat[..., offset:], [(0, 0)] * (flat.ndim - 1) + [(0, offset)])
    return jnp.pad(flat[..., :offset], [(0, 0)] * (flat.ndim - 1) + [(-offset, 0)])


def _offsets() -> tuple[int, ...]:
    """The tile offset of each side's neighbour (the same for every tile that has one)."""
    found = []
    for side in range(4):
        steps = {int(n) - t for t, n in enumerate(NEIGHBOUR[:, side]) if n >= 0}
        assert len(steps) == 1
        found.append(steps.pop())
    return tuple(found)


OFFSET = _offsets()
"""``OFFSET[k]``: the neighbour that side k of a card on tile t faces is tile ``t + OFFSET[k]`` (where it has one)."""
TILE_BIT = (1 << np.arange(TILES)).astype(np.int32)
SLOT_BIT = (1 << np.arange(DECK_SIZE)).astype(np.int32)
ALL_TILES = (1 << TILES) - 1
LANE_BITS = tuple(sum(1 << t for t in range(POSITIONS * lane, POSITIONS * (lane + 1))) for lane in range(LANES))
FACED = np.array([HAS_NEIGHBOUR[:, k] @ TILE_BIT for k in range(4)], np.int32)
"""``FACED[k]``: the tiles (as bits) whose card's side k faces a neighbour."""
_MASK_HIGH = np.concatenate([np.arange(DECK_SIZE), DECK_SIZE + np.arange(DECK_SIZE * TILES) // TILES]).astype(np.int32)
_MASK_LOW = np.concatenate([np.full(DECK_SIZE, TILES), np.arange(DECK_SIZE * TILES) % TILES]).astype(np.int32)
"""Action a is legal when bit ``_MASK_HIGH[a]`` of ``picks | hand << 16`` and bit ``_MASK_LOW[a]`` of
``empty | 1 << 15`` are set (a pick's own bit and the always-set bit 15; a placement's card and tile)."""


class Words(NamedTuple):
    """A game's slots and tiles as bits, one int32 per player (``[2]``): bit i of ``unpicked[p]``, ``in_hand[p]``,
    ``played[p]`` and ``a_cards[p]`` tell of player p's deck slot i, bit t of ``tiles[p]`` whether p owns tile t.

    The rules work on these: XLA on a CPU runs a few dozen operations on one integer per game (over the batch, in
    vector registers) far faster than a reduction over 15 or 16 entries per game."""

    unpicked: Any
    in_hand: Any
    played: Any
    a_cards: Any
    tiles: Any


def bits(flags, weights):
    """The set bits of ``flags[..., i]`` (bool) as one int32: ``weights[i]`` is bit i (``TILE_BIT`` or ``SLOT_BIT``)."""
    return jnp.sum(jnp.where(flags, weights, 0), axis=-1, dtype=jnp.int32)


def words(game: Game) -> Words:
    """The bits of ``game``'s arrays."""
    kinds = bits(game.status[:, None, :] == jnp.array([UNPICKED, IN_HAND, PLAYED])[:, None], SLOT_BIT)  # [2, 3]
    return Words(
        unpicked=kinds[:, 0],
        in_hand=kinds[:, 1],
        played=kinds[:, 2],
        a_cards=bits(is_a_card(game.decks), SLOT_BIT),
        tiles=bits(game.owner == jnp.arange(2)[:, None], TILE_BIT),
    )


def _toward(tiles, side: int):
    """The tiles (bits) whose side ``side`` faces a tile of ``tiles`` (bits)."""
    offset = OFFSET[side]
    moved = tiles >> offset if offset > 0 else tiles << -offset
    return moved & FACED[side]


def _taken(sides):
    """``[side]`` bits: the tiles whose side k is beaten by the card it faces (rows of ``sides`` [15, 4], no gather)."""
    faced = jnp.stack([_shifted(sides[:, SIDE_FACING[k]], OFFSET[k]) for k in range(4)])  # [4, 15], 0 off the board
    return bits(beats(faced, sides.T), TILE_BIT) & FACED


def _popcount(x):
    return jax.lax.population_count(x)


def _scores(mine, theirs):
    """Lane-majority scores of two players' tiles (bits)."""
    got = [(_popcount(mine & lane), _popcount(theirs & lane)) for lane in LANE_BITS]
    return sum(jnp.where(m > t, m, 0) for m, t in got), sum(jnp.where(t > m, t, 0) for m, t in got)


def _or(terms):
    out = 0
    for term in terms:
        out = out | term
    return out


def _kept(values, one):
    """``values`` (int scalars) unchanged, each computed once: divided by ``one`` (1, not a constant to XLA).

    XLA's CPU fusion copies a cheap expression of a game's scalars into every entry of each array that reads
    it (the 339 of the observation, the 256 of the mask); it does not copy an integer division by a variable."""
    kept = jax.lax.div(jnp.stack([jnp.asarray(v, jnp.int32) for v in values]), one)
    return list(kept)


def _mask_words(phase, mover, max_a_cards, w: Words):
    """The bits of the legal picks, the mover's hand in the play, and the empty tiles."""
    a_cards = of(mover, w.a_cards)
    hand, unpicked = of(mover, w.in_hand), of(mover, w.unpicked)
    held = _popcount(a_cards & (hand | of(mover, w.played)))
    picks = jnp.where(phase == DRAFT, unpicked & jnp.where(held < max_a_cards, -1, ~a_cards), 0)
    return picks, jnp.where(phase == PLAY, hand, 0), ~(w.tiles[0] | w.tiles[1]) & ALL_TILES


def mask_of(picks, hand, empty):
    """The 256 actions' mask (bool) from the bits of the legal picks, the mover's hand and the empty tiles."""
    high = (picks | (hand << DECK_SIZE))[..., None] >> _MASK_HIGH
    low = (empty | (1 << TILES))[..., None] >> _MASK_LOW
    return (high & low & 1).astype(jnp.bool_)


def legal_mask(game: Game):
    """The rules' legal actions of the player to move (bool [256]); all False once the game is over."""
    return mask_of(*_mask_words(game.phase, game.to_move, game.max_a_cards, words(game)))


def apply(game: Game, action, legal=True) -> Game:
    """The game after the player to move takes ``action``, with its captures and end; unchanged where ``legal``
    is False (the caller's check: not checked here)."""
    return advance(game, action, legal)[0]


def advance(game: Game, action, legal=True):
    """``apply``'s game, with its words and the bits of its legal picks, hand and empty tiles (``mask_of``'s).

    Each field is written once, from a few integers per game: the pick's or placement's slot, and the board's
    tiles as bits (a capture is a shift of those bits), so no array is gathered, scattered or selected twice."""
    w = words(game)
    p = game.to_move
    opponent = 1 - p
    drafting = game.phase == DRAFT
    placing = ~drafting & legal
    place = jnp.clip(action - PLACE_OFFSET, 0, DECK_SIZE * TILES - 1)  # not negative: lax.div needs no sign fix
    card, tile = jax.lax.div(place, TILES), jax.lax.rem(place, TILES)
    slot = jnp.where(drafting, jnp.clip(action, 0, DECK_SIZE - 1), card)
    slot_bit = 1 << slot
    mover = (jnp.arange(2) == p)[:, None]
    status = jnp.where(
        legal & mover & (jnp.arange(DECK_SIZE) == slot),
        jnp.where(drafting, IN_HAND, PLAYED).astype(game.status.dtype),
        game.status,
    )

    # the placement: the card's sides onto the tile, then the captures on the board's bits
    deck = of(p, game.decks)
    card_sides = deck[card]
    at_tile = jnp.arange(TILES) == tile
    taken = _taken(jnp.where(at_tile[:, None], card_sides, game.sides))
    tile_bit = 1 << tile
    one = tile_bit >> tile
    theirs = of(opponent, w.tiles) & ~tile_bit
    direct = theirs & _or(taken[k] & _toward(tile_bit, k) for k in range(4))
    theirs = theirs & ~direct
    domino = theirs & _or(taken[k] & _toward(direct, k) for k in range(4))  # one level
    mine, theirs = _kept(
        [
            jnp.where(placing, of(p, w.tiles) | tile_bit | direct | domino, of(p, w.tiles)),
            jnp.where(placing, theirs & ~domino, of(opponent, w.tiles)),
        ],
        one,
    )

    complete = [(mine & lane) == lane for lane in LANE_BITS]
    controlled = complete[0] | complete[1] | complete[2]
    full = (mine | theirs) == ALL_TILES
    hand = jnp.where(legal & mover[:, 0], jnp.where(drafting, w.in_hand | slot_bit, w.in_hand & ~slot_bit), w.in_hand)
    theirs_left = of(opponent, hand) != 0
    over = controlled | full | ~(theirs_left | (of(p, hand) != 0))
    mine_score, their_score = _scores(mine, theirs)
    by_score = jnp.where(mine_score > their_score, p, jnp.where(their_score > mine_score, opponent, -1))
    code = jnp.where(controlled, LANE_CONTROL, jnp.where(full, FULL_BOARD, NO_MOVES))
    lane = jnp.where(complete[0], 0, jnp.where(complete[1], 1, 2))
    drafted = (_popcount(hand[0]) >= HAND_SIZE) & (_popcount(hand[1]) >= HAND_SIZE)
    phase = jnp.where(
        legal, jnp.where(drafting, jnp.where(drafted, PLAY, DRAFT), jnp.where(over, OVER, PLAY)), game.phase
    )
    to_move = jnp.where(
        legal,
        jnp.where(
            drafting, jnp.where(drafted, game.first_player, opponent), jnp.where(over | theirs_left, opponent, p)
        ),
        p,
    )
    changed = legal & mover[:, 0]
    after = Words(
        unpicked=jnp.where(changed, w.unpicked & ~slot_bit, w.unpicked),
        in_hand=hand,
        played=jnp.where(changed, jnp.where(drafting, w.played & ~slot_bit, w.played | slot_bit), w.played),
        a_cards=w.a_cards,
        tiles=jnp.where(p == 0, jnp.stack([mine, theirs]), jnp.stack([theirs, mine])),
    )
    kept = _kept(
        [
            phase,
            to_move,
            jnp.where(placing, jnp.where(over, jnp.where(controlled, p, by_score), -1), game.winner),
            jnp.where(placing, jnp.where(over, code, 0), game.termination),
            jnp.where(placing, jnp.where(over, mine_score, 0), of(p, game.scores)),
            jnp.where(placing, jnp.where(over, their_score, 0), of(opponent, game.scores)),
            jnp.where(placing, jnp.where(controlled, lane, -1), game.lane),
            *_mask_words(phase, to_move, game.max_a_cards, after),
            *after.unpicked,
            *after.in_hand,
            *after.played,
        ],
        one,
    )
    phase, to_move, winner, termination, mine_score, their_score, lane, picks, hand, empty = kept[:10]
    after = after._replace(
        unpicked=jnp.stack(kept[10:12]), in_hand=jnp.stack(kept[12:14]), played=jnp.stack(kept[14:16])
    )
    small = game.winner.dtype
    game = game.replace(
        status=status,
        sides=jnp.where(placing & at_tile[:, None], card_sides, game.sides),
        owner=jnp.where((mine & TILE_BIT) != 0, p, jnp.where((theirs & TILE_BIT) != 0, opponent, -1)).astype(
            game.owner.dtype
        ),
        phase=phase.astype(game.phase.dtype),
        to_move=to_move.astype(game.to_move.dtype),
        winner=winner.astype(small),
        termination=termination.astype(small),
        scores=jnp.where(p == 0, jnp.stack([mine_score, their_score]), jnp.stack([their_score, mine_score])).astype(
            small
        ),
        lane=lane.astype(small),
    )
    return game, after, (picks, hand, empty)


def observe(game: Game, seat, open_hands: bool):
    """``seat``'s observation (int8 [339]), entry for entry ``spec.observation.encode_observation``."""
    return observation(game, words(game), seat, open_hands)


def observation(game: Game, w: Words, seat, open_hands: bool):
    """``observe``'s observation, from the game's words."""
    seat = jnp.asarray(seat, jnp.int32)
    other = 1 - seat
    my_deck, their_deck = of(seat, game.decks), of(other, game.decks)
    mine = [of(seat, x) for x in (w.unpicked, w.in_hand, w.played)]
    theirs = [of(other, x) for x in (w.unpicked, w.in_hand, w.played)]
    phase = game.phase
    scalars = jnp.stack(
        [
            phase == DRAFT,
            phase == PLAY,
            phase == OVER,
            (phase != OVER) & (game.to_move == seat),
            game.first_player == seat,
            game.max_a_cards,
            _popcount(of(seat, w.a_cards) & (mine[1] | mine[2])),
            _popcount(mine[1]),
            _popcount(theirs[1]),
        ]
    ).astype(jnp.int8)
    my_tiles, their_tiles = of(seat, w.tiles), of(other, w.tiles)
    occupied = ((my_tiles | their_tiles) & TILE_BIT) != 0
    board = jnp.concatenate(
        [
            ((my_tiles & TILE_BIT) != 0)[:, None],
            ((their_tiles & TILE_BIT) != 0)[:, None],
            jnp.where(occupied[:, None], game.sides, 0),
        ],
        axis=1,
    ).astype(jnp.int8)
    own = jnp.concatenate([my_deck, jnp.stack([(x & SLOT_BIT) != 0 for x in mine], axis=1)], axis=1).astype(jnp.int8)
    shown = bool(open_hands) & (phase != DRAFT)
    hidden = jnp.where(shown, 0, theirs[0] | theirs[1])
    flags = [theirs[2], jnp.where(shown, theirs[1], 0), jnp.where(shown, theirs[0], 0), hidden]
    their = jnp.concatenate([their_deck, jnp.stack([(x & SLOT_BIT) != 0 for x in flags], axis=1)], axis=1)
    observation = jnp.concatenate([scalars, board.reshape(-1), own.reshape(-1), their.astype(jnp.int8).reshape(-1)])
    assert observation.shape[-1] == OBSERVATION_SIZE
    return observation


_SHAPED_SPAN = 3 * MARGIN_SCALE
_SHAPED = (np.arange(-_SHAPED_SPAN, _SHAPED_SPAN + 1) / MARGIN_SCALE).astype(np.float32)
"""``_SHAPED[n + _SHAPED_SPAN]``: n / MARGIN_SCALE rounded once to float32, for n within a result (at most 1 in size,
as a multiple of the scale) and a margin change (at most 2 x 15) of each other."""


def shaped_reward(result, before_owner, after_owner):
    """Player 0's reward under ``reward: margin``: ``result`` (an integer result reward) plus the lane-score margin's
    change over ``MARGIN_SCALE``, rounded once to float32 as the core's float sum is. Looked up in a table: a
    float sum compiles to a fused multiply-add in some fusions and not in others (two paths differ in the last bit)."""
    steps = result * MARGIN_SCALE + margin(after_owner) - margin(before_owner)
    return jnp.asarray(_SHAPED)[steps + _SHAPED_SPAN]

"""What one seat knows, as a fast-engine row: the observation decoded, hidden cards sampled.

Search agents never see the core state when the rules hide something: they rebuild the
position from their own observation. "Me" becomes player 0 and the opponent player 1
(the rules are the same for both seats once the draft order is fixed by whose turn it
is). Cards the observer cannot place (the opponent's secret picks, or its hidden hand)
are marked unknown; ``determinise`` deals them consistently with what is known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_env.core.actions import DECK_SIZE
from trinity_env.core.board import TILES
from trinity_env.core.decks import legal_a_counts
from trinity_env.fast.layout import (
    A_HELD0,
    ABSENT,
    DECK_SIZE0,
    DRAFT,
    FIRST_PLAYER,
    HAND0,
    IN_HAND,
    LANE,
    MAX_A,
    OVER,
    PHASE,
    PLAY,
    PLAYED,
    TO_MOVE,
    UNPICKED,
    WINNER,
    Batch,
)
from trinity_env.spec.observation import (
    BOARD_OFFSET,
    OWN_CARD_FEATURES,
    OWN_DECK_OFFSET,
    THEIR_CARD_FEATURES,
    THEIR_DECK_OFFSET,
    TILE_FEATURES,
)


@dataclass
class SeatView:
    """A one-row batch of the observed position, plus the opponent's unknown slots."""

    batch: Batch
    unknown: np.ndarray  # opponent deck slots that may be in its hand or not
    hidden_in_hand: int  # how many of them are in its hand
    a_budget: int  # how many A cards may be among those

    @property
    def complete(self) -> bool:
        return self.unknown.size == 0 or self.hidden_in_hand == 0


def observation_blocks(observations):
    """The board and the two decks of ``observations`` (a numpy array or a torch tensor, the observation on its
    last axis), as views in the layout of ``spec.observation``: ``[..., TILES, TILE_FEATURES]`` (the board),
    ``[..., DECK_SIZE, OWN_CARD_FEATURES]`` (my deck) and ``[..., DECK_SIZE, THEIR_CARD_FEATURES]`` (theirs)."""
    lead = tuple(observations.shape[:-1])
    return (
        observations[..., BOARD_OFFSET:OWN_DECK_OFFSET].reshape(*lead, TILES, TILE_FEATURES),
        observations[..., OWN_DECK_OFFSET:THEIR_DECK_OFFSET].reshape(*lead, DECK_SIZE, OWN_CARD_FEATURES),
        observations[..., THEIR_DECK_OFFSET:].reshape(*lead, DECK_SIZE, THEIR_CARD_FEATURES),
    )


def decode(observation: np.ndarray) -> SeatView:
    """Rebuild the position an observation shows; unknown opponent slots start as unpicked."""
    obs = np.asarray(observation, dtype=np.int8)
    batch = Batch.empty(1)
    board, mine, theirs = observation_blocks(obs)
    batch.owner[0] = np.where(board[:, 0] == 1, 0, np.where(board[:, 1] == 1, 1, -1))
    batch.sides[0] = board[:, 2:6]
    batch.decks[0, 0] = mine[:, :4]
    batch.decks[0, 1] = theirs[:, :4]
    present_mine = mine[:, :4].any(axis=1)
    present_theirs = theirs[:, :4].any(axis=1)
    batch.status[0, 0] = np.where(
        ~present_mine, ABSENT, np.where(mine[:, 4] == 1, UNPICKED, np.where(mine[:, 5] == 1, IN_HAND, PLAYED))
    )
    their_status = np.full(16, ABSENT, np.int8)
    their_status[theirs[:, 4] == 1] = PLAYED
    their_status[theirs[:, 5] == 1] = IN_HAND
    their_status[(theirs[:, 6] == 1) | (theirs[:, 7] == 1)] = UNPICKED
    their_status[~present_theirs] = ABSENT
    batch.status[0, 1] = their_status
    unknown = np.flatnonzero((theirs[:, 7] == 1) & present_theirs)

    info = batch.info[0]
    info[PHASE] = DRAFT if obs[0] else (PLAY if obs[1] else OVER)
    info[TO_MOVE] = 0 if obs[3] else 1
    info[FIRST_PLAYER] = 0 if obs[4] else 1
    info[MAX_A] = obs[5]
    info[A_HELD0] = obs[6]
    info[HAND0] = obs[7]
    info[HAND0 + 1] = obs[8]
    info[DECK_SIZE0] = int(present_mine.sum())
    info[DECK_SIZE0 + 1] = int(present_theirs.sum())
    info[WINNER] = -1
    info[LANE] = -1
    is_a = (batch.decks[0, 1] == 10).any(axis=1)
    known_in_hand = int((their_status == IN_HAND).sum())
    known_a = int((is_a & ((their_status == IN_HAND) | (their_status == PLAYED))).sum())
    info[A_HELD0 + 1] = known_a
    hidden = int(obs[8]) - known_in_hand if unknown.size else 0
    return SeatView(batch, unknown, hidden, int(obs[5]) - known_a)


def determinise(view: SeatView, rng: np.random.Generator) -> Batch:
    """A copy of the view's row with the opponent's hidden hand dealt uniformly at random
    from the hands consistent with what the observer knows (size and the A limit)."""
    batch = Batch(*(a.copy() for a in view.batch))
    if view.complete:
        return batch
    deck = batch.decks[0, 1]
    slots = view.unknown
    is_a = (deck[slots] == 10).any(axis=1)
    a_slots, plain_slots = slots[is_a], slots[~is_a]
    size = view.hidden_in_hand
    counts, weights = legal_a_counts(a_slots.size, plain_slots.size, size, view.a_budget)
    weights = np.array(weights, float)
    if weights.sum() == 0:  # nothing consistent (should not happen): ignore the A limit
        chosen = rng.choice(slots, size, replace=False)
    else:
        k = int(rng.choice(counts, p=weights / weights.sum()))
        chosen = np.concatenate(
            [rng.choice(a_slots, k, replace=False), rng.choice(plain_slots, size - k, replace=False)]
        )
    batch.status[0, 1, chosen] = IN_HAND
    batch.info[0, A_HELD0 + 1] += int((deck[chosen] == 10).any(axis=1).sum())
    return batch

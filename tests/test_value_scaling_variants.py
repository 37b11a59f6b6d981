"""The scaling study's input variants (``benchmarks.value_scaling``): the opponent's view its threats are read
from, and the variants' values, which must depend on the placements they pool."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmarks.value_scaling import VARIANTS, their_view
from trinity_env.agents.view import observation_blocks
from trinity_env.core.board import TILES
from trinity_env.fast.layout import DECK_SIZE
from trinity_env.fast.tactics import tactical_batch
from trinity_env.spec.observation import action_mask, encode_observation

from games import random_positions


@pytest.fixture(scope="module")
def positions():
    return random_positions(24, seed=5, most_moves=14, draft="random", open_hands=True)


def test_their_view_gives_the_opponents_own_tactics(positions):
    """The threats are the tactical features the opponent's own observation gives, at each of its placements (its
    cards in hand on the empty tiles)."""
    mover = np.stack([encode_observation(s, s.to_move, True) for s in positions])
    opponent = np.stack([encode_observation(s, 1 - s.to_move, True) for s in positions])
    theirs, own = tactical_batch(their_view(mover)), tactical_batch(opponent)
    board, hand, _ = observation_blocks(opponent)
    empty = (board[..., 0] == 0) & (board[..., 1] == 0)
    placements = (hand[..., 5] == 1)[:, :, None] & empty[:, None, :]
    assert placements.any(axis=(1, 2)).all()
    np.testing.assert_array_equal(theirs[placements], own[placements])
    assert own[placements].any()  # some capture or lane feature is set: the comparison is not of zeros


def test_their_view_leaves_the_input_alone(positions):
    mover = np.stack([encode_observation(s, s.to_move, True) for s in positions])
    before = mover.copy()
    their_view(mover)
    np.testing.assert_array_equal(mover, before)


def _inputs(positions):
    observations = torch.from_numpy(np.stack([encode_observation(s, s.to_move, True) for s in positions]))
    masks = torch.from_numpy(np.stack([action_mask(s, s.to_move) for s in positions]))
    return observations, masks, torch.from_numpy(tactical_batch(observations.numpy()))


@pytest.mark.parametrize("name", ["tactical-value-64x2", "threats-64x2"])
def test_the_value_reads_the_legal_placements_alone(positions, name):
    """The mover's placements' tactics move the value where they are legal, and not where they are not."""
    torch.manual_seed(0)
    network = VARIANTS[name]().eval()
    observations, masks, tactical = _inputs(positions)
    with torch.no_grad():
        logits, value = network(observations, masks, tactical)
        legal = masks[:, DECK_SIZE:].reshape(-1, DECK_SIZE, TILES, 1).bool()
        _, illegal_changed = network(observations, masks, torch.where(legal, tactical, tactical + 3.0))
        _, legal_changed = network(observations, masks, torch.where(legal, tactical + 3.0, tactical))
    assert logits.shape == (len(positions), 256) and value.shape == (len(positions),)
    torch.testing.assert_close(illegal_changed, value, rtol=0, atol=0)
    assert not torch.allclose(legal_changed, value)


def test_the_threats_value_reads_the_opponents_placements(positions):
    """The threats pool is wired into the value: its weights move the value and not the policy (a pool over no
    placement, as a wrong hand or tile index would give, is all zeros and would move nothing)."""
    torch.manual_seed(0)
    network = VARIANTS["threats-64x2"]().eval()
    observations, masks, tactical = _inputs(positions)
    with torch.no_grad():
        logits, value = network(observations, masks, tactical)
        network.threat_tactics.weight.add_(0.5)
        moved_logits, moved = network(observations, masks, tactical)
    torch.testing.assert_close(moved_logits, logits, rtol=0, atol=0)
    assert not torch.allclose(moved, value)

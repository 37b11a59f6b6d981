"""The policy's tactical features agree with the rules on random positions."""

from __future__ import annotations

import numpy as np
import torch

from trinity_env.agents.networks.tactics import tactical_features
from trinity_env.core import LANE_TILES, decode_action, tile_coords
from trinity_env.spec.observation import encode_observation

from games import random_positions


def test_direct_captures_and_lane_completion_match_the_rules():
    checked = completions = 0
    for state in random_positions(150, 0, 12, draft="dealt"):
        seat = state.to_move
        features = tactical_features(torch.as_tensor(encode_observation(state, seat, True))[None])[0]
        for action in state.legal_actions():
            _, card, tile = decode_action(action)
            after = state.apply(action)
            step = after.last
            assert features[card, tile, 0] == len(step.captured), (state, action)
            if not step.captured:
                assert features[card, tile, 1] == 0  # the domino only follows a capture
            if not step.domino:  # lane completion is exact when no domino card joins the lane
                lane, _ = tile_coords(tile)
                won = all(after.owners[t] == seat for t in LANE_TILES[lane])
                assert bool(features[card, tile, 2]) == won, (state, action)
                completions += won
            checked += 1
    assert checked > 1000 and completions > 0


def test_the_domino_feature_never_misses_a_chain():
    chains = 0
    for state in random_positions(200, 1, 12, draft="dealt"):
        seat = state.to_move
        features = tactical_features(torch.as_tensor(encode_observation(state, seat, True))[None])[0]
        for action in state.legal_actions():
            _, card, tile = decode_action(action)
            domino = len(state.apply(action).last.domino)
            assert features[card, tile, 1] >= domino  # it may count a card twice, never misses one
            chains += domino > 0
    assert chains > 10


def test_the_network_gives_the_same_logits_with_features_passed_in():
    from trinity_env.agents.networks.ppo_network import PolicyNetwork
    from trinity_env.spec.observation import action_mask

    torch.manual_seed(0)
    network = PolicyNetwork(32, 1, tactics=True)
    states = random_positions(8, 2, 12, draft="dealt")
    observations = torch.as_tensor(np.stack([encode_observation(s, s.to_move, True) for s in states]))
    masks = torch.as_tensor(np.stack([action_mask(s, s.to_move) for s in states]))
    logits, values = network(observations, masks)
    again, values_again = network(observations, masks, tactical_features(observations))
    assert torch.equal(logits, again) and torch.equal(values, values_again)
    assert network(observations, masks, torch.zeros_like(tactical_features(observations)))[0].ne(logits).any()

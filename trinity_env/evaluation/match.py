"""One game between two agents, each seeing only what its seat may see."""

from __future__ import annotations

import random

from trinity_env.agents.base import Agent, visible_state
from trinity_env.core import GameState
from trinity_env.envs.config import EnvConfig
from trinity_env.envs.observation import action_mask, encode_observation


def play_game(agents: tuple[Agent, Agent], config: EnvConfig, seed: int) -> GameState:
    """Play one game, ``agents[p]`` in seat p; the final state. Everything random comes from ``seed``."""
    rng = random.Random(seed)
    state = config.new_game(rng)
    for seat, agent in enumerate(agents):
        agent.reset(seed * 2 + seat)
    while not state.is_over:
        seat = state.to_move
        observation = {
            "observation": encode_observation(state, seat, config.open_hands),
            "action_mask": action_mask(state, seat),
        }
        state = state.apply(agents[seat].act(observation, visible_state(state, config.open_hands)))
    return state

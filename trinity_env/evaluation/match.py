"""One game between two agents, each seeing only what its seat may see."""

from __future__ import annotations

import random
from collections.abc import Callable

from trinity_env.agents.base import Agent, visible_state
from trinity_env.core import GameState
from trinity_env.envs.config import EnvConfig
from trinity_env.envs.observation import action_mask, encode_observation


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
        observation = {
            "observation": encode_observation(state, seat, config.open_hands),
            "action_mask": action_mask(state, seat),
        }
        state = state.apply(agents[seat].act(observation, visible_state(state, config.open_hands)))
        if on_state is not None:
            on_state(state)
    return state

"""The agent interface, re-exported where players are built.

``Agent``, ``RandomAgent`` and ``as_agent`` are defined in ``trinity_env.envs.players``,
below this package, so that the envs can host an opponent without importing search.
"""

from trinity_env.envs.players import Agent, Observation, PolicyAgent, RandomAgent, as_agent, visible_state

__all__ = ["Agent", "Observation", "PolicyAgent", "RandomAgent", "as_agent", "visible_state"]

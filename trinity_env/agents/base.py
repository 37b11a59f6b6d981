"""The agent interface, re-exported where players are built.

``Agent``, ``RandomAgent`` and ``visible_state`` are defined in ``trinity_env.spec.agent``,
below this package, so that the envs can host an opponent without importing search.
``trinity_env.agents.as_agent`` also accepts agent specs (``"greedy"``).
"""

from trinity_env.spec.agent import Agent, Observation, PolicyAgent, RandomAgent, visible_state

__all__ = ["Agent", "Observation", "PolicyAgent", "RandomAgent", "visible_state"]

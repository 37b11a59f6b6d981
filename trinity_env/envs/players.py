"""The agent interface, re-exported: it lives in ``trinity_env.spec.agent``.

The envs host an opponent through this interface and take an ``Agent`` (or a function of the
observation, or ``"random"``); agent specs such as ``"greedy"`` are built above the envs,
by ``trinity_env.agents.make`` and the public factories (``trinity_env.registration``).
"""

from trinity_env.spec.agent import Agent, Observation, PolicyAgent, RandomAgent, as_agent, visible_state

__all__ = ["Agent", "Observation", "PolicyAgent", "RandomAgent", "as_agent", "visible_state"]

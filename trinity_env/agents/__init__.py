"""Players: the agent interface and the agents built on it."""

from trinity_env.agents.base import Agent, Observation, PolicyAgent, RandomAgent, as_agent, visible_state

__all__ = ["Agent", "Observation", "PolicyAgent", "RandomAgent", "as_agent", "visible_state"]

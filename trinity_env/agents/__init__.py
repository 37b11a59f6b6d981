"""Players: the agent interface, the baselines, MCTS, and ``make(spec)`` to name any of them."""

from trinity_env.agents.base import Agent, Observation, PolicyAgent, RandomAgent, as_agent, visible_state
from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.agents.registry import AgentSpecError, make, shipped

__all__ = [
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "LookaheadAgent",
    "MCTSAgent",
    "Observation",
    "PolicyAgent",
    "RandomAgent",
    "as_agent",
    "make",
    "shipped",
    "visible_state",
]

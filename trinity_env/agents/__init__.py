"""Players: the agent interface, the baselines, MCTS, and ``make(spec)`` to name any of them."""

from __future__ import annotations

from collections.abc import Callable

from trinity_env.agents.baselines import GreedyAgent, LookaheadAgent
from trinity_env.agents.mcts import MCTSAgent
from trinity_env.agents.registry import AgentSpecError, shipped
from trinity_env.agents.spec import AgentSpec, built, make
from trinity_env.spec import agent as _interface
from trinity_env.spec.agent import Agent, Observation, PolicyAgent, RandomAgent, visible_state


def as_agent(opponent: Agent | Callable[[Observation], int] | str) -> Agent:
    """An ``Agent`` from an agent, a function of the observation, or an agent spec (``"greedy"``, built by ``make``).

    The envs take agents only (``trinity_env.spec.agent.env_opponent``); specs become agents here,
    above them, and in the factories that gymnasium and PettingZoo call.
    """
    return _interface.env_opponent(built(opponent))


__all__ = [
    "Agent",
    "AgentSpec",
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

"""A perfect player for tests: the exact solver's move (open-hand play positions only)."""

from __future__ import annotations

from trinity_env.agents import Agent
from trinity_env.search.solver import Solver


class PerfectAgent(Agent):
    """Plays a move that keeps the solver's value of the position (open hands only)."""

    def __init__(self):
        self.solver = Solver(table_bits=16)

    def act(self, observation, state=None):
        _, move = self.solver.best_move(state)
        return move.action

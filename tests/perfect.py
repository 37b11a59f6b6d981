"""Perfect play for tests: the exact solver's move and the exact value of a move (open-hand play positions only)."""

from __future__ import annotations

from trinity_env.agents import Agent
from trinity_env.search.solver import Solver


class PerfectAgent(Agent):
    """Plays a move that keeps the solver's value of the position (open hands only)."""

    def __init__(self):
        self.solver = Solver(table_bits=16)

    def act(self, observation, state=None):
        _, move = self.solver.best_move(state)
        return move.to_action(state)


def value_after(solver: Solver, state, action: int) -> int:
    """The exact value for ``state``'s mover after ``action``: +1 a win, 0 a draw, -1 a loss."""
    child = state.apply(action)
    if child.is_over:
        return 0 if child.winner is None else (1 if child.winner == state.to_move else -1)
    value = solver.value(child)
    return value if child.to_move == state.to_move else -value

"""Uploaded replays and the exact solver's review of them.

- ``UploadedReplay``: a replay's states, for stepping through, with the reviews of its late positions.
- ``Reviewer``: one exact solver for the whole server (its table is large), one search at a time, under a
  budget per position (``REVIEW_MAX_NODES``, ``REVIEW_MAX_SECONDS``) and only where at most ``REVIEW_MAX_EMPTY``
  tiles are empty.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from trinity_env.core import GameState, Move, Replay
from trinity_env.core.replay import HUMAN
from trinity_env.core.state import PLAY
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.views import state_json

REVIEW_MAX_EMPTY = 9
"""The review solves positions with at most this many empty tiles (9: about 0.2 s each here)."""
REVIEW_MAX_NODES = 3_000_000
REVIEW_MAX_SECONDS = 10.0
"""The review's budget per position: the node budget decides (the same on any machine); the clock is a backstop."""


HUMAN_NAME = "Human"
"""How a replay's page names a human player (Play says "You" to the one at the board)."""


def plain_names(agents: tuple[str, ...] | None, choices: Mapping[str, AgentChoice]) -> list[str] | None:
    """How the page names a replay's players, as Play and Watch name them: an agent of the server's list by the
    list's short name (``level:2``: ``Level 2 — beginner``), matched by name, else by spec; a human as ``Human``;
    any other by the replay's label. ``None`` where the replay names no agents (the page says the colours)."""
    if agents is None:
        return None
    by_spec = {choice.spec: choice for choice in reversed(list(choices.values()))}  # the list's first of a spec
    named = []
    for agent in agents:
        choice = choices.get(agent) or by_spec.get(agent)
        named.append(HUMAN_NAME if agent == HUMAN else choice.title if choice is not None else agent)
    return named


class UploadedReplay:
    """A replay's states, for stepping through, with the solver's review of its late positions; ``names``: its
    players as the page names them (``plain_names``)."""

    def __init__(self, replay_id: str, replay: Replay, states: list[GameState], names: list[str] | None = None):
        self.id = replay_id
        self.replay = replay
        self.states = states
        self.names = names
        self.reviews: dict[int, dict[str, Any]] = {}

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rules": dict(self.replay.rules),
            "result": self.replay.result,
            "agents": None if self.replay.agents is None else list(self.replay.agents),
            "names": self.names,
            "plies": len(self.states) - 1,
            "frames": [state_json(s) for s in self.states],
            "reviewable": [self.reviewable(k) is None for k in range(len(self.states))],
            "review_max_empty": REVIEW_MAX_EMPTY,
        }

    def reviewable(self, ply: int) -> str | None:
        """Why position ``ply`` has no review, or ``None`` if it can have one."""
        state = self.states[ply]
        if state.phase != PLAY or state.is_over:
            return "only play positions before the end are reviewed"
        empty = len(state.empty_tiles())
        if empty > REVIEW_MAX_EMPTY:
            return f"{empty} empty tiles: positions with at most {REVIEW_MAX_EMPTY} are reviewed"
        if not state.legal_actions():
            return "the player to move has no legal move"
        return None


class Reviewer:
    """One exact solver for the whole server (its table is large), one search at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._solver = None

    def review(self, upload: UploadedReplay, ply: int) -> dict[str, Any]:
        from trinity_env.search.solver import Solver, SolverBudgetError

        cached = upload.reviews.get(ply)
        if cached is not None:
            return cached
        why_not = upload.reviewable(ply)
        if why_not is not None:
            return {"ply": ply, "available": False, "reason": why_not}
        state = upload.states[ply]
        with self._lock:
            if self._solver is None:
                self._solver = Solver(table_bits=20)
            try:
                solution = self._solver.solve(state, max_nodes=REVIEW_MAX_NODES, max_seconds=REVIEW_MAX_SECONDS)
            except SolverBudgetError as err:
                return {"ply": ply, "available": False, "reason": f"the solver ran out of its budget ({err})"}
        played = None
        if ply + 1 < len(upload.states) and upload.states[ply + 1].last is not None:
            step = upload.states[ply + 1].last
            played = Move.placed(step).to_json()
        best = [move.to_json() for move in solution.best_moves]
        review = {
            "ply": ply,
            "available": True,
            "to_move": state.to_move,
            "value": solution.value,
            "winner": solution.winner,
            "best_moves": best,
            "played": played,
            "played_best": None if played is None else played in best,
            "nodes": solution.nodes,
            "seconds": round(solution.seconds, 3),
        }
        upload.reviews[ply] = review
        return review

"""One game the web server holds: ``Game``, its states (the server's copy, so a reload loses nothing), its seats
and agents, and a lock so that one move at a time is made.

``view()`` shows it as the seat playing it may see it (``trinity_env.web.views``): the opponent's draft picks, and
its hand with hidden hands, stay hidden until the game is over. A move it refuses raises ``ApiError``. Nothing here
imports Starlette.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from trinity_env.agents.spec import make
from trinity_env.core import GameState, IllegalMoveError, Replay, TrinityError
from trinity_env.core.replay import HUMAN
from trinity_env.core.state import DRAFT, PLAY, lane_scores
from trinity_env.spec.agent import Agent, visible_state
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.errors import ApiError
from trinity_env.web.views import TERMINATION_TEXT, outcome_json, placement_previews, state_json, transition_json

SEED_LIMIT = 2**31


class Game:
    """One game the server holds: its states, its seats (a person or an agent) and its agents.

    ``seats[p]`` is the ``AgentChoice`` of seat p, or ``None`` for the person playing it.
    Agents are built on first use and dropped once the game is over. A person may resign
    (``resign``): the rules have no such ending, so the game keeps its last state and the
    view reports the resignation as the outcome.
    """

    def __init__(
        self,
        game_id: str,
        seats: Sequence[AgentChoice | None],
        *,
        draft: str,
        open_hands: bool,
        first_player: int,
        seed: int,
        on_build: Callable[[Game], None] | None = None,
    ):
        self.id = game_id
        self.seats = tuple(seats)
        self.human = next((p for p, seat in enumerate(self.seats) if seat is None), None)
        self.draft = draft
        self.open_hands = open_hands
        self.seed = seed
        config = make_config(draft=draft, first_player=first_player)
        self.states: list[GameState] = [config.new_game(random.Random(seed))]
        self._agents: list[Agent | None] = [None, None]
        self._on_build = on_build
        self.lock = threading.Lock()
        self.created = time.time()
        self.updated = self.created
        self.resigned: int | None = None
        """The seat that resigned, if one did."""
        self.review_id: str | None = None
        """The uploaded replay made from this game by ``GameStore.review_game`` (reused while the store keeps it)."""

    @property
    def mode(self) -> str:
        return "watch" if self.human is None else "play"

    @property
    def state(self) -> GameState:
        return self.states[-1]

    @property
    def ply(self) -> int:
        """Actions taken so far (picks and placements)."""
        return len(self.states) - 1

    @property
    def finished(self) -> bool:
        """Over by the rules, or by a resignation."""
        return self.state.is_over or self.resigned is not None

    @property
    def revealed(self) -> bool:
        """Whether the viewer of the game sees everything: a spectator always, a player once the game is finished."""
        return self.human is None or self.finished

    @property
    def replayable(self) -> bool:
        """Whether the game's replay may be had: it hides nothing any more, and it is not a draft that a
        resignation cut short (a replay's picks must complete the draft)."""
        return self.revealed and not (self.resigned is not None and self.state.phase == DRAFT)

    def agent_to_move(self) -> bool:
        return not self.finished and self.seats[self.state.to_move] is not None

    def outcome(self) -> dict[str, Any] | None:
        """How the game ended (the rules' outcome, or the resignation: the other seat wins), else ``None``."""
        state = self.state
        if state.outcome is not None:
            return outcome_json(state.outcome)
        if self.resigned is None:
            return None
        scores = lane_scores(state.owners)
        return {
            "winner": 1 - self.resigned,
            "scores": list(scores),
            "termination": "resignation",
            "termination_text": TERMINATION_TEXT["resignation"],
            "lane": None,
            "resigned": self.resigned,
        }

    def _state_json(self, state: GameState) -> dict[str, Any]:
        """``state`` as the game's viewer may see it now (everything, once the game is finished)."""
        return state_json(state, None if self.revealed else self.human, self.open_hands)

    def view(self) -> dict[str, Any]:
        """The game as its page shows it (a person's seat sees only what the rules show it)."""
        states = list(self.states)
        state = states[-1]
        reveal = self.revealed
        history = [transition_json(s, not reveal and s.last.player != self.human) for s in states[1:]]
        data = state_json(state, self.human, self.open_hands)
        if self.resigned is not None:  # the state itself is not over: say so, and show everything
            data = state_json(state, None, self.open_hands) | {"to_move": None, "outcome": self.outcome()}
        return {
            "id": self.id,
            "mode": self.mode,
            "human": self.human,
            "ply": len(states) - 1,
            "seats": [
                {"seat": p, "kind": "human", "name": "you", "label": "You", "short": "You"}
                if seat is None
                else {"seat": p, "kind": "agent", "name": seat.name, "label": seat.label, "short": seat.title}
                for p, seat in enumerate(self.seats)
            ],
            "rules": {"draft": self.draft, "open_hands": self.open_hands, "first_player": state.first_player},
            "state": data,
            "history": history,
            "agent_to_move": self.agent_to_move(),
            "thinking": self.lock.locked(),
            "replay_available": self.replayable,
            "resigned": self.resigned,
        }

    def summary(self) -> dict[str, Any]:
        """One line of the browser's list of recent games: who, where it stands, how it ended."""
        state = self.state
        return {
            "id": self.id,
            "mode": self.mode,
            "human": self.human,
            "seats": [None if seat is None else seat.title for seat in self.seats],
            "ply": self.ply,
            "phase": "over" if self.finished else state.phase.value,
            "outcome": self.outcome(),
            "rules": {"draft": self.draft, "open_hands": self.open_hands},
            "created": round(self.created, 3),
            "updated": round(self.updated, 3),
        }

    def position(self, ply: int) -> dict[str, Any]:
        """Position ``ply`` (0: the start) as the viewer may see it now, to look back at; no moves offered."""
        if not 0 <= ply <= self.ply:
            raise ApiError(422, f"ply must be 0-{self.ply} (the positions of this game so far), got {ply}")
        data = self._state_json(self.states[ply])
        data["legal"] = []
        return {"ply": ply, "state": data}

    def previews(self, ply: int) -> dict[str, Any]:
        """What each of the person's legal placements at ``ply`` would do (``placement_previews``)."""
        state = self.state
        if self.human is None:
            raise ApiError(409, "this game is played by two agents: there is no move of yours to preview")
        self._check_ply(ply)
        if self.finished:
            raise ApiError(409, "the game is over")
        if state.phase != PLAY:
            raise ApiError(409, "previews are for placements: the draft is still on")
        if state.to_move != self.human:
            raise ApiError(409, "it is not your turn: the agent moves next")
        return {"ply": ply, "to_move": self.human, "previews": placement_previews(state, self.human, self.open_hands)}

    def play(self, action: int, ply: int) -> None:
        """The person's move ``action`` (an action id) at ``ply``; ``ApiError`` if refused."""
        if not self.lock.acquire(blocking=False):
            raise ApiError(409, "the agent is thinking: wait for its move")
        try:
            self._check_ply(ply)
            state = self.state
            if self.human is None:
                raise ApiError(409, "this game is played by two agents: nobody can move in it")
            if self.finished:
                raise ApiError(409, "the game is over")
            if state.to_move != self.human:
                raise ApiError(409, "it is not your turn: the agent moves next")
            if action not in state.legal_actions():
                raise ApiError(422, f"action {action} is not a legal move now ({_legal_summary(state)})")
            self.states.append(state.apply(action))
            self.updated = time.time()
            self._release_if_over()
        finally:
            self.lock.release()

    def resign(self) -> None:
        """The person gives the game up: the agent wins, everything is revealed; ``ApiError`` if refused."""
        if not self.lock.acquire(blocking=False):
            raise ApiError(409, "the agent is thinking: wait for its move")
        try:
            if self.human is None:
                raise ApiError(409, "this game is played by two agents: nobody can resign it")
            if self.finished:
                raise ApiError(409, "the game is over")
            self.resigned = self.human
            self.updated = time.time()
            self._release_if_over()
        finally:
            self.lock.release()

    def advance(self, ply: int) -> bool:
        """One agent move if an agent is to move at ``ply``; False (nothing done) otherwise.

        Blocks while another move of this game is being made, so two calls for the same
        ply (a page reloaded while its agent thinks) make one move between them. Call it
        off the event loop: a search can take seconds.
        """
        with self.lock:
            if ply != self.ply or not self.agent_to_move():
                return False
            state = self.state
            seat = state.to_move
            agent = self._agent(seat)
            observation = observation_dict(state, seat, self.open_hands)
            action = int(agent.act(observation, visible_state(state, self.open_hands)))
            if action not in state.legal_actions():  # a broken agent must not break the game
                raise IllegalMoveError(f"agent {self.seats[seat].name} chose an illegal action {action}")
            self.states.append(state.apply(action))
            self.updated = time.time()
            self._release_if_over()
            return True

    def replay(self) -> Replay:
        if not self.revealed:
            raise ApiError(409, "the replay is ready when the game is over (it shows the hidden cards)")
        if not self.replayable:
            raise ApiError(409, "the game was resigned during the draft: there is no game to replay")
        agents = [HUMAN if seat is None else seat.name for seat in self.seats]
        return Replay.from_states(self.states, open_hands=self.open_hands, agents=agents)

    def _check_ply(self, ply: int) -> None:
        if ply != self.ply:
            raise ApiError(409, f"the game is at move {self.ply}, not {ply}: reload it")

    def _agent(self, seat: int) -> Agent:
        agent = self._agents[seat]
        if agent is None:
            choice = self.seats[seat]
            assert choice is not None
            try:
                agent = make(choice.spec) if choice.player is None else choice.player.build()
            except (TrinityError, OSError, ImportError, RuntimeError) as err:
                raise ApiError(503, f"agent {choice.name} cannot play on this server: {err}") from None
            agent.reset(self.seed * 2 + seat + 2 * self.ply)  # a rebuilt agent (see drop_agents) reseeds afresh
            self._agents[seat] = agent
            if self._on_build is not None:
                self._on_build(self)
        return agent

    def drop_agents(self) -> None:
        """Forget the built agents (memory); the next agent move builds them again."""
        self._agents = [None, None]

    def _release_if_over(self) -> None:
        if self.finished:
            self.drop_agents()


def _legal_summary(state: GameState) -> str:
    actions = state.legal_actions()
    if state.phase == DRAFT:
        return f"legal picks: {', '.join(map(str, actions))}"
    return f"{len(actions)} legal placements, ids {actions[0]}-{actions[-1]}" if actions else "no legal move"

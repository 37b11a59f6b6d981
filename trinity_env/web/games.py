"""What the web server holds: the agents a browser may name, games, uploaded replays.

Nothing here imports Starlette: the app (``trinity_env.web.app``) checks requests and hands
plain values to ``GameStore``, which raises ``ApiError`` (an HTTP status and one line) for
anything it refuses.

- ``catalog()``: the agents on offer, by name. A browser names agents only from this list;
  a name maps to a fixed spec string, so no request can load a checkpoint, read a file or
  ask for an unbounded search.
- ``Game``: one game, its states (the server's copy, so a reload loses nothing), its agents
  and a lock so that one move at a time is made. ``view()`` shows it as the seat playing it
  may see it: the opponent's draft picks, and its hand with hidden hands, stay hidden until
  the game is over.
- ``GameStore``: games and replays by owner (the browser's client token) and random hex id,
  each owner's kept in an LRU with a cap, and all of them under a global cap (``caches.OwnedLRU``):
  past it only a game nobody has used for ``DEFAULT_IDLE_SECONDS`` may be reclaimed, and otherwise a
  new one is refused (503), so no client can push out a game another is playing.
- ``placement_previews``: what each legal placement would do (captures, domino flips, lanes, the
  end of the game), computed by the rules core on what the player may see, so that the page never
  needs a second copy of the rules.
- ``EngineWarmup``: the engine compiled in the background while the server already answers. On a
  fresh install numba compiles each kernel family the first time it runs (the first computer move
  waited about 13 s, the first solver review over a minute); ``trinity serve`` runs
  ``trinity_env.prepare``'s families in a daemon thread at start and ``GET /api/engine`` says how
  far it is, so the page can say "preparing the engine (first run)" instead of stalling.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import random
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from trinity_env.agents.base import Agent, visible_state
from trinity_env.agents.registry import make, shipped
from trinity_env.core import LANE_TILES, TILES, GameState, IllegalMoveError, Outcome, Replay, TrinityError
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, PLAYED, UNPICKED, lane_scores
from trinity_env.prepare import FAMILIES, families_for, warm
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict
from trinity_env.web.caches import LRU, OwnedLRU, StoreFull

ID_PATTERN = re.compile(r"[0-9a-f]{32}")
"""Game and replay ids: 16 random bytes in hex (``secrets.token_hex(16)``); anything else is refused unread."""
DEFAULT_MAX_GAMES = 200
"""Games kept at once, all owners together (a memory bound): past it a new game takes the place of one idle
for ``DEFAULT_IDLE_SECONDS``, or is refused with 503 (retry later) if every game is in use."""
DEFAULT_GAMES_PER_CLIENT = 20
"""Games one owner (a browser) keeps; its own least recently used one is forgotten past this."""
DEFAULT_MAX_REPLAYS = 50
"""Uploaded replays kept at once, all owners together (reclaimed or refused like games)."""
DEFAULT_REPLAYS_PER_CLIENT = 10
"""Uploaded replays one owner keeps."""
DEFAULT_IDLE_SECONDS = 30 * 60
"""Seconds after its last use (made, viewed, moved in) that a game or replay counts as idle, and so may give its
place to another client's new one when the store is full: 30 minutes, far longer than a player thinks over a move,
short enough that a full store frees up within the half hour. A game used more recently is never pushed out by
another client."""
DEFAULT_MAX_LIVE_AGENTS = 16
"""Games whose agents are kept built (LRU): a search agent holds its tree (tens of MB for ``az-standard``);
a game whose agents were dropped rebuilds them at its next agent move."""
REVIEW_MAX_EMPTY = 9
"""The review solves positions with at most this many empty tiles (9: about 0.2 s each here)."""
REVIEW_MAX_NODES = 3_000_000
REVIEW_MAX_SECONDS = 10.0
"""The review's budget per position: the node budget decides (the same on any machine); the clock is a backstop."""
SEED_LIMIT = 2**31
STATUS = {0: "unpicked", 1: "hand", 2: "played"}
TERMINATION_TEXT = {
    "lane_control": "lane control",
    "full_board": "full board",
    "no_moves": "no moves left",
    "resignation": "resignation",
}
LADDER_FILE = Path(str(resources.files("trinity_env.web") / "ladder.json"))
"""The arena's ``--json`` output for the ladder's agents (a copy of docs/web/ladder.json, which a test keeps equal):
the Elo each level's label shows is read from it, never typed by hand."""


class ApiError(Exception):
    """A refused request: ``status`` (an HTTP 4xx code, or 503) and a one-line ``message``; ``headers`` to send
    with it (``Retry-After``)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


# ---------------------------------------------------------------------- the agents on offer


@dataclass(frozen=True)
class AgentChoice:
    """An agent a browser may name: ``name`` is what it sends, ``spec`` what ``make`` gets."""

    name: str
    spec: str
    label: str
    """What the list of opponents says."""
    group: str
    """``ladder``, ``baseline``, ``search`` or ``trained``."""
    short: str = ""
    """What the board says (``Level 3 — casual``, ``Greedy``); the name when empty."""
    elo: int | None = None
    """The measured rating (ladder levels: from ``LADDER_FILE``), so the page can say how strong it is."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.spec,
            "label": self.label,
            "group": self.group,
            "short": self.title,
            "elo": self.elo,
        }

    @property
    def title(self) -> str:
        return self.short or self.name


LADDER: dict[int, str] = {
    1: "random",
    2: "mcts:2",
    3: "mcts:25",
    4: "greedy",
    5: "lookahead",
    6: "mcts:400",
    7: "mcts:1200",
    8: "mcts:6400",
}
"""The difficulty ladder ``level:1`` ... ``level:8``: agents about equally far apart in rating, measured with the
arena on dealt hands (docs/web.md has the command; ``LADDER_FILE`` its output, the ratings the page shows)."""

LEVEL_WORDS: dict[int, str] = {
    1: "first steps",
    2: "beginner",
    3: "casual",
    4: "club player",
    5: "strong",
    6: "expert",
    7: "master",
    8: "grandmaster",
}
"""Each level in plain words: a new player reads "Level 3 — casual", not ``mcts:25``."""


def ladder_elo(path: Path = LADDER_FILE) -> dict[str, float]:
    """Each agent's Elo from the arena's JSON output (``trinity arena --json``): ``{"agents": [...], "elo": [...]}``.

    A file of another shape raises ``ValueError`` saying what is wrong: the labels must come from a measurement.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    agents, elo = (data.get("agents"), data.get("elo")) if isinstance(data, dict) else (None, None)
    if not isinstance(agents, list) or not isinstance(elo, list) or len(agents) != len(elo):
        raise ValueError(f"{path}: not the arena's JSON output (agents and elo, two lists of one length)")
    ratings = {}
    for name, value in zip(agents, elo):
        if not isinstance(name, str) or type(value) not in (int, float) or not math.isfinite(value):
            raise ValueError(f"{path}: agent {name!r} has no finite Elo ({value!r})")
        ratings[name] = float(value)
    return ratings


def signed(value: float) -> str:
    """``value`` rounded, with its sign: ``+109``; ``-237`` with a true minus sign (U+2212), as a page prints it."""
    number = round(value)
    return f"+{number}" if number > 0 else f"\u2212{-number}" if number < 0 else "0"


BASELINES = (
    ("random", "Random: any legal move"),
    ("greedy", "Greedy: flips the most cards now"),
    ("lookahead", "Lookahead: looks two moves ahead"),
)
SEARCH = (25, 100, 400, 1600)
"""MCTS strengths on offer (simulations per move)."""
TRAINED_LABELS = {
    "ppo-standard": "ppo-standard: the shipped PPO policy network",
    "az-standard": "az-standard: the shipped AlphaZero network with search",
}


def catalog() -> dict[str, AgentChoice]:
    """The agents on offer, by name: the ladder, the baselines, MCTS at a few strengths and the
    shipped trained agents (``shipped()``, only where torch is installed)."""
    trained = shipped() if importlib.util.find_spec("torch") is not None else []
    needs_torch = {*shipped(), "az", "az-standard"}
    ratings = ladder_elo()
    choices: list[AgentChoice] = []
    for level, spec in LADDER.items():
        name = spec.partition(":")[0]
        if name not in needs_torch or name in trained:  # a ladder level of a network needs torch
            if spec not in ratings:
                raise ValueError(f"{LADDER_FILE} rates no agent {spec!r} (level {level}): run the ladder's arena again")
            elo = round(ratings[spec])
            short = f"Level {level} \u2014 {LEVEL_WORDS[level]}"
            label = f"{short} (Elo {signed(elo)})"
            choices.append(AgentChoice(f"level:{level}", spec, label, "ladder", short, elo))
    choices += [AgentChoice(name, name, label, "baseline", name.capitalize()) for name, label in BASELINES]
    choices += [
        AgentChoice(f"mcts:{n}", f"mcts:{n}", f"MCTS, {n} simulations a move", "search", f"MCTS {n}") for n in SEARCH
    ]
    choices += [AgentChoice(name, name, TRAINED_LABELS.get(name, f"{name}: shipped"), "trained") for name in trained]
    return {choice.name: choice for choice in choices}


# ---------------------------------------------------------------------- views


def lanes_json(state: GameState) -> list[dict[str, Any]]:
    """Each lane's card counts and the points they score (a majority scores its count)."""
    lanes = []
    for lane, tiles in enumerate(LANE_TILES):
        counts = [sum(1 for t in tiles if state.owners[t] == p) for p in (0, 1)]
        points = [counts[0] if counts[0] > counts[1] else 0, counts[1] if counts[1] > counts[0] else 0]
        lanes.append({"lane": lane, "counts": counts, "points": points})
    return lanes


def transition_json(state: GameState, hidden: bool = False) -> dict[str, Any] | None:
    """What the action leading to ``state`` did; a pick's card is ``None`` when ``hidden``."""
    step = state.last
    if step is None:
        return None
    if step.tile is None:
        return {"player": step.player, "kind": "pick", "card": None if hidden else step.card.notation}
    return {
        "player": step.player,
        "kind": "place",
        "card": step.card.notation,
        "deck_index": step.deck_index,
        "tile": step.tile,
        "captured": list(step.captured),
        "domino": list(step.domino),
    }


def state_json(state: GameState, viewer: int | None = None, open_hands: bool = True) -> dict[str, Any]:
    """``state`` as the seat ``viewer`` sees it (``None``: a spectator, who sees everything).

    A seat does not see the opponent's picks during the draft, nor its hand when hands are
    hidden; once the game is over everything shows.
    """
    reveal = viewer is None or state.is_over
    players = []
    for p in (0, 1):
        sees = reveal or p == viewer or (open_hands and state.phase != DRAFT)
        status = state.status[p]
        entry: dict[str, Any] = {
            "seat": p,
            "picked": sum(1 for s in status if s != UNPICKED),
            "hand_size": sum(1 for s in status if s == IN_HAND),
            "a_cards": state.a_cards_held(p) if sees else None,
            "deck": None,
            "hand": None,
        }
        if sees:
            deck = state.decks[p]
            entry["deck"] = [{"index": i, "card": deck[i].notation, "status": STATUS[s]} for i, s in enumerate(status)]
            entry["hand"] = [{"index": i, "card": deck[i].notation} for i in state.hand_indices(p)]
        players.append(entry)
    data: dict[str, Any] = {
        "phase": state.phase.value,
        "to_move": None if state.is_over else state.to_move,
        "first_player": state.first_player,
        "max_a_cards": state.max_a_cards,
        "board": [
            None if state.cards[t] is None else {"card": state.cards[t].notation, "owner": state.owners[t]}
            for t in range(TILES)
        ],
        "players": players,
        "lanes": lanes_json(state),
        "last": _last_json(state, viewer, reveal),
        "outcome": None,
        "legal": [],
    }
    if state.outcome is not None:
        data["outcome"] = outcome_json(state.outcome)
    if viewer is not None and not state.is_over and state.to_move == viewer:
        data["legal"] = legal_json(state)
    return data


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """How a game ended, as the pages show it (``termination_text`` in words)."""
    return {
        "winner": outcome.winner,
        "scores": list(outcome.scores),
        "termination": outcome.termination.value,
        "termination_text": TERMINATION_TEXT.get(outcome.termination.value, outcome.termination.value),
        "lane": outcome.lane,
    }


def _last_json(state: GameState, viewer: int | None, reveal: bool) -> dict[str, Any] | None:
    step = state.last
    hidden = step is not None and not reveal and step.player != viewer
    return transition_json(state, hidden)


def legal_json(state: GameState) -> list[dict[str, Any]]:
    """The legal actions of the player to move: ``{action, index, card}`` and ``tile`` for a placement."""
    deck = state.decks[state.to_move]
    moves = []
    for action in state.legal_actions():
        if state.phase == DRAFT:
            moves.append({"action": action, "index": action, "card": deck[action].notation, "tile": None})
        else:
            index, tile = divmod(action - 16, TILES)
            moves.append({"action": action, "index": index, "card": deck[index].notation, "tile": tile})
    return moves


# ---------------------------------------------------------------------- previews


def seen_by(state: GameState, viewer: int, open_hands: bool) -> GameState:
    """``state`` holding only what ``viewer`` may see, for computing what the viewer's moves would do.

    With hidden hands in the play phase the opponent's hand is replaced by a stand-in of the same size
    (its first unplayed deck cards): which of its unplayed cards the opponent really holds is not in the
    result, so nothing computed from it (a preview) can tell. The hand's size is public (the page shows
    the card backs), and only it matters to the rules after a placement (whether the opponent can still
    place). With open hands, or in the draft (no placements), ``state`` itself.
    """
    if open_hands or state.phase != PLAY:
        return state
    other = 1 - viewer
    left = sum(1 for s in state.status[other] if s == IN_HAND)
    stand_in = []
    for slot in state.status[other]:
        if slot == PLAYED:
            stand_in.append(PLAYED)
        elif left:
            stand_in.append(IN_HAND)
            left -= 1
        else:
            stand_in.append(UNPICKED)
    status = list(state.status)
    status[other] = tuple(stand_in)
    return dataclasses.replace(state, status=tuple(status))


def placement_previews(state: GameState, viewer: int, open_hands: bool) -> list[dict[str, Any]]:
    """What each legal placement of ``viewer`` (the player to move) would do, by the rules core itself.

    Each entry: the action, deck ``index``, ``card`` and ``tile``; the tiles it would ``capture`` and those
    the ``domino`` would flip (as ``Transition`` reports them); the ``lanes`` after it (cards and points of
    each lane); and the ``outcome`` if it ends the game (a lane completed, the board full), else ``None``.
    Computed on ``seen_by(state, ...)``: a preview uses only what the viewer may see.
    """
    if state.phase != PLAY or state.is_over or state.to_move != viewer:
        return []
    seen = seen_by(state, viewer, open_hands)
    deck = seen.decks[viewer]
    previews = []
    for action in seen.legal_actions():
        after = seen.apply(action)
        step = after.last
        previews.append(
            {
                "action": action,
                "index": step.deck_index,
                "card": deck[step.deck_index].notation,
                "tile": step.tile,
                "captured": list(step.captured),
                "domino": list(step.domino),
                "lanes": lanes_json(after),
                "outcome": None if after.outcome is None else outcome_json(after.outcome),
            }
        )
    return previews


# ---------------------------------------------------------------------- one game


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
        config = make_config(draft="pick" if draft == "pick" else "random", first_player=first_player)
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
        return Replay.from_states(self.states, open_hands=self.open_hands)

    def _check_ply(self, ply: int) -> None:
        if ply != self.ply:
            raise ApiError(409, f"the game is at move {self.ply}, not {ply}: reload it")

    def _agent(self, seat: int) -> Agent:
        agent = self._agents[seat]
        if agent is None:
            choice = self.seats[seat]
            assert choice is not None
            try:
                agent = make(choice.spec)
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


# ---------------------------------------------------------------------- uploaded replays


class UploadedReplay:
    """A replay's states, for stepping through, with the solver's review of its late positions."""

    def __init__(self, replay_id: str, replay: Replay, states: list[GameState]):
        self.id = replay_id
        self.replay = replay
        self.states = states
        self.reviews: dict[int, dict[str, Any]] = {}

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rules": dict(self.replay.rules),
            "result": self.replay.result,
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


class _Reviewer:
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
            played = {"card": step.card.notation, "tile": step.tile}
        best = [{"card": card, "tile": tile} for card, tile in solution.best_moves]
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


# ---------------------------------------------------------------------- the store


class GameStore:
    """Games and uploaded replays by owner and id, with caps so memory stays bounded.

    ``owner`` is whoever the app says made the request (a client token from a cookie): a game
    or replay is found only by its owner, so ids never need to be secret to be safe, and the
    caps work per owner (``games_per_client``, ``replays_per_client``: past it the owner's own least
    recently used one goes) under global ones (``max_games``, ``max_replays``): past those a new game or
    replay takes the place of one nobody has used for ``idle_seconds``, or is refused with a 503 (see
    ``caches.OwnedLRU``); another client's game in use is never pushed out. The agents of at most
    ``max_live_agents`` games stay built (an LRU too). ``clock``: monotonic seconds (tests pass a fake).
    """

    def __init__(
        self,
        agents: dict[str, AgentChoice] | None = None,
        *,
        max_games: int = DEFAULT_MAX_GAMES,
        games_per_client: int = DEFAULT_GAMES_PER_CLIENT,
        max_replays: int = DEFAULT_MAX_REPLAYS,
        replays_per_client: int = DEFAULT_REPLAYS_PER_CLIENT,
        max_live_agents: int = DEFAULT_MAX_LIVE_AGENTS,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        new_id: Callable[[], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.agents = catalog() if agents is None else agents
        self.games = OwnedLRU(max_games, games_per_client, idle_seconds, clock=clock)
        self.replays = OwnedLRU(max_replays, replays_per_client, idle_seconds, clock=clock)
        self.live = LRU(max_live_agents)
        self._new_id = new_id or (lambda: secrets.token_hex(16))
        self._reviewer = _Reviewer()

    def agent(self, name: str) -> AgentChoice:
        choice = self.agents.get(name)
        if choice is None:
            raise ApiError(422, f"no agent named {name!r} on this server; GET /api/agents lists them")
        return choice

    def new_game(
        self,
        seats: Sequence[AgentChoice | None],
        *,
        draft: str,
        open_hands: bool,
        first_player: int | str,
        seed: int | None,
        owner: str,
    ) -> Game:
        """A new game of ``owner``'s (its least recently used game goes past its cap); a 503 if the store is full
        of games in use."""
        seed = secrets.randbelow(SEED_LIMIT) if seed is None else seed
        first = random.Random(seed ^ 0x5EED).randint(0, 1) if first_player == "random" else int(first_player)
        game = Game(
            self._new_id(), seats, draft=draft, open_hands=open_hands, first_player=first, seed=seed,
            on_build=self._built,
        )  # fmt: skip
        for old in _added(self.games, owner, game.id, game, "games"):
            old.drop_agents()
        return game

    def _built(self, game: Game) -> None:
        for old in self.live.add(game.id, game):
            if old is not game:
                old.drop_agents()

    def game(self, game_id: str, owner: str) -> Game:
        """``owner``'s game ``game_id``; a 404 if there is none, the same for another owner's game or a
        malformed id, and the message never repeats the id (it is the client's text, of any length)."""
        game = self.games.get(owner, game_id) if ID_PATTERN.fullmatch(game_id) else None
        if game is None:
            kept = self.games.per_owner
            raise ApiError(404, f"no game with that id (unknown, forgotten or another browser's; each keeps {kept})")
        return game

    def games_of(self, owner: str) -> list[Game]:
        """``owner``'s games, the most recently used first (the page's list of recent games)."""
        return self.games.items(owner)

    def review_game(self, game: Game, owner: str) -> tuple[UploadedReplay, bool]:
        """``game`` as an uploaded replay of ``owner``'s, for the replay page and its review; and whether it is
        new. The same one again while the store keeps it. A 409 while the game hides cards (not finished)."""
        if game.review_id is not None:
            kept = self.replays.get(owner, game.review_id)
            if kept is not None:
                return kept, False
        upload = self.add_replay(game.replay().to_dict(), owner)
        game.review_id = upload.id
        return upload, True

    def add_replay(self, document: Any, owner: str) -> UploadedReplay:
        """Load and check a replay document; ``ApiError`` 422 says what is wrong with it."""
        try:
            replay = Replay.from_dict(document)
            states = replay.states()
        except TrinityError as err:
            raise ApiError(422, f"not a valid replay: {err}") from None
        except RecursionError:
            raise ApiError(422, "not a valid replay: nested too deeply") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            raise ApiError(422, f"not a valid replay: {type(err).__name__}: {err}") from None
        upload = UploadedReplay(self._new_id(), replay, states)
        _added(self.replays, owner, upload.id, upload, "replays")
        return upload

    def replay(self, replay_id: str, owner: str) -> UploadedReplay:
        """``owner``'s uploaded replay ``replay_id``; a 404 that does not repeat the id otherwise (as ``game``)."""
        upload = self.replays.get(owner, replay_id) if ID_PATTERN.fullmatch(replay_id) else None
        if upload is None:
            kept = self.replays.per_owner
            raise ApiError(404, f"no replay with that id (unknown, forgotten or another browser's; each keeps {kept})")
        return upload

    def review(self, upload: UploadedReplay, ply: int) -> dict[str, Any]:
        """The solver's review of position ``ply`` (call it off the event loop: up to a few seconds)."""
        if not 0 <= ply < len(upload.states):
            raise ApiError(422, f"ply must be 0-{len(upload.states) - 1}, got {ply}")
        return self._reviewer.review(upload, ply)


def _added(store: OwnedLRU, owner: str, key: str, item: Any, what: str) -> list[Any]:
    """``store.add``, its ``StoreFull`` as a 503 that says why and when to retry (``Retry-After``)."""
    try:
        return store.add(owner, key, item)
    except StoreFull as full:
        minutes = math.ceil(full.idle_seconds / 60)
        message = (
            f"the server is full: it keeps {full.cap} {what}, all in use in the last {minutes} minutes; "
            f"retry later (in about {full.retry_after} s)"
        )
        raise ApiError(503, message, headers={"retry-after": str(full.retry_after)}) from None


# ---------------------------------------------------------------------- the engine, prepared in the background

WAITING, PREPARING, READY, FAILED = "waiting", "preparing", "ready", "failed"


def families_to_warm(specs: Iterable[str], first: Sequence[str] = ()) -> list[str]:
    """The kernel families a server of agents ``specs`` runs on, those of ``first`` (the default opponent)
    first, and the exact solver (the replay review) last: it takes the longest to compile."""
    order = families_for(list(first)) + families_for(list(specs)) + ["exact solver"]
    return list(dict.fromkeys(order))


class EngineWarmup:
    """Runs kernel families once, in order, in a daemon thread; ``view()`` says where it stands.

    ``run`` runs one family (default: ``prepare.warm``, which also writes a line on ``out`` when a family
    takes more than a second: a cold cache). A family that fails is marked ``failed`` with its error and
    the rest still run: the agent that needs it will say the same when asked to move. An empty list is
    ready at once (an app made without a warm-up, as in tests).
    """

    def __init__(
        self,
        families: Sequence[str],
        *,
        run: Callable[[str], object] | None = None,
        out: TextIO | None = None,
    ):
        unknown = [name for name in families if name not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown kernel family {unknown[0]!r}; the families are: {', '.join(FAMILIES)}")
        self.families = list(families)
        self._run = run or (lambda name: warm([name], out=out))
        self._states = {name: WAITING for name in self.families}
        self._seconds: dict[str, float] = {}
        self._errors: dict[str, str] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.started: float | None = None
        if not self.families:
            self._done.set()

    def start(self) -> EngineWarmup:
        """Start the background run (once; later calls do nothing); returns ``self``."""
        with self._lock:
            if self._thread is not None or self._done.is_set():
                return self
            self.started = time.time()
            self._thread = threading.Thread(target=self._work, name="trinity-engine-warmup", daemon=True)
            self._thread.start()
        return self

    def _work(self) -> None:
        try:
            for name in self.families:
                with self._lock:
                    self._states[name] = PREPARING
                begun = time.perf_counter()
                try:
                    self._run(name)
                    state, error = READY, None
                except Exception as err:  # any failure is reported, and the other families still run
                    state, error = FAILED, f"{type(err).__name__}: {' '.join(str(err).split())[:200]}"
                with self._lock:
                    self._states[name] = state
                    self._seconds[name] = round(time.perf_counter() - begun, 3)
                    if error is not None:
                        self._errors[name] = error
        finally:
            self._done.set()

    @property
    def ready(self) -> bool:
        """Whether every family has run (or failed): nothing is compiling any more."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until ready (or ``timeout`` seconds); whether it is ready."""
        return self._done.wait(timeout)

    def view(self) -> dict[str, Any]:
        """Where the warm-up stands, for ``GET /api/engine``: ``ready``, the family ``preparing`` now, and each
        family's state and seconds."""
        with self._lock:
            families = [
                {"name": name, "state": self._states[name], "seconds": self._seconds.get(name)}
                | ({"error": self._errors[name]} if name in self._errors else {})
                for name in self.families
            ]
        preparing = next((f["name"] for f in families if f["state"] == PREPARING), None)
        return {
            "ready": self.ready,
            "started": self._thread is not None,
            "preparing": preparing,
            "done": sum(1 for f in families if f["state"] in (READY, FAILED)),
            "families": families,
        }

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
  each owner's kept in an LRU with a cap, and all of them under a global cap that evicts the
  least recently used owner first: one browser's burst of games cannot push out another's.
"""

from __future__ import annotations

import importlib.util
import random
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trinity_env.agents.base import Agent, visible_state
from trinity_env.agents.registry import make, shipped
from trinity_env.core import LANE_TILES, TILES, GameState, IllegalMoveError, Replay, TrinityError
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, UNPICKED
from trinity_env.spec.config import make_config
from trinity_env.spec.observation import observation_dict

ID_PATTERN = re.compile(r"[0-9a-f]{32}")
"""Game and replay ids: 16 random bytes in hex (``secrets.token_hex(16)``); anything else is refused unread."""
DEFAULT_MAX_GAMES = 200
"""Games kept at once, all owners together (a memory bound): past it the least recently used owner loses its
least recently used game."""
DEFAULT_GAMES_PER_CLIENT = 20
"""Games one owner (a browser) keeps; its own least recently used one is forgotten past this."""
DEFAULT_MAX_REPLAYS = 50
"""Uploaded replays kept at once, all owners together (evicted like games)."""
DEFAULT_REPLAYS_PER_CLIENT = 10
"""Uploaded replays one owner keeps."""
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
TERMINATION_TEXT = {"lane_control": "lane control", "full_board": "full board", "no_moves": "no moves left"}


class ApiError(Exception):
    """A refused request: ``status`` (an HTTP 4xx code) and a one-line ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


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
    """What the board says (``Level 3``, ``Greedy``); the name when empty."""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "spec": self.spec, "label": self.label, "group": self.group, "short": self.title}

    @property
    def title(self) -> str:
        return self.short or self.name


LADDER: dict[int, str] = {
    1: "random",  # Elo -563
    2: "mcts:2",  # -430
    3: "mcts:25",  # -237
    4: "greedy",  # -64
    5: "lookahead",  # +109
    6: "mcts:400",  # +253
    7: "mcts:1200",  # +386
    8: "mcts:6400",  # +546
}
"""The difficulty ladder ``level:1`` ... ``level:8``: agents about equally far apart in rating (steps of
133-193 Elo, mean 158), measured with the arena on dealt hands (docs/web.md has the command and the figures)."""

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
    choices: list[AgentChoice] = []
    for level, spec in LADDER.items():
        name = spec.partition(":")[0]
        if name not in needs_torch or name in trained:  # a ladder level of a network needs torch
            choices.append(AgentChoice(f"level:{level}", spec, f"Level {level} ({spec})", "ladder", f"Level {level}"))
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
        outcome = state.outcome
        data["outcome"] = {
            "winner": outcome.winner,
            "scores": list(outcome.scores),
            "termination": outcome.termination.value,
            "termination_text": TERMINATION_TEXT.get(outcome.termination.value, outcome.termination.value),
            "lane": outcome.lane,
        }
    if viewer is not None and not state.is_over and state.to_move == viewer:
        data["legal"] = legal_json(state)
    return data


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


# ---------------------------------------------------------------------- one game


class Game:
    """One game the server holds: its states, its seats (a person or an agent) and its agents.

    ``seats[p]`` is the ``AgentChoice`` of seat p, or ``None`` for the person playing it.
    Agents are built on first use and dropped once the game is over.
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

    def agent_to_move(self) -> bool:
        state = self.state
        return not state.is_over and self.seats[state.to_move] is not None

    def view(self) -> dict[str, Any]:
        """The game as its page shows it (a person's seat sees only what the rules show it)."""
        states = list(self.states)
        state = states[-1]
        reveal = self.human is None or state.is_over
        history = [transition_json(s, not reveal and s.last.player != self.human) for s in states[1:]]
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
            "state": state_json(state, self.human, self.open_hands),
            "history": history,
            "agent_to_move": not state.is_over and self.seats[state.to_move] is not None,
            "thinking": self.lock.locked(),
            "replay_available": reveal,
        }

    def play(self, action: int, ply: int) -> None:
        """The person's move ``action`` (an action id) at ``ply``; ``ApiError`` if refused."""
        if not self.lock.acquire(blocking=False):
            raise ApiError(409, "the agent is thinking: wait for its move")
        try:
            self._check_ply(ply)
            state = self.state
            if self.human is None:
                raise ApiError(409, "this game is played by two agents: nobody can move in it")
            if state.is_over:
                raise ApiError(409, "the game is over")
            if state.to_move != self.human:
                raise ApiError(409, "it is not your turn: the agent moves next")
            if action not in state.legal_actions():
                raise ApiError(422, f"action {action} is not a legal move now ({_legal_summary(state)})")
            self.states.append(state.apply(action))
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
            self._release_if_over()
            return True

    def replay(self) -> Replay:
        if self.human is not None and not self.state.is_over:
            raise ApiError(409, "the replay is ready when the game is over (it shows the hidden cards)")
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
        if self.state.is_over:
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


class _LRU:
    """Items by key, at most ``cap``: adding one past it forgets the least recently used."""

    def __init__(self, cap: int):
        if cap < 1:
            raise ValueError(f"the cap must be at least 1, got {cap}")
        self.cap = cap
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, key: str, item: Any) -> list[Any]:
        """Keep ``item`` as the most recent; the items this pushed out, oldest first."""
        evicted = []
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            while len(self._items) > self.cap:
                evicted.append(self._items.popitem(last=False)[1])
        return evicted

    def get(self, key: str) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def __len__(self) -> int:
        return len(self._items)


class _OwnedLRU:
    """Items by (owner, key): at most ``per_owner`` for each owner and ``cap`` in all.

    Past ``per_owner`` the owner's own least recently used item goes; past ``cap`` the least
    recently used *owner* (the one whose items were added or read longest ago) loses its least
    recently used item, never the owner adding. So a client creating games as fast as it can
    only ever evicts its own, and pushes out other clients only by way of ``cap``, the least
    active first. A key held by another owner reads as missing.
    """

    def __init__(self, cap: int, per_owner: int):
        if cap < 1 or per_owner < 1:
            raise ValueError(f"the caps must be at least 1, got {cap} and {per_owner}")
        self.cap = cap
        self.per_owner = min(per_owner, cap)
        self._owners: OrderedDict[str, OrderedDict[str, Any]] = OrderedDict()
        self._count = 0
        self._lock = threading.Lock()

    def add(self, owner: str, key: str, item: Any) -> list[Any]:
        """Keep ``item`` as ``owner``'s most recent; the items this pushed out, oldest first."""
        evicted = []
        with self._lock:
            items = self._owners.setdefault(owner, OrderedDict())
            self._owners.move_to_end(owner)
            self._count += key not in items
            items[key] = item
            items.move_to_end(key)
            while len(items) > self.per_owner:
                evicted.append(items.popitem(last=False)[1])
                self._count -= 1
            while self._count > self.cap:  # per_owner <= cap, so another owner holds something
                oldest = next(name for name in self._owners if name != owner)
                victims = self._owners[oldest]
                evicted.append(victims.popitem(last=False)[1])
                self._count -= 1
                if not victims:
                    del self._owners[oldest]
        return evicted

    def get(self, owner: str, key: str) -> Any | None:
        """``owner``'s item ``key`` (now its most recent, and ``owner`` the most recent owner), or ``None``."""
        with self._lock:
            items = self._owners.get(owner)
            item = None if items is None else items.get(key)
            if item is not None:
                items.move_to_end(key)
                self._owners.move_to_end(owner)
            return item

    def __len__(self) -> int:
        return self._count


class GameStore:
    """Games and uploaded replays by owner and id, with caps so memory stays bounded.

    ``owner`` is whoever the app says made the request (a client token from a cookie): a game
    or replay is found only by its owner, so ids never need to be secret to be safe, and the
    caps work per owner (``games_per_client``, ``replays_per_client``) under global ones
    (``max_games``, ``max_replays``) that evict the least recently used owner first (see
    ``_OwnedLRU``). The agents of at most ``max_live_agents`` games stay built (an LRU too).
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
        new_id: Callable[[], str] | None = None,
    ):
        self.agents = catalog() if agents is None else agents
        self.games = _OwnedLRU(max_games, games_per_client)
        self.replays = _OwnedLRU(max_replays, replays_per_client)
        self.live = _LRU(max_live_agents)
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
        """A new game of ``owner``'s (its least recently used game goes past its cap)."""
        seed = secrets.randbelow(SEED_LIMIT) if seed is None else seed
        first = random.Random(seed ^ 0x5EED).randint(0, 1) if first_player == "random" else int(first_player)
        game = Game(
            self._new_id(), seats, draft=draft, open_hands=open_hands, first_player=first, seed=seed,
            on_build=self._built,
        )  # fmt: skip
        for old in self.games.add(owner, game.id, game):
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
        self.replays.add(owner, upload.id, upload)
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

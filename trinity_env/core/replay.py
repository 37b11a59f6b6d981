"""The replay format: one JSON document that reproduces a whole game.

A replay holds the rules config, the decks, each player's picks in order and every
placement, so it can rebuild each state of the game, the draft included (which the
position format of docs/rules.md cannot express). A replay of a puzzle starts from a position
instead of decks and picks. The result is stored too, and checked when the replay is
loaded and played back, so a replay that no longer reproduces its game is refused.

Cards are written by notation: a pick of a card that appears twice in a deck takes the
first unpicked copy on playback.

An optional ``agents`` field names who sat in each seat: ``[seat 0, seat 1]``, each an agent's label (its spec
text, ``greedy`` or ``onnx:model.onnx``, or the name of a policy given as a Python object; ``human`` for a person).
It is a record, not a rule: playback never reads it. A replay without it is as valid as before.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trinity_env.core.board import TILES
from trinity_env.core.cards import Card
from trinity_env.core.checks import is_int
from trinity_env.core.decks import DEFAULT_MAX_A_CARDS, Deck, check_max_a_cards
from trinity_env.core.errors import ArgumentError, PositionError, TrinityError
from trinity_env.core.files import MAX_DOCUMENT_BYTES, names, parse_json, read_text, short
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, GameState, Termination
from trinity_env.core.writes import write_text

FORMAT = "trinity-towers-replay"
"""The ``format`` field of every replay document."""
VERSION = 1
MAX_AGENT_LABEL = 1000
"""The longest agent label a replay's ``agents`` field holds (an agent spec's longest text)."""
HUMAN = "human"
"""The ``agents`` label of a seat a person played."""


@dataclass(frozen=True)
class Replay:
    """A recorded game. Build one with ``from_states`` or ``from_dict``; ``states()`` plays it back."""

    rules: dict[str, Any]
    moves: tuple[tuple[int, Card, int], ...]
    decks: tuple[Deck, Deck] | None = None
    picks: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None
    start: dict[str, Any] | None = None
    result: dict[str, Any] | None = field(default=None, compare=False)
    agents: tuple[str, str] | None = field(default=None, compare=False)
    """Who sat in each seat (the module's ``agents`` field), or ``None`` when not recorded."""

    @classmethod
    def from_states(
        cls, states: Sequence[GameState], *, open_hands: bool = True, agents: Sequence[str] | None = None
    ) -> Replay:
        """Record the game whose successive states are ``states`` (first one: the start); ``agents``: the label of
        the agent in each seat (seat 0 first), if known.

        ``ArgumentError`` if ``states`` is empty, a later state was not made by a move (its ``last`` is ``None``),
        or ``agents`` is not two labels.
        """
        if not states:
            raise ArgumentError("a replay needs at least the starting state")
        seated = _agents(agents, ArgumentError)
        return dataclasses.replace(cls._recorded(states, open_hands), agents=seated)

    @classmethod
    def _recorded(cls, states: Sequence[GameState], open_hands: bool) -> Replay:
        first = states[0]
        picks: list[list[Card]] = [[], []]
        moves = []
        for state in states[1:]:
            step = state.last
            if step is None:
                raise ArgumentError("every state after the first must come from a transition (state.last is None)")
            if step.tile is None:
                picks[step.player].append(step.card)
            else:
                moves.append((step.player, step.card, step.tile))
        rules: dict[str, Any] = {
            "max_a_cards": first.max_a_cards,
            "first_player": first.first_player,
            "open_hands": open_hands,
        }
        dealt = first.phase == PLAY and all(
            len(d) == 16 and IN_HAND in st and 0 in st for d, st in zip(first.decks, first.status)
        )
        if first.phase == DRAFT:
            rules["draft"] = "pick"
            return cls(rules, tuple(moves), first.decks, (tuple(picks[0]), tuple(picks[1])), None, _result(states[-1]))
        if dealt:
            rules["draft"] = "dealt"
            return cls(rules, tuple(moves), first.decks, first.hands, None, _result(states[-1]))
        rules["draft"] = "position"
        return cls(rules, tuple(moves), None, None, first.to_dict(), _result(states[-1]))

    # ------------------------------------------------------------------ playback

    def initial_state(self) -> GameState:
        if self.start is not None:
            return GameState.from_dict(self.start)
        assert self.decks is not None and self.picks is not None
        if self.rules["draft"] == "pick":
            return GameState.new_game(
                self.decks, max_a_cards=self.rules["max_a_cards"], first_player=self.rules["first_player"]
            )
        hands = [_indices_of(deck, hand, player) for player, (deck, hand) in enumerate(zip(self.decks, self.picks))]
        return GameState.new_game(
            self.decks, max_a_cards=self.rules["max_a_cards"], first_player=self.rules["first_player"], hands=hands
        )

    def states(self) -> list[GameState]:
        """Every state of the game in order; ``PositionError`` if the record is not a legal game."""
        state = self.initial_state()
        states = [state]
        if self.rules.get("draft") == "pick":
            assert self.picks is not None
            queues = [list(self.picks[0]), list(self.picks[1])]
            while state.phase == DRAFT:
                player = state.to_move
                if not queues[player]:
                    raise PositionError(f"replay: player {player} runs out of picks before the draft ends")
                card = queues[player].pop(0)
                state = _checked(lambda s=state, c=card: s.pick(c), f"pick of {card} by player {player}")
                states.append(state)
            if queues[0] or queues[1]:
                raise PositionError("replay: more picks than the draft takes")
        for number, (player, card, tile) in enumerate(self.moves):
            if state.to_move != player or state.is_over:
                who = "the game is over" if state.is_over else f"player {state.to_move} is to move"
                raise PositionError(f"replay move {number} is by player {player}, but {who}")
            state = _checked(lambda s=state, c=card, t=tile: s.play(c, t), f"move {number} ({card} on tile {tile})")
            states.append(state)
        if self.result is not None and _result(state) != self.result:
            raise PositionError(
                f"replay claims result {short(self.result, 200)}, but playing it back gives {_result(state)}"
            )
        return states

    def final_state(self) -> GameState:
        return self.states()[-1]

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": FORMAT, "version": VERSION, "rules": dict(self.rules)}
        if self.start is not None:
            data["start"] = self.start
        else:
            assert self.decks is not None and self.picks is not None
            data["decks"] = [[c.notation for c in deck] for deck in self.decks]
            data["picks"] = [[c.notation for c in hand] for hand in self.picks]
        data["moves"] = [{"player": p, "card": c.notation, "tile": t} for p, c, t in self.moves]
        if self.result is not None:
            data["result"] = self.result
        if self.agents is not None:
            data["agents"] = list(self.agents)
        return data

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: str | Path) -> None:
        write_text(path, self.to_json(indent=1) + "\n")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Replay:
        """A replay from its JSON document, every field checked strictly.

        A replay read differently from how it was written replays another game, so an integer
        must be a JSON integer (``1.0`` and ``true`` are refused), a bool a real bool (``"no"``
        is truthy) and an unknown field is refused, not ignored.
        """
        if not isinstance(data, Mapping):
            raise PositionError(f"a replay is a JSON object, got {type(data).__name__}")
        _known(data, _FIELDS, "replay field(s)")
        if data.get("format") != FORMAT or not isinstance(data.get("format"), str):
            raise PositionError(f"not a replay: 'format' must be {FORMAT!r}, got {short(data.get('format'))}")
        version = data.get("version")
        if not is_int(version) or version != VERSION:
            raise PositionError(f"unsupported replay version {short(version)} (this library reads {VERSION})")
        rules = _rules(data.get("rules"))
        moves = _moves(data.get("moves", []))
        result = _result_field(data.get("result"))
        agents = _agents(data.get("agents"), PositionError)
        if rules["draft"] == "position":
            if "decks" in data or "picks" in data:
                raise PositionError(
                    "a replay with rules.draft 'position' starts from 'start', not from decks and picks"
                )
            if not isinstance(data.get("start"), Mapping):
                raise PositionError("a replay with rules.draft 'position' needs a 'start' position")
            GameState.from_dict(data["start"])
            return cls(rules, moves, start=dict(data["start"]), result=result, agents=agents)
        if "start" in data:
            raise PositionError(
                f"a replay with rules.draft {rules['draft']!r} starts from decks and picks, not 'start'"
            )
        for key in ("decks", "picks"):
            if key not in data:
                raise PositionError(f"replay is missing the {key!r} field")
        decks = _card_lists(data["decks"], "decks")
        picks = _card_lists(data["picks"], "picks")
        return cls(rules, moves, (decks[0], decks[1]), (picks[0], picks[1]), None, result, agents)

    @classmethod
    def from_json(cls, text: str) -> Replay:
        return cls.from_dict(parse_json(text, "replay", PositionError))

    @classmethod
    def load(cls, path: str | Path) -> Replay:
        text = read_text(path, "replay", PositionError, MAX_DOCUMENT_BYTES)
        try:
            return cls.from_json(text)
        except PositionError as err:
            raise PositionError(f"{path}: {err}") from None


_FIELDS = frozenset({"format", "version", "rules", "decks", "picks", "start", "moves", "result", "agents"})
_RULES = frozenset({"draft", "max_a_cards", "first_player", "open_hands"})
_MOVE = frozenset({"player", "card", "tile"})
_RESULT = frozenset({"winner", "scores", "termination"})


def _known(data: Mapping[Any, Any], known: frozenset[str], what: str) -> None:
    unknown = [key for key in data if key not in known]
    if unknown:
        raise PositionError(f"unknown {what}: {names(unknown)}; known: {', '.join(sorted(known))}")


def _rules(rules: object) -> dict[str, Any]:
    if not isinstance(rules, Mapping):
        raise PositionError(f"replay field 'rules' must be an object, got {short(rules)}")
    _known(rules, _RULES, "replay rules")
    rules = {"max_a_cards": DEFAULT_MAX_A_CARDS, "first_player": 0, "open_hands": True} | dict(rules)
    draft = rules.get("draft")
    if not isinstance(draft, str) or draft not in ("pick", "dealt", "position"):
        raise PositionError(f"replay rules.draft must be 'pick', 'dealt' or 'position', got {short(draft)}")
    try:
        check_max_a_cards(rules["max_a_cards"])
    except TrinityError as err:
        raise PositionError(f"replay rules.{err}") from None
    if not is_int(rules["first_player"]) or rules["first_player"] not in (0, 1):
        raise PositionError(f"replay rules.first_player must be the integer 0 or 1, got {short(rules['first_player'])}")
    if not isinstance(rules["open_hands"], bool):
        raise PositionError(f"replay rules.open_hands must be true or false, got {short(rules['open_hands'])}")
    rules["first_player"] = int(rules["first_player"])
    return rules


def _moves(moves: object) -> tuple[tuple[int, Card, int], ...]:
    if not isinstance(moves, list | tuple):
        raise PositionError(f"replay field 'moves' must be a list, got {short(moves)}")
    result = []
    for number, move in enumerate(moves):
        where = f"replay move {number}"
        if not isinstance(move, Mapping):
            raise PositionError(
                f'{where} must be an object {{"player": ..., "card": ..., "tile": ...}}, got {short(move)}'
            )
        _known(move, _MOVE, f"field(s) in {where}")
        missing = sorted(_MOVE - set(move))
        if missing:
            raise PositionError(f"{where} is missing {', '.join(map(repr, missing))}")
        player, tile = move["player"], move["tile"]
        if not is_int(player) or player not in (0, 1):
            raise PositionError(f"{where}: player must be the integer 0 or 1, got {short(player)}")
        if not is_int(tile) or not 0 <= tile < TILES:
            raise PositionError(f"{where}: tile must be an integer 0-{TILES - 1}, got {short(tile)}")
        try:
            card = Card(move["card"])
        except TrinityError as err:
            raise PositionError(f"{where}: {err}") from None
        result.append((int(player), card, int(tile)))
    return tuple(result)


def _result_field(result: object) -> dict[str, Any] | None:
    """The stored result, typed as ``_result`` writes it (so ``1.0`` cannot pass for winner 1 when compared)."""
    if result is None:
        return None
    if not isinstance(result, Mapping) or set(result) != _RESULT:
        raise PositionError(f"replay field 'result' must be null or an object with {', '.join(sorted(_RESULT))}")
    winner, scores, termination = result["winner"], result["scores"], result["termination"]
    if winner is not None and (not is_int(winner) or winner not in (0, 1)):
        raise PositionError(f"replay result winner must be 0, 1 or null, got {short(winner)}")
    if not isinstance(scores, list | tuple) or len(scores) != 2 or not all(is_int(s) for s in scores):
        raise PositionError(f"replay result scores must be a list of 2 integers, got {short(scores)}")
    if not isinstance(termination, str) or termination not in {t.value for t in Termination}:
        raise PositionError(f"replay result termination must be one of {', '.join(t.value for t in Termination)}")
    return {"winner": winner, "scores": [int(s) for s in scores], "termination": termination}


def _agents(agents: object, error: type[TrinityError]) -> tuple[str, str] | None:
    """The ``agents`` field checked: ``None``, or two labels of 1 to ``MAX_AGENT_LABEL`` printable characters."""
    if agents is None:
        return None
    if isinstance(agents, str) or not isinstance(agents, Sequence) or len(agents) != 2:
        raise error(f"replay field 'agents' names the agent of each seat: two labels, got {short(agents)}")
    for seat, label in enumerate(agents):
        if not agent_label(label):
            raise error(
                f"replay agents[{seat}] must be a label of 1 to {MAX_AGENT_LABEL} printable characters, "
                f"got {short(label)}"
            )
    return agents[0], agents[1]


def agent_label(label: object) -> bool:
    """Whether ``label`` can name a seat's agent in a replay: a string of 1 to ``MAX_AGENT_LABEL`` printable
    characters (what a tool that writes replays checks before it plays)."""
    return isinstance(label, str) and 0 < len(label) <= MAX_AGENT_LABEL and label.isprintable()


def _card_lists(lists: object, field: str) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    if not isinstance(lists, list | tuple) or len(lists) != 2 or not all(isinstance(x, list | tuple) for x in lists):
        raise PositionError(f"replay field {field!r} holds one list of cards per player, got {short(lists)}")
    try:
        first, second = (tuple(Card(c) for c in cards) for cards in lists)
    except TrinityError as err:
        raise PositionError(f"replay {field}: {err}") from None
    return first, second


def _result(state: GameState) -> dict[str, Any] | None:
    if state.outcome is None:
        return None
    return {
        "winner": state.outcome.winner,
        "scores": list(state.outcome.scores),
        "termination": state.outcome.termination.value,
    }


def _indices_of(deck: Deck, hand: Sequence[Card], player: int) -> list[int]:
    free = list(range(len(deck)))
    indices = []
    for card in hand:
        slot = next((i for i in free if deck[i] == card), None)
        if slot is None:
            raise PositionError(f"replay: player {player}'s hand card {card} is not in its deck")
        free.remove(slot)
        indices.append(slot)
    return indices


def _checked(step, what: str) -> GameState:
    try:
        return step()
    except TrinityError as err:
        raise PositionError(f"replay {what} is illegal: {err}") from None

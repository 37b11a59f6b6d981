"""The OpenSpiel game's records in plain Python (no ``pyspiel``): its parameters (``Rules``), what a state knows
(``Node``: the core's ``GameState`` and the record of every action), the chance outcomes of a deal, the resampling of
what a player has not seen, the history and observation in words, and positions written as a parameter string.

``trinity_env.integrations.openspiel`` wraps them in ``pyspiel``'s ``Game``, ``State`` and observer and registers
the game; its docstring says what the game is.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trinity_env.core import (
    DECK_SIZE,
    HAND_SIZE,
    LANE_TILES,
    PLACE_OFFSET,
    TILES,
    GameState,
    load_deck,
)
from trinity_env.core.board import EMPTY
from trinity_env.core.decks import DEFAULT_MAX_A_CARDS, Deck, check_max_a_cards, legal_a_counts
from trinity_env.core.errors import PositionError
from trinity_env.core.state import DRAFT, IN_HAND, PLAYED, UNPICKED
from trinity_env.spec.config import ConfigError, DraftMode, draft_mode
from trinity_env.spec.observation import OBSERVATION_SIZE

GAME_NAME = "python_trinity_towers"


NUM_ACTIONS = 256


PICK_ORDER_SIZE = DECK_SIZE


PLACEMENT_ORDER_SIZE = TILES


INFO_STATE_SIZE = OBSERVATION_SIZE + PICK_ORDER_SIZE + PLACEMENT_ORDER_SIZE


RANDOM_FIRST_PLAYER = -1


DRAFTS = (DraftMode.PICK, DraftMode.DEALT)


OWNER_CHAR = {0: "w", 1: "b"}


DEFAULT_PARAMS: dict[str, Any] = {
    "draft": "pick",
    "open_hands": True,
    "max_a_cards": DEFAULT_MAX_A_CARDS,
    "first_player": RANDOM_FIRST_PLAYER,
    "deck": "standard",
    "position": "",
}


def position_string(state: GameState | Mapping[str, Any]) -> str:
    """A play-phase position as the compact ``position`` parameter.

    ``"TO_MOVE/TILES/HAND0/HAND1"``: 15 tiles separated by spaces, each ``.`` (empty) or its
    owner (``w`` player 0, ``b`` player 1) followed by its card, as in ``w7A24``; each hand its
    cards separated by spaces, ``-`` when empty. OpenSpiel's game strings split parameters on ``,``, ``=``
    and parentheses, so the position JSON cannot be a parameter; this form round-trips
    through ``str(game)``, pickling and ``pyspiel.serialize_game_and_state``.
    """
    if not isinstance(state, GameState):
        state = GameState.from_dict(state)
    if state.phase == DRAFT:
        raise PositionError("a draft-phase state has no position: load a position once play has started")
    tiles = ["." if owner == EMPTY else f"{OWNER_CHAR[owner]}{state.cards[t]}" for t, owner in enumerate(state.owners)]
    hands = [" ".join(str(card) for card in state.hand(player)) or "-" for player in (0, 1)]
    return f"{state.to_move}/{' '.join(tiles)}/{hands[0]}/{hands[1]}"


def parse_position_string(text: str, max_a_cards: int = DEFAULT_MAX_A_CARDS) -> GameState:
    """The ``GameState`` of a ``position`` parameter (``position_string``'s format)."""
    parts = text.split("/")
    if len(parts) != 4:
        raise PositionError(f"position {text!r}: expected TO_MOVE/TILES/HAND0/HAND1 (4 parts separated by '/')")
    to_move, tiles, *hands = (part.strip() for part in parts)
    if to_move not in ("0", "1"):
        raise PositionError(f"position {text!r}: the player to move must be 0 or 1, got {to_move!r}")
    tokens = tiles.split()
    if len(tokens) != TILES:
        raise PositionError(f"position {text!r}: expected {TILES} tiles, got {len(tokens)}")
    owners = {char: player for player, char in OWNER_CHAR.items()}
    board: list[dict[str, Any] | None] = []
    for token in tokens:
        if token == ".":
            board.append(None)
        elif len(token) == 5 and token[0] in owners:
            board.append({"card": token[1:], "owner": owners[token[0]]})
        else:
            raise PositionError(f"position {text!r}: a tile is '.' or an owner and a card (e.g. w7A24), got {token!r}")
    return GameState.from_dict(
        {
            "phase": "play",
            "to_move": int(to_move),
            "board": [[board[t] for t in lane] for lane in LANE_TILES],
            "hands": [[] if hand == "-" else hand.split() for hand in hands],
            "max_a_cards": max_a_cards,
        }
    )


@dataclass(frozen=True)
class Rules:
    """One game's parameters, parsed and checked."""

    draft: DraftMode | str
    """``DraftMode.PICK`` or ``DEALT``, or ``"position"``: a game from the ``position`` parameter."""
    open_hands: bool
    max_a_cards: int
    first_player: int
    decks: tuple[Deck, Deck]
    start: GameState | None = None
    """The loaded position, for a ``position`` game."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Rules:
        unknown = set(params) - set(DEFAULT_PARAMS)
        if unknown:
            raise ConfigError(f"{GAME_NAME}: unknown parameter(s) {', '.join(sorted(unknown))}")
        p = {**DEFAULT_PARAMS, **params}
        try:
            draft = draft_mode(p["draft"])  # RULES.md's "random" is "dealt"
        except ConfigError:
            draft = None
        if draft not in DRAFTS:  # no 'fixed': a game here is dealt or drafted
            raise ConfigError(f"{GAME_NAME}: draft must be 'pick' or 'dealt', got {p['draft']!r}")
        p["draft"] = draft
        if p["first_player"] not in (RANDOM_FIRST_PLAYER, 0, 1):
            raise ConfigError(f"{GAME_NAME}: first_player must be -1 (random), 0 or 1, got {p['first_player']!r}")
        max_a_cards = check_max_a_cards(p["max_a_cards"])
        if p["position"]:
            start = parse_position_string(p["position"], max_a_cards)
            return cls("position", bool(p["open_hands"]), max_a_cards, start.first_player, start.decks, start)
        deck = load_deck(p["deck"], max_a_cards)
        return cls(p["draft"], bool(p["open_hands"]), max_a_cards, p["first_player"], (deck, deck))

    def __deepcopy__(self, memo: dict) -> Rules:
        return self  # immutable: OpenSpiel's clone deep-copies every attribute of a state

    @property
    def max_chance_outcomes(self) -> int:
        if self.draft is DraftMode.DEALT:
            return DECK_SIZE
        return 2 if self.first_player == RANDOM_FIRST_PLAYER and self.draft is DraftMode.PICK else 0

    @property
    def max_chance_nodes(self) -> int:
        if self.draft == "position":
            return 0
        return (self.first_player == RANDOM_FIRST_PLAYER) + (2 * HAND_SIZE if self.draft is DraftMode.DEALT else 0)

    @property
    def max_game_length(self) -> int:
        if self.start is not None:
            return len(self.start.empty_tiles())
        return (2 * HAND_SIZE if self.draft is DraftMode.PICK else 0) + TILES


FIRST, DEAL, PICK, PLACE = "first", "deal", "pick", "place"


@dataclass(frozen=True)
class Node:
    """Everything a state knows, immutable: OpenSpiel clones states by deep copy, and this one copies for free.

    ``game`` is the core state once the hands exist (``None`` at the chance nodes before);
    ``record`` holds ``(kind, player, action)`` for every action so far (``player`` is the
    one dealt to at a deal, ``-1`` for the first-player draw).
    """

    game: GameState | None
    first: int | None
    dealt: tuple[tuple[int, ...], tuple[int, ...]]
    record: tuple[tuple[str, int, int], ...]

    def __deepcopy__(self, memo: dict) -> Node:
        return self


def _initial_node(rules: Rules) -> Node:
    if rules.start is not None:
        return Node(rules.start, rules.start.first_player, ((), ()), ())
    first = None if rules.first_player == RANDOM_FIRST_PLAYER else rules.first_player
    return _settle(rules, Node(None, first, ((), ()), ()))


def _settle(rules: Rules, node: Node) -> Node:
    """Create the core state once nothing is left to chance."""
    if node.game is not None or node.first is None:
        return node
    if rules.draft is DraftMode.PICK:
        game = GameState.new_game(rules.decks, max_a_cards=rules.max_a_cards, first_player=node.first)
    elif all(len(hand) == HAND_SIZE for hand in node.dealt):
        game = GameState.new_game(rules.decks, max_a_cards=rules.max_a_cards, first_player=node.first, hands=node.dealt)
    else:
        return node
    return Node(game, node.first, node.dealt, node.record)


def _completions(deck: Deck, after: int, cards: int, a_budget: int) -> int:
    """Ways to choose ``cards`` more deck slots above ``after`` holding at most ``a_budget`` A cards."""
    rest = deck[after + 1 :]
    a_slots = sum(card.is_a_card for card in rest)
    _, weights = legal_a_counts(a_slots, len(rest) - a_slots, cards, a_budget)
    return sum(weights) if a_budget >= 0 else 0


def deal_outcomes(deck: Deck, dealt: Sequence[int], max_a_cards: int) -> list[tuple[int, float]]:
    """Each possible next dealt slot and its probability.

    Hands are dealt in ascending slot order, with probabilities that make each legal hand equally likely.
    """
    last = dealt[-1] if dealt else -1
    budget = max_a_cards - sum(deck[i].is_a_card for i in dealt)
    left = HAND_SIZE - len(dealt)
    weights = [
        (slot, _completions(deck, slot, left - 1, budget - deck[slot].is_a_card)) for slot in range(last + 1, len(deck))
    ]
    total = sum(w for _, w in weights)
    return [(slot, w / total) for slot, w in weights if w]


def _recorded(node: Node, kind: str, player: int, action: int) -> Node:
    return Node(node.game, node.first, node.dealt, (*node.record, (kind, player, int(action))))


def _opponent_known(rules: Rules, node: Node, opponent: int) -> set[int]:
    """Deck slots of the opponent's hand (picked or dealt) that the other player has seen."""
    game = node.game
    if game is None:
        return set()
    status = game.status[opponent]
    if rules.open_hands and game.phase != DRAFT:
        return {i for i, s in enumerate(status) if s != UNPICKED}
    return {i for i, s in enumerate(status) if s == PLAYED}


def resampled_record(rules: Rules, node: Node, player: int, rng: random.Random) -> list[tuple[str, int, int]]:
    """``node``'s record with the opponent's hidden picks or deals redrawn (see ``resample_from_infostate``)."""
    if node.game is None:
        raise PositionError("resampling is for decision nodes: the hands are still being dealt")
    opponent = 1 - player
    hidden = [k for k, (kind, who, _) in enumerate(node.record) if kind in (PICK, DEAL) and who == opponent]
    if not hidden:
        return list(node.record)
    had = [node.record[k][2] for k in hidden]
    known = _opponent_known(rules, node, opponent)
    deck = rules.decks[opponent]
    others = [i for i in range(len(deck)) if i not in known]
    a_slots = [i for i in others if deck[i].is_a_card]
    plain = [i for i in others if not deck[i].is_a_card]
    wanted = len(had) - len(known)
    budget = rules.max_a_cards - sum(deck[i].is_a_card for i in known)
    counts, weights = legal_a_counts(len(a_slots), len(plain), wanted, budget)
    k = rng.choices(counts, weights=weights)[0]
    drawn = sorted(known) + rng.sample(a_slots, k) + rng.sample(plain, wanted - k)
    if node.record[hidden[0]][0] == DEAL:
        drawn.sort()  # dealt in ascending slot order
    else:
        rng.shuffle(drawn)  # any order of a legal set of picks is a legal draft
    record = list(node.record)
    for k, action in zip(hidden, drawn):
        kind, who, _ = record[k]
        record[k] = (kind, who, action)
    return record


def history_string(rules: Rules, node: Node, player: int) -> str:
    """The history as ``player`` saw it: the opponent's picks and dealt cards are ``?``."""
    words = [f"p{player}:"]
    for kind, who, action in node.record:
        if kind == FIRST:
            words.append(f"first=p{action}")
        elif kind in (DEAL, PICK):
            card = rules.decks[who][action] if who == player else "?"
            words.append(f"{kind}{who}={card}")
        else:
            index, tile = divmod(action - PLACE_OFFSET, TILES)
            words.append(f"p{who}:{rules.decks[who][index]}@{tile}")
    return " ".join(words)


def observation_string(rules: Rules, node: Node, player: int) -> str:
    """What ``player`` sees now, in words."""
    game = node.game
    if game is None:
        first = "not drawn yet" if node.first is None else f"p{node.first}"
        mine = " ".join(str(rules.decks[player][i]) for i in node.dealt[player]) or "-"
        return f"p{player} | dealing | places first: {first} | dealt to me: {mine}"
    opponent = 1 - player
    board = " / ".join(
        " ".join("." if game.owners[t] == EMPTY else f"{OWNER_CHAR[game.owners[t]]}{game.cards[t]}" for t in lane)
        for lane in LANE_TILES
    )
    mine = " ".join(str(card) for card in game.hand(player)) or "-"
    if rules.open_hands and game.phase != DRAFT:
        theirs = " ".join(str(card) for card in game.hand(opponent)) or "-"
    else:
        theirs = f"{sum(s == IN_HAND for s in game.status[opponent])} hidden"
    if game.is_over:
        outcome = game.outcome
        result = "draw" if outcome.winner is None else f"p{outcome.winner} wins"
        status = f"over: {result} ({outcome.termination}, {outcome.scores[0]}-{outcome.scores[1]})"
    else:
        status = f"{game.phase}: p{game.to_move} to {'pick' if game.phase == DRAFT else 'place'}"
    return (
        f"p{player} | {status} | places first: p{game.first_player} | board: {board} | "
        f"my hand: {mine} | their hand: {theirs}"
    )

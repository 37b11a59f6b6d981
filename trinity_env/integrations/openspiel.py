"""Trinity Towers as an OpenSpiel Python game: ``pyspiel.load_game("python_trinity_towers", {...})``.

Importing this module registers the game (it needs ``pip install open_spiel``, or the
``openspiel`` extra)::

    import pyspiel
    import trinity_env.integrations.openspiel  # registers "python_trinity_towers"

    game = pyspiel.load_game("python_trinity_towers", {"draft": "dealt", "open_hands": False})

It is a sequential, zero-sum, two-player game of imperfect information with terminal
rewards: ``returns()`` is ``[+1, -1]``, ``[-1, +1]`` or ``[0, 0]`` (a draw, only reachable from
loaded positions). Actions are the project's 256 action ids (``docs/rules.md``, actions).
Each state holds the core's immutable ``GameState``: ``state.game_state``.

Parameters (OpenSpiel checks their types, so ``first_player`` is an integer):

- ``draft`` (``"pick"``, default): the players draft 16 secret picks, then place. ``"dealt"``:
  no draft, each player is dealt a uniformly random legal hand by chance nodes.
- ``open_hands`` (``True``): both hands are visible once play starts; ``False`` hides the
  opponent's unplayed cards for the whole game.
- ``max_a_cards`` (3), ``deck`` (``"standard"``: a deck name from ``configs/decks/`` or a
  YAML path; both players get a copy).
- ``first_player`` (``-1``: chance decides, fairly; ``0`` or ``1``): who places first. It is
  public from the start, as in the envs.
- ``position`` (``""``): start from a play-phase position instead (see ``position_string``):
  then ``draft``, ``deck`` and ``first_player`` are not used and the game has no chance node.
  ``endgame_game(state)`` loads one from a ``GameState``, a small game that tree-walking
  algorithms (CFR, exact exploitability) can solve.

Chance nodes: first the first player (when ``first_player`` is ``-1``), then with
``draft="dealt"`` the dealt hands, player 0's then player 1's, one card per node in
ascending deck order (outcome = deck slot) with probabilities that make every legal hand
equally likely.

What each player may see is ``docs/rules.md``'s: draft picks are secret, a dealt hand is
private, and the opponent's hand shows only once play starts with ``open_hands``.

- ``observation_tensor(p)``: the project's observation vector,
  ``encode_observation(state, p, open_hands)`` (339 entries, ``docs/observation.md``), as
  float32; all zeros at the chance nodes before the hands exist.
- ``information_state_tensor(p)`` (perfect recall): the same 339 entries, then 16 giving
  the turn (1-8) at which ``p`` picked each of its deck cards (0: not picked or dealt), then
  15 giving the placement number (1-15) at which each tile was filled (0: empty or filled
  in a loaded position): 370 entries.
- ``observation_string(p)`` and ``information_state_string(p)``: the same in words; the
  information state lists the whole history as ``p`` saw it (the opponent's picks and dealt
  cards as ``?``) followed by the observation.

MCTS (``open_spiel.python.algorithms.mcts.MCTSBot``) searches the true state, so it is a
fair player only where nothing is hidden: open hands after a random deal. With hidden
information use IS-MCTS (``open_spiel.python.algorithms.ismcts.ISMCTSBot``): the Python
bot calls ``state.resample_from_infostate(player, sampler)``, which this state implements
(uniform over the hidden cards consistent with what the player saw).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from trinity_env.core import (
    DECK_SIZE,
    HAND_SIZE,
    LANE_TILES,
    PLACE_OFFSET,
    TILES,
    GameState,
    decode_action,
    load_deck,
    random_hand,
)
from trinity_env.core.board import EMPTY
from trinity_env.core.decks import DEFAULT_MAX_A_CARDS, Deck, check_max_a_cards, legal_a_counts
from trinity_env.core.errors import ArgumentError, PositionError
from trinity_env.core.state import DRAFT, IN_HAND, PLAY, PLAYED, UNPICKED
from trinity_env.spec.config import ConfigError, DraftMode, draft_mode
from trinity_env.spec.observation import OBSERVATION_SIZE, encode_observation

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

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Trinity Towers",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


# ---------------------------------------------------------------------- positions as a parameter


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


# ---------------------------------------------------------------------- rules and state records


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


# ---------------------------------------------------------------------- the game


class TrinityTowersGame(pyspiel.Game):
    """Trinity Towers for OpenSpiel; load it with ``pyspiel.load_game(GAME_NAME, params)``."""

    def __init__(self, params: Mapping[str, Any] | None = None):
        self.rules = Rules.from_params(params or {})
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=self.rules.max_chance_outcomes,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.rules.max_game_length,
        )
        super().__init__(_GAME_TYPE, info, dict(params or {}))
        self.initial_node = _initial_node(self.rules)

    def new_initial_state(self) -> TrinityTowersState:
        return TrinityTowersState(self)

    def max_chance_nodes_in_history(self) -> int:
        return self.rules.max_chance_nodes

    def make_py_observer(self, iig_obs_type=None, params=None) -> TrinityTowersObserver:
        return TrinityTowersObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params, self.rules
        )


class TrinityTowersState(pyspiel.State):
    """One node of the game tree; ``game_state`` is the core ``GameState`` (``None`` before the hands exist)."""

    def __init__(self, game: TrinityTowersGame):
        super().__init__(game)
        self._rules = game.rules
        self._node = game.initial_node

    # ------------------------------------------------------------------ reading

    @property
    def rules(self) -> Rules:
        return self._rules

    @property
    def node(self) -> Node:
        return self._node

    @property
    def game_state(self) -> GameState | None:
        return self._node.game

    def current_player(self) -> int:
        game = self._node.game
        if game is None:
            return pyspiel.PlayerId.CHANCE
        if game.is_over:
            return pyspiel.PlayerId.TERMINAL
        return game.to_move

    def is_terminal(self) -> bool:
        return self._node.game is not None and self._node.game.is_over

    def returns(self) -> list[float]:
        game = self._node.game
        if game is None or not game.is_over or game.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if game.winner == 0 else [-1.0, 1.0]

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._node.game.legal_actions())

    def _chance_kind(self) -> tuple[str, int]:
        """``(FIRST, -1)`` or ``(DEAL, player dealt to)`` at a chance node."""
        if self._node.first is None:
            return FIRST, -1
        return DEAL, 0 if len(self._node.dealt[0]) < HAND_SIZE else 1

    def chance_outcomes(self) -> list[tuple[int, float]]:
        kind, player = self._chance_kind()
        if kind == FIRST:
            return [(0, 0.5), (1, 0.5)]
        return deal_outcomes(self._rules.decks[player], self._node.dealt[player], self._rules.max_a_cards)

    def _apply_action(self, action: int) -> None:
        node = self._node
        if node.game is None:
            kind, player = self._chance_kind()
            if kind == FIRST:
                node = Node(None, int(action), node.dealt, node.record)
            else:
                dealt = list(node.dealt)
                dealt[player] = (*dealt[player], int(action))
                node = Node(None, node.first, (dealt[0], dealt[1]), node.record)
            self._node = _settle(self._rules, _recorded(node, kind, player, action))
            return
        kind = PICK if node.game.phase == DRAFT else PLACE
        player = node.game.to_move
        self._node = _recorded(
            Node(node.game.apply(int(action)), node.first, node.dealt, node.record), kind, player, action
        )

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._node.game is not None:  # asked about a chance outcome away from its node
                return f"chance outcome {action}"
            kind, dealt_to = self._chance_kind()
            if kind == FIRST:
                return f"player {action} places first"
            return f"deal card {action} ({self._rules.decks[dealt_to][action]}) to player {dealt_to}"
        deck = self._rules.decks[player]
        what, index, tile = decode_action(action)
        card = deck[index] if index < len(deck) else "?"
        if what == "pick":
            return f"pick card {index} ({card})"
        return f"place card {index} ({card}) on tile {tile}"

    def __str__(self) -> str:
        game = self._node.game
        if game is not None:
            return str(game)
        first = "to be drawn" if self._node.first is None else f"player {self._node.first}"
        dealt = "; ".join(
            f"dealt to player {p}: " + (" ".join(str(self._rules.decks[p][i]) for i in hand) or "-")
            for p, hand in enumerate(self._node.dealt)
        )
        return f"chance: first player {first}; {dealt}"

    # ------------------------------------------------------------------ IS-MCTS

    def resample_from_infostate(self, player: int, probability_sampler=None) -> TrinityTowersState:
        """A state drawn uniformly among those ``player`` cannot tell from this one.

        What ``player`` has not seen is the opponent's hidden cards: its picks (their set
        while still hidden, always their order) or its dealt hand, less the cards it has
        played. They are redrawn uniformly among the legal choices and the history is
        replayed with them. ``probability_sampler`` (OpenSpiel's, a callable returning a
        uniform float) seeds the draw when given.
        """
        rng = random.Random(probability_sampler() if callable(probability_sampler) else None)
        record = resampled_record(self._rules, self._node, player, rng)
        state = self.get_game().new_initial_state()
        for _, _, action in record:
            state.apply_action(action)
        return state


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


# ---------------------------------------------------------------------- observations


class TrinityTowersObserver:
    """Observation (``perfect_recall=False``) and information state (``True``) of one player.

    Only single-player private information is supported: the tensors are the project's
    player-relative observation (``docs/observation.md``).
    """

    def __init__(self, iig_obs_type, params, rules: Rules):
        if params:
            raise ValueError(f"{GAME_NAME}: observation parameters are not supported, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{GAME_NAME}: only a player's own view (public info, single-player private info) is provided"
            )
        self.rules = rules
        self.perfect_recall = iig_obs_type.perfect_recall
        size = INFO_STATE_SIZE if self.perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:OBSERVATION_SIZE]}
        if self.perfect_recall:
            self.dict["pick_order"] = self.tensor[OBSERVATION_SIZE : OBSERVATION_SIZE + PICK_ORDER_SIZE]
            self.dict["placement_order"] = self.tensor[OBSERVATION_SIZE + PICK_ORDER_SIZE :]

    def set_from(self, state: TrinityTowersState, player: int) -> None:
        self.tensor.fill(0)
        node = state.node
        if node.game is None:
            return
        self.dict["observation"][:] = encode_observation(node.game, player, self.rules.open_hands)
        if self.perfect_recall:
            picks = self.dict["pick_order"]
            placements = self.dict["placement_order"]
            turn = placed = 0
            for kind, who, action in node.record:
                if kind == PICK and who == player:
                    turn += 1
                    picks[action] = turn
                elif kind == PLACE:
                    placed += 1
                    placements[(action - PLACE_OFFSET) % TILES] = placed

    def string_from(self, state: TrinityTowersState, player: int) -> str:
        view = observation_string(self.rules, state.node, player)
        if not self.perfect_recall:
            return view
        return f"{history_string(self.rules, state.node, player)}\n{view}"


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


# ---------------------------------------------------------------------- helpers


def endgame_game(position: GameState | Mapping[str, Any], open_hands: bool = True) -> pyspiel.Game:
    """A small OpenSpiel game that starts from a play-phase position (a ``GameState`` or position dict)."""
    state = position if isinstance(position, GameState) else GameState.from_dict(position)
    if state.phase != PLAY:
        raise PositionError(f"an endgame starts from a play-phase position, not the {state.phase} phase")
    return pyspiel.load_game(
        GAME_NAME, {"position": position_string(state), "max_a_cards": state.max_a_cards, "open_hands": open_hands}
    )


def sample_endgame(empty_tiles: int = 4, seed: int = 0) -> GameState:
    """A play-phase position with ``empty_tiles`` empty tiles, reached by random play from dealt hands (seeded)."""
    if not 1 <= empty_tiles < TILES:
        raise ArgumentError(f"empty_tiles must be 1-{TILES - 1}, got {empty_tiles}")
    rng = random.Random(seed)
    deck = load_deck("standard")
    while True:
        hands = [random_hand(deck, DEFAULT_MAX_A_CARDS, rng) for _ in range(2)]
        game = GameState.new_game((deck, deck), first_player=rng.randint(0, 1), hands=hands)
        while not game.is_over:
            if len(game.empty_tiles()) == empty_tiles:
                return game
            game = game.apply(rng.choice(game.legal_actions()))


def _check_registered() -> None:
    names = pyspiel.registered_names()
    if GAME_NAME not in names:
        pyspiel.register_game(_GAME_TYPE, TrinityTowersGame)


_check_registered()

__all__ = [
    "GAME_NAME",
    "INFO_STATE_SIZE",
    "Rules",
    "TrinityTowersGame",
    "TrinityTowersObserver",
    "TrinityTowersState",
    "deal_outcomes",
    "endgame_game",
    "parse_position_string",
    "position_string",
    "sample_endgame",
]

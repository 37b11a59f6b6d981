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

This module holds what ``pyspiel`` sees (the game type, ``Game``, ``State``, the observer, the registration); the
records underneath, in plain Python, are ``trinity_env.integrations.openspiel_rules``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel

from trinity_env.core import (
    HAND_SIZE,
    PLACE_OFFSET,
    TILES,
    GameState,
    decode_action,
    load_deck,
    random_hand,
)
from trinity_env.core.decks import DEFAULT_MAX_A_CARDS
from trinity_env.core.errors import ArgumentError, PositionError
from trinity_env.core.state import DRAFT, PLAY
from trinity_env.integrations.openspiel_rules import (
    DEAL,
    DEFAULT_PARAMS,
    FIRST,
    GAME_NAME,
    INFO_STATE_SIZE,
    NUM_ACTIONS,
    PICK,
    PICK_ORDER_SIZE,
    PLACE,
    Node,
    Rules,
    _initial_node,
    _recorded,
    _settle,
    deal_outcomes,
    history_string,
    observation_string,
    parse_position_string,
    position_string,
    resampled_record,
)
from trinity_env.spec.observation import OBSERVATION_SIZE, encode_observation

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

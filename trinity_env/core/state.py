"""``GameState``: the immutable state of one game, from the first draft pick to the end.

Every transition returns a new state and leaves the old one untouched, so search code can
keep states in trees and tables without copying. Cards are addressed by deck slot: each
player owns a deck (16 cards in a real game; for a position loaded from JSON, the hand
as listed), and each slot is unpicked, in hand, or played. Ownership of cards on the board
lives in ``owners``; a captured card stays where it is and only its owner changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trinity_env.core.actions import NUM_ACTIONS, PLACE_OFFSET, Move, decode_action
from trinity_env.core.board import EMPTY, LANE_TILES, NEIGHBOURS, POSITIONS, TILES
from trinity_env.core.cards import Card
from trinity_env.core.checks import describe_value, is_int
from trinity_env.core.decks import (
    DEFAULT_MAX_A_CARDS,
    HAND_SIZE,
    Deck,
    check_max_a_cards,
    standard_deck,
    validate_deck,
)
from trinity_env.core.errors import ArgumentError, CardError, IllegalMoveError, PositionError
from trinity_env.core.position import position_fields
from trinity_env.core.render import render_text

# The rules this state plays by, re-exported: ``from trinity_env.core.state import DRAFT`` and the like
from trinity_env.core.rules import (
    DRAFT,
    IN_HAND,
    OVER,
    PLAY,
    PLAYED,
    UNPICKED,
    Outcome,
    Phase,
    Termination,
    Transition,
    after_placement,
    beats,
    lane_scores,
)

__all__ = [
    "DRAFT",
    "IN_HAND",
    "OVER",
    "PLAY",
    "PLAYED",
    "UNPICKED",
    "GameState",
    "Outcome",
    "Phase",
    "Termination",
    "Transition",
    "beats",
    "lane_scores",
]


@dataclass(frozen=True, slots=True)
class GameState:
    """One game's full state. Build it with ``new_game`` or ``from_dict``, never by hand.

    Immutable: ``apply``, ``pick`` and ``play`` return the next state. A move the rules forbid
    raises ``IllegalMoveError``, a bad card ``CardError``, a bad position document ``PositionError``.
    """

    phase: Phase
    to_move: int
    decks: tuple[Deck, Deck]
    status: tuple[tuple[int, ...], tuple[int, ...]]
    cards: tuple[Card | None, ...]
    owners: tuple[int, ...]
    max_a_cards: int = DEFAULT_MAX_A_CARDS
    first_player: int = 0
    outcome: Outcome | None = None
    last: Transition | None = field(default=None, compare=False)

    # ------------------------------------------------------------------ construction

    @classmethod
    def new_game(
        cls,
        decks: Sequence[Sequence[str | Card]] | None = None,
        *,
        max_a_cards: int = DEFAULT_MAX_A_CARDS,
        first_player: int = 0,
        hands: Sequence[Sequence[int]] | None = None,
    ) -> GameState:
        """A new game: the draft, or straight to play when ``hands`` (deck indices) are given.

        ``decks`` defaults to two copies of the standard deck. ``first_player`` is who
        places first once play starts (the draft always starts with player 0). A bad deck or
        ``max_a_cards`` raises ``DeckError``; a bad ``first_player`` or ``hands``, ``ArgumentError``.
        """
        check_max_a_cards(max_a_cards)
        if not is_int(first_player) or first_player not in (0, 1):
            raise ArgumentError(f"first_player must be 0 or 1, got {first_player!r}")
        if decks is None:
            standard = standard_deck()
            checked = (standard, standard)
        else:
            if isinstance(decks, str) or len(decks) != 2:
                raise ArgumentError("decks must be a pair: one deck per player")
            checked = tuple(validate_deck(deck, max_a_cards) for deck in decks)
        empty_board = (None,) * TILES, (EMPTY,) * TILES
        if hands is None:
            status = tuple((UNPICKED,) * len(deck) for deck in checked)
            return cls(DRAFT, 0, checked, status, *empty_board, max_a_cards, first_player)
        if isinstance(hands, str) or len(hands) != 2:
            raise ArgumentError("hands must be a pair: one list of deck indices per player")
        status = tuple(
            _hand_status(player, deck, hand, max_a_cards) for player, (deck, hand) in enumerate(zip(checked, hands))
        )
        return cls(PLAY, first_player, checked, status, *empty_board, max_a_cards, first_player)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameState:
        """Load a position in the position format of docs/rules.md; ``PositionError`` says what is wrong.

        Loaded positions need not come from a real game. Each player's deck becomes its
        hand as listed, so action ids address the hand in that order. A ``"play"``
        position whose board already ends the game, or whose mover has no card, is settled
        by the rules (the mover passes; the game ends when neither player can place).
        """
        return cls(*position_fields(data))

    # ------------------------------------------------------------------ queries

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def winner(self) -> int | None:
        return self.outcome.winner if self.outcome else None

    @property
    def scores(self) -> tuple[int, int] | None:
        return self.outcome.scores if self.outcome else None

    def hand_indices(self, player: int) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.status[player]) if s == IN_HAND)

    def hand(self, player: int) -> tuple[Card, ...]:
        deck = self.decks[player]
        return tuple(deck[i] for i, s in enumerate(self.status[player]) if s == IN_HAND)

    @property
    def hands(self) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
        return self.hand(0), self.hand(1)

    def a_cards_held(self, player: int) -> int:
        """A cards picked by ``player`` so far (in hand or played): the A limit counts these."""
        deck = self.decks[player]
        return sum(1 for i, s in enumerate(self.status[player]) if s != UNPICKED and deck[i].is_a_card)

    def empty_tiles(self) -> tuple[int, ...]:
        return tuple(t for t in range(TILES) if self.owners[t] == EMPTY)

    def legal_actions(self) -> tuple[int, ...]:
        """Legal action ids of the player to move, ascending."""
        if self.phase == PLAY:
            empty = [t for t, owner in enumerate(self.owners) if owner == EMPTY]
            bases = [PLACE_OFFSET + TILES * i for i, s in enumerate(self.status[self.to_move]) if s == IN_HAND]
            return tuple([base + t for base in bases for t in empty])
        if self.phase == DRAFT:
            player = self.to_move
            a_allowed = self.a_cards_held(player) < self.max_a_cards
            deck = self.decks[player]
            return tuple(
                i for i, s in enumerate(self.status[player]) if s == UNPICKED and (a_allowed or not deck[i].is_a_card)
            )
        return ()

    def action_mask(self) -> list[int]:
        """256 entries, 1 where the action id is legal for the player to move."""
        mask = [0] * NUM_ACTIONS
        for action in self.legal_actions():
            mask[action] = 1
        return mask

    def legal_moves(self) -> list[Move]:
        """Distinct placements of the player to move (one per card, identical copies being one), in action order."""
        seen: dict[Move, None] = {}
        deck = self.decks[self.to_move]
        for action in self.legal_actions() if self.phase == PLAY else ():
            i, t = divmod(action - PLACE_OFFSET, TILES)
            seen.setdefault(Move(deck[i], t), None)
        return list(seen)

    # ------------------------------------------------------------------ transitions

    def apply(self, action: int) -> GameState:
        """The state after the player to move takes action id ``action`` (pick or place)."""
        kind, deck_index, tile = decode_action(action)
        if self.phase == OVER:
            raise IllegalMoveError(f"action {action}: the game is over")
        if self.phase == DRAFT and kind != "pick":
            raise IllegalMoveError(f"action {action} places a card, but the draft is on: pick with ids 0-15")
        if self.phase == PLAY and kind != "place":
            raise IllegalMoveError(f"action {action} picks a card, but the draft is over: place with ids 16-255")
        player = self.to_move
        deck = self.decks[player]
        if deck_index >= len(deck):
            raise IllegalMoveError(f"action {action}: player {player}'s deck has no card {deck_index}")
        slot = self.status[player][deck_index]
        if kind == "pick":
            if slot != UNPICKED:
                raise IllegalMoveError(
                    f"action {action}: deck card {deck_index} ({deck[deck_index]}) is already picked"
                )
            return self._pick(deck_index)
        if slot != IN_HAND:
            where = "already played" if slot == PLAYED else "not in the hand"
            raise IllegalMoveError(f"action {action}: deck card {deck_index} ({deck[deck_index]}) is {where}")
        if self.owners[tile] != EMPTY:
            raise IllegalMoveError(f"action {action}: tile {tile} is occupied by {self.cards[tile]}")
        return self._place(deck_index, tile)

    def pick(self, card: str | Card | int) -> GameState:
        """Draft a card by deck index or by card string (the first unpicked copy)."""
        if self.phase != DRAFT:
            raise IllegalMoveError(f"cannot pick: the game is in the {self.phase} phase")
        player = self.to_move
        deck = self.decks[player]
        if isinstance(card, int) and not isinstance(card, bool):
            if not 0 <= card < len(deck):
                raise IllegalMoveError(f"deck index {card} is outside 0-{len(deck) - 1}")
            return self.apply(card)
        wanted = Card(card)
        for i, s in enumerate(self.status[player]):
            if s == UNPICKED and deck[i] == wanted:
                return self.apply(i)
        raise IllegalMoveError(f"card {wanted} is not among player {player}'s unpicked deck cards")

    def play(self, card: Move | str | Card, tile: int | None = None) -> GameState:
        """The state after the player to move puts ``card`` from hand on ``tile``: ``play(move)`` for a ``Move``
        (python-chess's ``push``), ``play("7A24", 3)`` for its parts."""
        if isinstance(card, Move):
            if tile is not None:
                raise ArgumentError(f"play({card!r}) takes the move alone: its tile is {card.tile}, not {tile!r}")
            card, tile = card.card, card.tile
        if self.phase == OVER:
            raise IllegalMoveError("the game is over: no more cards can be played")
        if self.phase == DRAFT:
            raise IllegalMoveError("the draft is not finished: pick cards before playing them")
        try:
            wanted = Card(card)
        except CardError as err:
            raise CardError(f"cannot play: {err}") from None
        tile = _check_tile(tile)
        if self.owners[tile] != EMPTY:
            raise IllegalMoveError(f"tile {tile} is occupied by {self.cards[tile]}; choose an empty tile")
        player = self.to_move
        deck = self.decks[player]
        for i, s in enumerate(self.status[player]):
            if s == IN_HAND and deck[i] == wanted:
                return self._place(i, tile)
        hand = " ".join(str(c) for c in self.hand(player)) or "empty"
        raise IllegalMoveError(f"card {wanted} is not in player {player}'s hand (hand: {hand})")

    def _pick(self, deck_index: int) -> GameState:
        player = self.to_move
        card = self.decks[player][deck_index]
        if card.is_a_card and self.a_cards_held(player) >= self.max_a_cards:
            raise IllegalMoveError(
                f"cannot pick {card}: player {player} already holds {self.max_a_cards} A cards (max_a_cards)"
            )
        status = list(self.status)
        slots = list(status[player])
        slots[deck_index] = IN_HAND
        status[player] = tuple(slots)
        done = all(sum(1 for s in st if s == IN_HAND) >= HAND_SIZE for st in status)
        phase, to_move = (PLAY, self.first_player) if done else (DRAFT, 1 - player)
        transition = Transition(player, deck_index, deck_index, card)
        return GameState(
            phase,
            to_move,
            self.decks,
            tuple(status),
            self.cards,
            self.owners,
            self.max_a_cards,
            self.first_player,
            None,
            transition,
        )

    def _place(self, deck_index: int, tile: int) -> GameState:
        player = self.to_move
        opponent = 1 - player
        card = self.decks[player][deck_index]
        cards = list(self.cards)
        owners = list(self.owners)
        cards[tile] = card
        owners[tile] = player
        captured = [
            n for n, mine, theirs in NEIGHBOURS[tile] if owners[n] == opponent and beats(card[mine], cards[n][theirs])
        ]
        for n in captured:
            owners[n] = player
        domino: list[int] = []
        for c in captured:
            flipped = cards[c]
            for n, mine, theirs in NEIGHBOURS[c]:
                if owners[n] == opponent and n not in domino and beats(flipped[mine], cards[n][theirs]):
                    domino.append(n)
        for n in domino:
            owners[n] = player
        status = list(self.status)
        slots = list(status[player])
        slots[deck_index] = PLAYED
        status[player] = tuple(slots)
        lanes = {tile // POSITIONS, *(t // POSITIONS for t in captured), *(t // POSITIONS for t in domino)}
        phase, to_move, outcome = after_placement(owners, status, player, lanes)
        transition = Transition(
            player,
            PLACE_OFFSET + TILES * deck_index + tile,
            deck_index,
            card,
            tile,
            tuple(sorted(captured)),
            tuple(sorted(domino)),
        )
        return GameState(
            phase,
            to_move,
            self.decks,
            tuple(status),
            tuple(cards),
            tuple(owners),
            self.max_a_cards,
            self.first_player,
            outcome,
            transition,
        )

    # ------------------------------------------------------------------ formats

    def to_dict(self) -> dict[str, Any]:
        """The position (docs/rules.md's position format); ``winner`` and ``scores`` are added once the game is over."""
        if self.phase == DRAFT:
            raise PositionError(
                "a draft-phase state has no position format (hands are not complete); "
                "save it with trinity_env.core.Replay"
            )
        board = [
            [
                None if self.owners[t] == EMPTY else {"card": self.cards[t].notation, "owner": self.owners[t]}
                for t in tiles
            ]
            for tiles in LANE_TILES
        ]
        data: dict[str, Any] = {
            "phase": self.phase.value,
            "to_move": self.to_move,
            "board": board,
            "hands": [[c.notation for c in self.hand(p)] for p in (0, 1)],
            "max_a_cards": self.max_a_cards,
        }
        if self.outcome is not None:
            data["winner"] = self.outcome.winner
            data["scores"] = list(self.outcome.scores)
        return data

    def __str__(self) -> str:
        return render_text(self)

    def __repr__(self) -> str:
        if self.phase == DRAFT:
            picked = [sum(1 for s in st if s == IN_HAND) for st in self.status]
            return f"<GameState draft: player {self.to_move} to pick, picked {picked[0]}/8 and {picked[1]}/8>"
        return f"GameState.from_dict({self.to_dict()!r})"


def _check_tile(tile: object) -> int:
    if not is_int(tile):
        raise IllegalMoveError(f"tile must be an integer 0-{TILES - 1}, got {describe_value(tile)}")
    value = int(tile)
    if not 0 <= value < TILES:
        raise IllegalMoveError(f"tile {value} is off the board: tiles are 0-{TILES - 1}")
    return value


def _hand_status(player: int, deck: Deck, hand: Sequence[int], max_a_cards: int) -> tuple[int, ...]:
    if isinstance(hand, str) or not all(is_int(i) for i in hand):
        raise ArgumentError(f"player {player}'s hand must be a list of integer deck indices, got {hand!r}")
    indices = [int(i) for i in hand]
    if len(indices) != HAND_SIZE or len(set(indices)) != HAND_SIZE:
        raise ArgumentError(f"player {player}'s hand must be {HAND_SIZE} different deck indices, got {indices}")
    if not all(0 <= i < len(deck) for i in indices):
        raise ArgumentError(f"player {player}'s hand has a deck index outside 0-{len(deck) - 1}: {indices}")
    a_cards = sum(deck[i].is_a_card for i in indices)
    if a_cards > max_a_cards:
        raise ArgumentError(f"player {player}'s hand holds {a_cards} A cards, more than max_a_cards={max_a_cards}")
    return tuple(IN_HAND if i in indices else UNPICKED for i in range(len(deck)))

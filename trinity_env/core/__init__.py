"""The rules of Trinity Towers and nothing else: no environment, no learning framework.

Everything in ``trinity_env`` (environments, fast engine, agents, training) is built on
this package and tested against it: when another engine disagrees with it, that engine is
wrong.
"""

from trinity_env.core.actions import (
    DECK_SIZE,
    NUM_ACTIONS,
    PLACE_OFFSET,
    DecodedAction,
    Move,
    decode_action,
    pick_action,
    place_action,
)
from trinity_env.core.board import LANE_TILES, LANES, NEIGHBOURS, POSITIONS, TILES, tile_coords, tile_index
from trinity_env.core.cards import A, Card, parse_card, parse_cards
from trinity_env.core.decks import (
    DEFAULT_MAX_A_CARDS,
    HAND_SIZE,
    RANDOM_DECK_A_CARDS,
    RANDOM_DECK_SIDE_SUM,
    dominated_pairs,
    load_deck,
    random_deck,
    random_hand,
    standard_deck,
    validate_deck,
)
from trinity_env.core.errors import (
    ArgumentError,
    CardError,
    DeckError,
    IllegalMoveError,
    PositionError,
    TrinityError,
)
from trinity_env.core.render import render_text
from trinity_env.core.replay import FORMAT as REPLAY_FORMAT
from trinity_env.core.replay import Replay
from trinity_env.core.state import GameState, Outcome, Phase, Termination, Transition, beats, lane_scores

__all__ = [
    "DECK_SIZE",
    "DEFAULT_MAX_A_CARDS",
    "HAND_SIZE",
    "LANES",
    "LANE_TILES",
    "NEIGHBOURS",
    "NUM_ACTIONS",
    "PLACE_OFFSET",
    "POSITIONS",
    "RANDOM_DECK_A_CARDS",
    "RANDOM_DECK_SIDE_SUM",
    "REPLAY_FORMAT",
    "TILES",
    "A",
    "ArgumentError",
    "Card",
    "CardError",
    "DeckError",
    "DecodedAction",
    "GameState",
    "IllegalMoveError",
    "Move",
    "Outcome",
    "Phase",
    "PositionError",
    "Replay",
    "Termination",
    "Transition",
    "TrinityError",
    "beats",
    "decode_action",
    "dominated_pairs",
    "lane_scores",
    "load_deck",
    "parse_card",
    "parse_cards",
    "pick_action",
    "place_action",
    "random_deck",
    "random_hand",
    "render_text",
    "standard_deck",
    "tile_coords",
    "tile_index",
    "validate_deck",
]

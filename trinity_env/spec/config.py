"""The environment's settings: one validated, typed config from keywords or a YAML file.

Every rules choice that docs/rules.md leaves to configuration lives here, so the AEC env, the
single-agent env and the batched engine all read the same object. Errors name the bad
field and value. It sits in the spec layer, below the envs and the fast engine, which both
import it; ``trinity_env.spec.config`` re-exports it.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from trinity_env.core import (
    DEFAULT_MAX_A_CARDS,
    Card,
    DeckError,
    GameState,
    TrinityError,
    load_deck,
    random_deck,
    random_hand,
    validate_deck,
)
from trinity_env.core.decks import Deck, check_max_a_cards
from trinity_env.core.files import cut, load_yaml, names, one_line, short
from trinity_env.core.rewards import REWARD_MODES, RewardMode
from trinity_env.core.rules import StrEnum
from trinity_env.core.shipped import resolve


class DraftMode(StrEnum):
    """How the hands are made: ``PICK`` the players draft; ``DEALT`` hands dealt at random, no draft; ``FIXED`` the
    hands given. Members are strings (``DraftMode.DEALT == "dealt"``), so configs, JSON and replays keep their text;
    ``draft_mode`` parses the text where it enters."""

    PICK = "pick"
    DEALT = "dealt"
    FIXED = "fixed"


DRAFT_MODES = tuple(mode.value for mode in DraftMode)
"""The draft modes' texts, as configs give them."""
SPEC_DRAFT_SPELLINGS = {"random": "dealt"}
"""RULES.md §2's spelling of a draft mode, read as the project's name where a config enters: RULES.md is the spec
and calls dealt hands ``random``; the code, the docs and every file written call them ``"dealt"``."""
RANDOM_DECK = "random"
"""A deck value: a fresh seeded random deck at every reset."""
SAME_DECK = "same"
"""A value for ``decks[1]``: a copy of player 0's deck (how ``deck: random`` shares one random deck)."""


class ConfigError(TrinityError):
    """An environment config field has a bad value; the message names the field."""


class UnexpectedKeywordError(ConfigError, TypeError):
    """A keyword argument that is no config field: also a ``TypeError``, as Python's own "unexpected keyword
    argument" is, so that a library retrying ``gymnasium.make`` without a keyword it tried (TorchRL's
    ``frameskip``) recognises it."""


DeckSpec = str | Path | Sequence[str]


@dataclass(frozen=True)
class EnvConfig:
    """Settings of one Trinity Towers environment (see ``trinity_env.envs.aec`` for their meaning)."""

    draft: DraftMode = DraftMode.PICK
    """``"pick"``: the agents draft; ``"dealt"``: a random legal hand each, no draft; ``"fixed"``: ``hands``."""
    first_player: int | str = "random"
    """``"random"`` (from the seeded RNG), ``0`` or ``1``: who places first."""
    open_hands: bool = True
    """Whether both hands are visible once play starts."""
    max_a_cards: int = DEFAULT_MAX_A_CARDS
    """At most this many A cards in a hand."""
    decks: tuple[Deck | str, Deck | str] = ("standard", "standard")
    """Each player's deck, parsed; ``"random"`` for a seeded random deck each reset; ``decks[1]`` may
    be ``"same"``, a copy of player 0's."""
    hands: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    """Deck indices of each hand, for ``draft="fixed"``."""
    reward: RewardMode = RewardMode.WIN_LOSS
    """``"win_loss"``: +1/-1 at the end (0 for a draw); ``"margin"``: also the lane-score margin as it changes
    (a ``RewardMode``, a string: ``config.reward == "margin"``; ``trinity_env.core.rewards`` pays it)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "draft", draft_mode(self.draft))  # built by hand: checked and read here too
        if not isinstance(self.reward, RewardMode):  # built by hand rather than by make_config
            object.__setattr__(self, "reward", _reward_mode(self.reward))

    def deal_decks(self, rng: random.Random) -> tuple[Deck, Deck]:
        """The two decks of one game: fixed ones as given, random ones drawn from ``rng``."""
        first = random_deck(rng) if self.decks[0] == RANDOM_DECK else self.decks[0]
        second = self.decks[1]
        if second == SAME_DECK:
            second = first
        elif second == RANDOM_DECK:
            second = random_deck(rng)
        return first, second

    def new_game(self, rng: random.Random) -> GameState:
        """A new game under this config; everything random (decks, first mover, dealt hands) from ``rng``."""
        decks = self.deal_decks(rng)
        first = rng.randint(0, 1) if self.first_player == "random" else int(self.first_player)
        if self.draft is DraftMode.PICK:
            hands = None
        elif self.draft is DraftMode.DEALT:
            hands = [random_hand(deck, self.max_a_cards, rng) for deck in decks]
        else:
            hands = self.hands
        return GameState.new_game(decks, max_a_cards=self.max_a_cards, first_player=first, hands=hands)

    def to_dict(self) -> dict[str, Any]:
        """The keywords that rebuild this config (decks written as card lists)."""
        return {
            "draft": self.draft.value,
            "first_player": self.first_player,
            "open_hands": self.open_hands,
            "max_a_cards": self.max_a_cards,
            "decks": [deck if isinstance(deck, str) else [str(c) for c in deck] for deck in self.decks],
            "hands": None if self.hands is None else [list(h) for h in self.hands],
            "reward": self.reward.value,
        }

    def changes(self) -> dict[str, Any]:
        """The fields of ``to_dict`` that differ from the standard rules' (``make_config()``): a config written
        as briefly as a YAML file gives it (``{"draft": "dealt"}``), which ``make_config`` reads back equal."""
        standard = _standard()
        return {name: value for name, value in self.to_dict().items() if value != standard[name]}


_KEYWORDS = {f.name for f in fields(EnvConfig)} | {"deck", "config"}


def make_config(config: str | Path | Mapping[str, Any] | EnvConfig | None = None, **keywords: Any) -> EnvConfig:
    """Build and validate an ``EnvConfig`` from a YAML file or mapping, overridden by keywords.

    ``config`` may name a file in ``configs/rules/`` (``"standard"``: a bare name always means the shipped
    one, whatever the working directory holds) or be a YAML path (``./mine``, ``rules/x.yaml``, ``x.yaml``);
    a ``deck`` or ``decks`` name follows the same rule (``trinity_env.core.shipped``).
    Unknown keywords and bad values raise ``ConfigError`` naming the field.
    """
    base: dict[str, Any] = {}
    if isinstance(config, EnvConfig) and not keywords:
        return config  # already parsed and checked: typed values travel down as they are
    if isinstance(config, EnvConfig):
        base = config.to_dict()
    elif isinstance(config, Mapping):
        base = dict(config)
    elif config is not None:
        base = _load_yaml(config)
    merged = base | keywords
    unexpected = set(keywords) - _KEYWORDS
    if unexpected:
        plural = "s" if len(unexpected) > 1 else ""
        raise UnexpectedKeywordError(
            f"unexpected keyword argument{plural} {names(repr(key) for key in unexpected)}; "
            f"known config fields: {', '.join(sorted(_KEYWORDS - {'config'}))}"
        )
    unknown = set(merged) - _KEYWORDS
    if unknown:
        raise ConfigError(
            f"unknown config field(s): {names(unknown)}; known: {', '.join(sorted(_KEYWORDS - {'config'}))}"
        )
    return _validate(merged)


@functools.cache
def _standard() -> dict[str, Any]:
    """The standard rules' fields (``make_config().to_dict()``), read once."""
    return make_config().to_dict()


def _load_yaml(config: str | Path) -> dict[str, Any]:
    if not isinstance(config, str | Path):
        raise ConfigError(f"config must be a rules config name, a YAML path or a mapping, got {short(config)}")
    path = resolve(config, "rules", ConfigError)  # a bare name is always the shipped one (core.shipped)
    data = load_yaml(path, "config", ConfigError)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: expected a mapping of fields, got {type(data).__name__}")
    if "config" in data:
        raise ConfigError(f"config {path}: a config file cannot name another config")
    bad_keys = [key for key in data if not isinstance(key, str)]
    if bad_keys:
        raise ConfigError(f"config {path}: field names are strings, got {short(bad_keys[0])}")
    return data


def _validate(raw: dict[str, Any]) -> EnvConfig:
    draft = draft_mode(raw.get("draft", DraftMode.PICK))
    first_player = raw.get("first_player", "random")
    is_seat = isinstance(first_player, int) and not isinstance(first_player, bool) and first_player in (0, 1)
    if not (is_seat or (isinstance(first_player, str) and first_player == "random")):
        raise ConfigError(f"first_player must be 'random', 0 or 1, got {short(first_player)}")
    open_hands = raw.get("open_hands", True)
    if not isinstance(open_hands, bool):
        raise ConfigError(f"open_hands must be true or false, got {short(open_hands)}")
    max_a_cards = raw.get("max_a_cards", DEFAULT_MAX_A_CARDS)
    try:
        check_max_a_cards(max_a_cards)
    except TrinityError as err:
        raise ConfigError(str(err)) from None
    reward = _reward_mode(raw.get("reward", RewardMode.WIN_LOSS))

    if raw.get("deck") is not None and raw.get("decks") is not None:
        raise ConfigError("give either deck (both players get a copy) or decks (one per player), not both")
    if raw.get("decks") is not None:
        specs = raw["decks"]
        if isinstance(specs, str) or not isinstance(specs, Sequence) or len(specs) != 2:
            raise ConfigError(f"decks must be a list of 2 decks (one per player), got {short(specs)}")
        decks = (_deck(specs[0], max_a_cards, "decks[0]"), _deck(specs[1], max_a_cards, "decks[1]", allow_same=True))
    else:
        deck = _deck(raw.get("deck", "standard"), max_a_cards, "deck")
        decks = (deck, SAME_DECK if deck == RANDOM_DECK else deck)

    hands = raw.get("hands")
    if draft is DraftMode.FIXED:
        if hands is None:
            raise ConfigError("draft 'fixed' needs hands: two lists of 8 cards (or deck indices), one per player")
        if RANDOM_DECK in decks or SAME_DECK in decks:
            raise ConfigError("draft 'fixed' needs fixed decks, not deck 'random'")
        hands = _hands(hands, decks, max_a_cards)
    elif hands is not None:
        raise ConfigError(f"hands are only used with draft 'fixed', not with draft {draft.value!r}")
    return EnvConfig(draft, first_player, open_hands, max_a_cards, (decks[0], decks[1]), hands, reward)


def draft_mode(value: Any) -> DraftMode:
    """The one check of a draft mode, ``ConfigError`` if it is none: a ``DraftMode`` or one of ``DRAFT_MODES``,
    RULES.md's ``"random"`` read as ``"dealt"`` (``SPEC_DRAFT_SPELLINGS``)."""
    if isinstance(value, str) and value in SPEC_DRAFT_SPELLINGS:
        return DraftMode(SPEC_DRAFT_SPELLINGS[value])
    if not isinstance(value, str) or value not in DRAFT_MODES:
        raise ConfigError(
            f"draft must be one of {', '.join(map(repr, DRAFT_MODES))} (RULES.md's 'random' means 'dealt'), "
            f"got {short(value)}"
        )
    return DraftMode(value)


def _reward_mode(value: Any) -> RewardMode:
    """The one check of a reward mode: a ``RewardMode`` or its name as a string."""
    if not isinstance(value, str) or value not in REWARD_MODES:
        raise ConfigError(f"reward must be one of {', '.join(map(repr, REWARD_MODES))}, got {short(value)}")
    return RewardMode(value)


def _deck(spec: Any, max_a_cards: int, name: str, allow_same: bool = False) -> Deck | str:
    if isinstance(spec, str) and (spec == RANDOM_DECK or (allow_same and spec == SAME_DECK)):
        return spec
    try:
        if isinstance(spec, str | Path):
            return load_deck(spec, max_a_cards)
        if isinstance(spec, Sequence) and not isinstance(spec, bytes | bytearray):
            return validate_deck(spec, max_a_cards)
    except DeckError as err:
        raise ConfigError(f"{name}: {err}") from None
    except UnicodeDecodeError as err:  # a deck file that is not UTF-8 text
        raise ConfigError(f"{name}: deck file {spec} is not UTF-8 text (byte {err.start}: {err.reason})") from None
    except RecursionError:
        raise ConfigError(f"{name}: deck file {spec} is not valid YAML: nested too deeply") from None
    except (ValueError, TypeError) as err:  # what the deck loader does not name itself (e.g. a huge integer)
        raise ConfigError(f"{name}: bad deck {short(spec)}: {cut(one_line(err), 120)}") from None
    raise ConfigError(f"{name} must be a deck name, a YAML path, 'random' or a list of 16 cards, got {short(spec)}")


def _hands(hands: Any, decks: Sequence[Deck], max_a_cards: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(hands, str) or not isinstance(hands, Sequence) or len(hands) != 2:
        raise ConfigError(f"hands must be a list of 2 hands (one per player), got {short(hands)}")
    result = []
    for player, (hand, deck) in enumerate(zip(hands, decks)):
        where = f"hands[{player}]"
        if isinstance(hand, str) or not isinstance(hand, Sequence) or len(hand) != 8:
            raise ConfigError(f"{where} must list 8 cards or deck indices, got {short(hand)}")
        free = list(range(len(deck)))
        indices = []
        for item in hand:
            if isinstance(item, int) and not isinstance(item, bool):
                slot = item if item in free else None
            else:
                try:
                    card = Card(item)
                except TrinityError as err:
                    raise ConfigError(f"{where}: {err}") from None
                slot = next((i for i in free if deck[i] == card), None)
            if slot is None:
                raise ConfigError(f"{where}: {short(item)} is not an unused card of player {player}'s deck")
            free.remove(slot)
            indices.append(slot)
        a_cards = sum(deck[i].is_a_card for i in indices)
        if a_cards > max_a_cards:
            raise ConfigError(f"{where} holds {a_cards} A cards, more than max_a_cards={max_a_cards}")
        result.append(tuple(sorted(indices)))
    return result[0], result[1]

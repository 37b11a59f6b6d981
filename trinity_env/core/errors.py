"""Named errors of the rules core.

Every error a caller can trigger with bad input subclasses ``ValueError`` so that code
written against the plain contract (``except ValueError``) catches all of them, while
callers who care can tell a bad card from an illegal move.
"""

from __future__ import annotations


class TrinityError(ValueError):
    """Base class of every input error raised by ``trinity_env``."""


class CardError(TrinityError):
    """A card string is not valid ``"TRBL"`` notation."""


class DeckError(TrinityError):
    """A deck breaks the deck rules (size, no legal hand, bad file)."""


class IllegalMoveError(TrinityError):
    """A pick or placement the rules do not allow in this state, or a ``Move`` that is not one (``Move.parse``'s
    text, a tile off the board)."""


class PositionError(TrinityError):
    """A position or replay document does not follow the documented format, or a position is not one
    the call can work on (a draft given to the solver, a finished game, a mover with no legal action)."""


class ArgumentError(TrinityError):
    """A function or command argument outside what it accepts (a bad ``threads``, ``count``, output path).

    Not for the game's own inputs, which have their classes above (a card, a deck, a move, a position)."""


class BudgetExhausted(Exception):
    """A search or run that spent its whole budget (nodes, games, steps or seconds) without finishing.

    Not bad input, so not a ``TrinityError``/``ValueError``: the same call with a larger budget
    succeeds. The message is one line saying what was spent."""


class WriteError(OSError):
    """A file could not be written where asked: disk full, read-only, an I/O error, or a link in the way.

    Not bad input (so an ``OSError``, not a ``TrinityError``); the message is one line naming the file,
    and the file's previous content is still there (``trinity_env.core.writes``)."""

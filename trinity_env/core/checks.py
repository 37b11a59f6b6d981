"""Strict integer checks shared by every input path.

The rules count things: tiles, seats, deck slots, action ids. A ``1.0``, ``True`` or
``"3"`` where an integer belongs is almost always a bug in the caller, and coercing it
silently (``int(3.7) == 3``) plays a move nobody asked for. These checks accept Python and
numpy integers and nothing else, without importing numpy.
"""

from __future__ import annotations


def is_int(value: object) -> bool:
    """True for ``int`` and numpy integer scalars; False for ``bool``, numpy bools, floats and strings."""
    kind = type(value)
    if kind is int:
        return True
    if kind.__name__ in ("bool", "bool_") or isinstance(value, bool | str | bytes | float):
        return False
    if isinstance(value, int):
        return True
    return kind.__module__ == "numpy" and getattr(value, "ndim", 0) == 0 and hasattr(value, "__index__")


def describe_value(value: object) -> str:
    """A short, safe description of a bad value for an error message (never a 5000-digit repr)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:40] + "...")
    if isinstance(value, bool | int | float | type(None)):
        return f"{value!r} ({type(value).__name__})"
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__

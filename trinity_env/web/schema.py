"""Reading a request: its JSON body, and the fields of a fixed schema checked one by one.

``read_body`` takes only small UTF-8 JSON (``Content-Type: application/json``, at most ``MAX_BODY`` bytes or a
route's own cap): a repeated key, ``NaN``, an integer of more digits than ``MAX_DIGITS`` or a body nested too
deeply is a 400, not a 500. ``checked_fields`` refuses unknown and missing fields; ``range_field`` and
``choice_field`` compare values with their JSON type (``true`` is not an int, ``1.0`` is not an int) and their
range. Every refusal is an ``ApiError`` with a 4xx status and one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from starlette.requests import Request

from trinity_env.core.files import MAX_DIGITS
from trinity_env.web.catalogue import AgentChoice
from trinity_env.web.errors import ApiError
from trinity_env.web.games import SEED_LIMIT
from trinity_env.web.store import GameStore

MAX_BODY = 16 * 1024
"""Bytes of a request body (a move, a new game: under 1 KB); 413 past it, from ``Content-Length`` before the body is
read and again as it streams (``BodyLimits``)."""
MAX_REPLAY_BODY = 1024 * 1024
"""Bytes of an uploaded replay, ``POST /api/replays`` (a whole game is about 3 KB; room for indented, annotated
ones)."""


def _reject_constant(name: str) -> Any:
    raise ApiError(400, f"the body is not valid JSON: {name} is not a JSON number")


def _bounded_int(text: str) -> int:
    """``parse_int`` for ``json.loads``: no field needs a long integer, and one past Python's digit limit
    (4300) would make ``int`` raise ``ValueError`` deep in the parser, a 500 instead of a 400."""
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise ApiError(400, f"the body is not valid JSON for this API: an integer of {digits} digits is too long")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ApiError(400, f"the body repeats the field {key!r}")
        data[key] = value
    return data


async def read_body(request: Request, limit: int = MAX_BODY) -> Any:
    """The request's JSON body; 415, 413 or 400 with one line if it is not small UTF-8 JSON."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ApiError(415, "send the body as JSON, with Content-Type: application/json")
    declared = request.headers.get("content-length")
    if declared is not None and not (declared.isascii() and declared.isdigit()):
        raise ApiError(400, f"bad Content-Length {declared[:20]!r}")
    if declared is not None and (len(declared) > 12 or int(declared) > limit):  # int() of 5000 digits raises
        raise ApiError(413, f"the body is over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, f"the body is over {limit} bytes")
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ApiError(400, f"the body is not UTF-8 (byte {err.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as err:
        raise ApiError(400, f"the body is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise ApiError(400, "the body is nested too deeply") from None
    except ValueError as err:  # any other number the parser cannot convert: the client's fault, not a 500
        raise ApiError(400, f"the body is not valid JSON: {' '.join(str(err).split())[:200]}") from None


def checked_fields(body: Any, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    """``body`` as an object with exactly these fields (the optional ones may be missing)."""
    if not isinstance(body, dict):
        raise ApiError(400, f"the body must be a JSON object, got {json_type(body)}")
    unknown = sorted(set(body) - set(required) - set(optional))
    if unknown:
        known = ", ".join(list(required) + list(optional))
        raise ApiError(400, f"unknown field {unknown[0]!r}; the fields are: {known}")
    missing = [name for name in required if name not in body]
    if missing:
        raise ApiError(400, f"missing field {missing[0]!r}")
    return body


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction or exponent"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def range_field(body: dict[str, Any], name: str, low: int, high: int) -> int:
    """A whole JSON number in [low, high]: ``true``, ``1.0`` and ``"1"`` are refused."""
    value = body[name]
    if type(value) is not int:
        raise ApiError(400, f"{name} must be an integer {low}-{high}, got {json_type(value)}")
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be an integer {low}-{high}, got {value}")
    return value


def choice_field(body: dict[str, Any], name: str, options: Sequence[Any], default: Any) -> Any:
    """One of ``options``, compared with its JSON type (``true`` is not ``1``)."""
    if name not in body:
        return default
    value = body[name]
    for option in options:
        if type(value) is type(option) and value == option:
            return value
    shown = ", ".join(json.dumps(option) for option in options)
    short = isinstance(value, str | int | float | bool) and len(str(value)) < 40
    got = json.dumps(value) if short else json_type(value)
    raise ApiError(400, f"{name} must be one of {shown}, got {got}")


def agent_field(store: GameStore, value: Any, name: str) -> AgentChoice:
    if not isinstance(value, str):
        raise ApiError(400, f"{name} must be an agent name (a string from GET /api/agents), got {json_type(value)}")
    return store.agent(value)


def seed_field(body: dict[str, Any]) -> int | None:
    return range_field(body, "seed", 0, SEED_LIMIT - 1) if "seed" in body else None


def path_ply(text: str) -> int:
    """A ply in a path (``/review/12``): plain ASCII digits, at most 4 of them; a 400 otherwise (``-1``, ``1e3``)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 4):
        raise ApiError(400, f"ply must be a whole number, got {text[:20]!r}")
    return int(text)

"""Fuzz the command line and its loaders: whatever the file holds, ``trinity show`` and ``trinity solve``
answer with status 0, or status 2 and exactly one line on stderr; never a traceback.

Random bytes, JSON-ish text, random JSON documents, and valid positions and replays with a
few values replaced, removed or added are fed to ``trinity_env.cli.main`` in-process. The
hand-picked hostile files (deep nesting, huge numbers, NaN, bad types...) are regression
tests in ``test_cli.py``.
"""

from __future__ import annotations

import copy
import json
import os
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_env.arguments import non_negative_int, positive_int
from trinity_env.cli import main
from trinity_env.core import GameState, Replay

from games import random_game

EXAMPLES = int(os.environ.get("TRINITY_FUZZ_EXAMPLES", "100"))
"""Examples per fuzz test; raise it for a longer hunt (``TRINITY_FUZZ_EXAMPLES=5000 pytest tests/test_cli_fuzz.py``)."""
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _valid_documents() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Small positions (late in random games, so solving them is quick) and whole replays."""
    rng = random.Random(2026)
    positions: list[dict[str, Any]] = []
    replays: list[dict[str, Any]] = []
    while len(positions) < 8 or len(replays) < 4:
        states = random_game(rng)
        late = [s for s in states if s.phase == "play" and len(s.empty_tiles()) <= 4]
        if late:
            positions.append(rng.choice(late).to_dict())
        positions.append(states[-1].to_dict())
        if len(replays) < 4:
            replays.append(Replay.from_states(states).to_dict())
    return positions, replays


POSITIONS, REPLAYS = _valid_documents()

KEYS = [
    "phase",
    "to_move",
    "board",
    "hands",
    "max_a_cards",
    "card",
    "owner",
    "winner",
    "scores",
    "format",
    "version",
    "rules",
    "decks",
    "picks",
    "moves",
    "player",
    "tile",
    "start",
    "result",
    "draft",
]
SPECIAL = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    14,
    15,
    16,
    255,
    1.0,
    0.5,
    -0.0,
    1e308,
    10**30,
    -(10**30),
    "",
    "play",
    "over",
    "draft",
    "pick",
    "5A32",
    "7A24",
    "AAAA",
    "0000",
    "a\nb",
    "\u2028",
    "\x00",
    "\ud800",
    [],
    {},
]
leaves = st.one_of(
    st.sampled_from(SPECIAL),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.booleans(),
    st.none(),
)
json_values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=25,
)


def _check(capsys, argv: list[str]) -> int:
    """Run the command: status 0 with nothing on stderr, or 2 with one line ``trinity <command>: ...``."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code in (0, 2), (argv, code, captured.err[-2000:])
    if code == 2:
        err = captured.err
        assert err.startswith(f"trinity {argv[0]}: ") and err.endswith("\n"), err
        assert len(err.splitlines()) == 1 and err.count("\n") == 1, err
        assert "Traceback" not in err
    else:
        assert captured.err == ""
    return code


def _show_and_solve(capsys, tmp_path, data: bytes) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(data)
    _check(capsys, ["show", str(path)])
    _check(capsys, ["solve", str(path), "--max-seconds", "5"])


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a document: dict keys and list indices from the top."""
    found = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _paths(value, (*prefix, index))
    return found


def _mutate(data: st.DataObject, doc: Any) -> Any:
    """``doc`` with one to three values replaced, removed or added."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        path = data.draw(st.sampled_from(_paths(doc)), label="where")
        value = data.draw(json_values, label="value")
        if not path:
            doc = value
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        how = data.draw(st.sampled_from(["replace", "remove", "add"]), label="how")
        if how == "replace":
            parent[path[-1]] = value
        elif how == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(KEYS) | st.text(max_size=6), label="key")] = value
        else:
            parent.insert(data.draw(st.integers(0, len(parent)), label="at"), value)
    return doc


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(data, capsys, tmp_path):
    _show_and_solve(capsys, tmp_path, data)


@FUZZ
@given(text=st.text(alphabet='{}[]":,.0123456789eE-+ \n\ttrufalsnNIiy\\\ufeff\u00e9', max_size=200))
def test_json_ish_text(text, capsys, tmp_path):
    _show_and_solve(capsys, tmp_path, text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(doc=json_values)
def test_random_json_documents(doc, capsys, tmp_path):
    _show_and_solve(capsys, tmp_path, json.dumps(doc).encode("utf-8", "surrogatepass"))


@FUZZ
@given(data=st.data())
def test_mutated_positions(data, capsys, tmp_path):
    doc = _mutate(data, data.draw(st.sampled_from(POSITIONS), label="position"))
    _show_and_solve(capsys, tmp_path, json.dumps(doc).encode("utf-8", "surrogatepass"))


@FUZZ
@given(data=st.data())
def test_mutated_replays(data, capsys, tmp_path):
    doc = _mutate(data, data.draw(st.sampled_from(REPLAYS), label="replay"))
    path = tmp_path / "replay.json"
    path.write_bytes(json.dumps(doc).encode("utf-8", "surrogatepass"))
    _check(capsys, ["show", str(path)])
    _check(capsys, ["show", "--all", str(path)])


@FUZZ
@given(data=st.data())
def test_corrupted_bytes_of_valid_documents(data, capsys, tmp_path):
    doc = data.draw(st.sampled_from(POSITIONS + REPLAYS), label="document")
    raw = bytearray(json.dumps(doc).encode())
    for _ in range(data.draw(st.integers(1, 4), label="corruptions")):
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        how = data.draw(st.sampled_from(["flip", "delete", "insert"]), label="how")
        byte = data.draw(st.integers(0, 255), label="byte")
        if how == "flip":
            raw[at] = byte
        elif how == "delete":
            del raw[at]
        else:
            raw.insert(at, byte)
    _show_and_solve(capsys, tmp_path, bytes(raw))


def test_the_valid_documents_do_load(capsys, tmp_path):
    """The seeds of the mutations are good documents: show draws them all and solve solves the live ones."""
    for doc in POSITIONS:
        path = tmp_path / "p.json"
        path.write_text(json.dumps(doc))
        assert _check(capsys, ["show", str(path)]) == 0
        live = GameState.from_dict(doc).phase == "play"
        assert _check(capsys, ["solve", str(path)]) == (0 if live else 2)
    for doc in REPLAYS:
        path = tmp_path / "r.json"
        path.write_text(json.dumps(doc))
        assert _check(capsys, ["show", "--all", str(path)]) == 0


@FUZZ
@given(text=st.text(alphabet="0123456789.-+eE_x \u0663", max_size=6), option=st.sampled_from(["--games", "--seed"]))
def test_number_options_take_whole_numbers_only(text, option, capsys, tmp_path, monkeypatch):
    reached: dict[str, Any] = {}

    def stop(specs, games, **kwargs):
        reached.update(kwargs, games=games)
        raise KeyboardInterrupt  # stop before any game: the CLI answers 130

    monkeypatch.setattr("trinity_env.evaluation.arena.round_robin", stop)
    argv = ["arena", "--agents", "random", "greedy", "--quiet", "--out", str(tmp_path / "out"), f"{option}={text}"]
    code = main(argv)
    err = capsys.readouterr().err
    digits = text.isascii() and text.isdigit()
    minimum = 1 if option == "--games" else 0
    if digits and int(text) >= minimum:
        assert code == 130 and err == "trinity arena: interrupted\n"
        value = reached["games" if option == "--games" else "seed"]
        assert type(value) is int and value == int(text)
    else:
        assert code == 2 and err.startswith("trinity arena: ") and err.count("\n") == 1, err
        assert option.strip("-") in err  # "argument --games: expected a whole number ..." (argparse eats "--")
    for parse, low in ((positive_int, 1), (non_negative_int, 0)):
        try:
            value = parse(text)
        except Exception:
            assert not (digits and int(text) >= low)
        else:
            assert digits and type(value) is int and value == int(text) >= low

"""Inputs are checked by what they make, not by what they say.

Each case here reproduced a bug: a 321-byte YAML alias bomb in a training or rules config
took gigabytes and its error message quoted the expanded value; a dense YAML under the
size cap parsed for minutes, and a 64 MiB JSON position could build 2 GB of lists;
messages quoted a whole bad value; a key written twice (YAML or JSON) kept its last value
silently; a replay read ``player: 1.0``, ``true`` and ``open_hands: "no"`` (as true) and
ignored unknown fields; ``trinity show FIFO`` blocked forever.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from training.config import TrainConfig, TrainConfigError
from trinity_env.core import DeckError, GameState, PositionError, Replay, load_deck, random_hand, standard_deck
from trinity_env.core.errors import TrinityError
from trinity_env.core.files import (
    MAX_DOCUMENT_BYTES,
    MAX_YAML_BYTES,
    MAX_YAML_NODES,
    load_yaml,
    parse_json,
    read_json,
    short,
)
from trinity_env.spec.config import ConfigError, make_config

from drawn import EXAMPLE

ROOT = Path(__file__).resolve().parent.parent
MAX_RSS_MB = 200
LONG = "x" * 5000


def _bomb(field: str, levels: int = 9, width: int = 9) -> str:
    """The "billion laughs": ``width ** levels`` leaves from a few hundred bytes."""
    names = "abcdefghijklmnopqrstuvwxyz"
    lines = [f"{field}:", f"  - &a [{','.join('x' * width)}]"]
    lines += [f"  - &{names[i]} [{','.join([f'*{names[i - 1]}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _run_bounded(code: str, timeout: float = 120) -> dict:
    """Run ``code`` in a child held to 2 GiB of address space; its message and peak RSS.

    The limit makes a regression fail with a MemoryError instead of taking the machine.
    """
    script = textwrap.dedent(
        """
        import json, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))
        from trinity_env.core.errors import TrinityError
        message = None
        try:
        {code}
        except TrinityError as err:
            message = str(err)
        status = open("/proc/self/status").read()
        peak_kb = int(status.split("VmHWM:")[1].split()[0])
        print(json.dumps({{"message": message, "peak_mb": peak_kb / 1024}}))
        """
    ).format(code=textwrap.indent(textwrap.dedent(code), "    "))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _one_short_line(message: str | None, limit: int = 300) -> None:
    assert message is not None, "nothing was refused"
    assert "\n" not in message and len(message) <= limit, message[:1000]


# ---------------------------------------------------------------------- YAML bounds


def test_the_bomb_is_small():
    assert len(_bomb("seed")) < 400


@pytest.mark.parametrize(
    "load",
    [
        "from training.config import TrainConfig\nTrainConfig.load({path!r})",
        "from trinity_env.spec.config import make_config\nmake_config({path!r})",
        "from trinity_env.core import load_deck\nload_deck({path!r})",
    ],
    ids=["training-seed", "rules-config", "deck-file"],
)
def test_a_yaml_alias_bomb_is_refused_before_it_grows(load, tmp_path):
    field = {"TrainConfig": "seed", "make_config": "draft", "load_deck": "cards"}
    name = next(value for key, value in field.items() if key in load)
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(name))
    result = _run_bounded(load.format(path=str(path)))
    _one_short_line(result["message"])
    assert "bomb.yaml" in result["message"] and "nodes" in result["message"]
    assert result["peak_mb"] < MAX_RSS_MB, result


def test_a_dense_yaml_under_the_byte_cap_is_refused_quickly(tmp_path):
    path = tmp_path / "dense.yaml"
    items = MAX_YAML_NODES + 10
    path.write_text("seed: [" + ",".join(["0"] * items) + "]\n")
    assert path.stat().st_size < MAX_YAML_BYTES
    result = _run_bounded(f"from training.config import TrainConfig\nTrainConfig.load({str(path)!r})", timeout=60)
    _one_short_line(result["message"])
    assert "nodes" in result["message"]
    assert result["peak_mb"] < MAX_RSS_MB, result


def test_a_yaml_file_over_the_yaml_cap_is_refused_unparsed(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * MAX_YAML_BYTES + "\ndraft: pick\n")
    with pytest.raises(ConfigError, match=r"big\.yaml is too large"):
        make_config(str(path))


def test_a_json_document_over_the_document_cap_is_refused_unparsed(tmp_path):
    path = tmp_path / "big.json"
    path.write_text("[" + "[]," * (MAX_DOCUMENT_BYTES // 3) + "[]]")  # would build ~130 MB of lists
    with pytest.raises(PositionError, match=r"big\.json is too large"):
        read_json(path, "position", PositionError)
    with pytest.raises(PositionError, match=r"big\.json is too large"):
        Replay.load(path)


def test_a_recursive_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("draft: &a [*a]\n")
    with pytest.raises(TrinityError, match="contains itself"):
        load_yaml(path)


def test_a_long_sexagesimal_integer_is_refused(tmp_path):
    path = tmp_path / "sixty.yaml"
    path.write_text("seed: 1" + ":1" * 20_000 + "\n")
    with pytest.raises(TrainConfigError, match="too long"):
        TrainConfig.load(path)


def test_a_control_character_is_one_yaml_error(tmp_path):
    path = tmp_path / "nul.yaml"
    path.write_text("draft: pick\0\n")
    with pytest.raises(ConfigError, match=r"nul\.yaml is not valid YAML: unacceptable character"):
        make_config(str(path))


def test_merge_keys_and_small_aliases_still_load(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("base: &b {x: 1, y: 2}\nmine:\n  <<: *b\n  y: 3\nlist: [*b, *b]\n")
    assert load_yaml(path) == {"base": {"x": 1, "y": 2}, "mine": {"x": 1, "y": 3}, "list": [{"x": 1, "y": 2}] * 2}


# ---------------------------------------------------------------------- short messages


def test_short_cuts_any_value():
    assert short("abc") == "'abc'"
    assert len(short(LONG)) <= 60 and short(LONG).endswith("...")
    assert "digits" in short(10**5000)
    assert len(short([[LONG] * 100] * 100)) <= 60
    loop: list = []
    loop.append(loop)
    assert len(short(loop)) <= 60


def _yaml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "text",
    [
        f"seed: {LONG}\n",
        f"seed: [{', '.join(['1'] * 3000)}]\n",
        f"eval_opponents: [[{LONG}]]\n",
        f"env: [{LONG}]\n",
        f"{LONG}: 1\n",
    ],
    ids=["long-string", "long-list", "opponent", "env", "field-name"],
)
def test_training_config_messages_quote_a_short_value(text, tmp_path):
    with pytest.raises(TrainConfigError) as err:
        TrainConfig.load(_yaml(tmp_path, text))
    _one_short_line(str(err.value))


@pytest.mark.parametrize(
    "fields",
    [
        {"draft": LONG},
        {"first_player": [LONG]},
        {"open_hands": LONG},
        {"max_a_cards": LONG},
        {"reward": LONG},
        {"deck": {LONG: 1}},
        {"decks": LONG},
        {"draft": "fixed", "hands": LONG},
        {"draft": "fixed", "hands": [[10**200] * 8, [0] * 8]},
        {"draft": "fixed", "hands": [list(range(100)), [0] * 8]},
        {LONG: 1},
    ],
    ids=lambda fields: "-".join(str(key)[:12] for key in fields),
)
def test_rules_config_messages_quote_a_short_value(fields):
    with pytest.raises(ConfigError) as err:
        make_config(fields)
    _one_short_line(str(err.value))


@pytest.mark.parametrize(
    "text",
    [f"cards: []\n{LONG}: 1\n", f"cards: {LONG}\n", f"name: [{LONG}]\ncards: []\n"],
    ids=["field-name", "cards", "name"],
)
def test_deck_file_messages_quote_a_short_value(text, tmp_path):
    with pytest.raises(DeckError) as err:
        load_deck(_yaml(tmp_path, text))
    _one_short_line(str(err.value))


def _replay() -> dict:
    deck = standard_deck()
    state = GameState.new_game(first_player=0, hands=[random_hand(deck, 3, seed) for seed in (1, 2)])
    states = [state]
    while not states[-1].is_over:
        states.append(states[-1].apply(states[-1].legal_actions()[0]))
    return Replay.from_states(states).to_dict()


def _replay_with(**changes) -> dict:
    data = _replay()
    for dotted, value in changes.items():
        target = data
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return data


@pytest.mark.parametrize(
    "changes",
    [
        {"format": LONG},
        {"version": LONG},
        {"rules__draft": LONG},
        {"moves__0": {LONG: 1}},
        {"moves__0__player": LONG},
        {"moves__0__tile": LONG},
        {"result": {"winner": LONG}},
        {LONG: 1},
        {"rules__" + LONG: 1},
    ],
    ids=lambda changes: "-".join(key[:12] for key in changes),
)
def test_replay_messages_quote_a_short_value(changes):
    with pytest.raises(PositionError) as err:
        Replay.from_dict(_replay_with(**changes))
    _one_short_line(str(err.value))


FINISHED = {
    "phase": "over",
    "to_move": 1,
    "board": [[{"card": "1111", "owner": 0}] * 5, [{"card": "1111", "owner": 1}] * 3 + [None] * 2, [None] * 5],
    "hands": [[], ["2222"]],
}


@pytest.mark.parametrize(
    "data",
    [EXAMPLE | {LONG: 1}, EXAMPLE | {f"{i}{LONG}": 1 for i in range(100)}, FINISHED | {"scores": [10**5000, 1]}],
    ids=["field-name", "many-fields", "huge-scores"],
)
def test_position_messages_quote_a_short_value(data):
    with pytest.raises(PositionError) as err:
        GameState.from_dict(data)
    _one_short_line(str(err.value))


@pytest.mark.parametrize(
    "load",
    [
        lambda: make_config(draft="fixed", hands=[[LONG] * 8, list(range(8))]),
        lambda: GameState.from_dict(EXAMPLE | {"hands": [[LONG], []]}),
        lambda: Replay.from_dict(_replay_with(moves__0__card=LONG)),
    ],
    ids=["rules-hands", "position-hands", "replay-move"],
)
def test_card_messages_quote_a_short_value(load):
    with pytest.raises(TrinityError) as err:
        load()
    _one_short_line(str(err.value))


# ---------------------------------------------------------------------- keys written twice


@pytest.mark.parametrize(
    ("load", "text", "error"),
    [
        (TrainConfig.load, "seed: 1\nseed: 2\n", TrainConfigError),
        (make_config, "draft: pick\nopen_hands: true\ndraft: dealt\n", ConfigError),
        (load_deck, "cards: []\ncards: []\n", DeckError),
        (load_yaml, "a:\n  b: 1\n  b: 2\n", TrinityError),
    ],
    ids=["training", "rules", "deck", "nested"],
)
def test_a_yaml_key_written_twice_is_refused(load, text, error, tmp_path):
    path = _yaml(tmp_path, text)
    with pytest.raises(error) as err:
        load(path)
    message = str(err.value)
    _one_short_line(message)
    assert path in message and "twice" in message.replace(path, "")  # the test's folder says "twice" too


def test_a_long_yaml_key_written_twice_is_named_short(tmp_path):
    path = _yaml(tmp_path, f"? {LONG}\n: 1\n? {LONG}\n: 2\n")  # explicit keys: a plain one is at most 1024 long
    with pytest.raises(TrinityError) as err:
        load_yaml(path)
    message = str(err.value)
    _one_short_line(message)
    assert "twice" in message.replace(path, "")


def test_a_json_key_written_twice_is_refused(tmp_path):
    text = json.dumps(EXAMPLE)
    twice = '{"to_move": 1, ' + text[1:]
    assert json.loads(twice)["to_move"] == EXAMPLE["to_move"], "the last value would win silently"
    path = tmp_path / "position.json"
    path.write_text(twice)
    with pytest.raises(TrinityError) as err:
        read_json(path, "position")
    message = str(err.value)
    _one_short_line(message)
    assert str(path) in message and "'to_move'" in message and "twice" in message.replace(str(path), "")
    with pytest.raises(PositionError, match=f"'{LONG[:20]}.*twice"):
        parse_json(f'{{"a": {{"{LONG}": 1, "{LONG}": 2}}}}', error=PositionError)


def test_a_replay_key_written_twice_is_refused(tmp_path):
    text = json.dumps(_replay())
    path = tmp_path / "game.json"
    path.write_text(text.replace('"moves": [', '"moves": [], "moves": [', 1))
    with pytest.raises(PositionError, match=r"game\.json.*'moves'.*twice"):
        Replay.load(path)


# ---------------------------------------------------------------------- lenient fields


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"moves__0__player": 0.0}, "player"),
        ({"moves__0__player": False}, "player"),
        ({"moves__0__player": "0"}, "player"),
        ({"moves__0__tile": 0.0}, "tile"),
        ({"moves__0__tile": True}, "tile"),
        ({"rules__open_hands": "no"}, "open_hands"),
        ({"rules__open_hands": 1}, "open_hands"),
        ({"rules__first_player": False}, "first_player"),
        ({"rules__first_player": 0.0}, "first_player"),
        ({"rules__max_a_cards": 3.0}, "max_a_cards"),
        ({"version": True}, "version"),
        ({"version": 1.0}, "version"),
        ({"comment": "hi"}, "comment"),
        ({"rules__colour": "red"}, "colour"),
        ({"moves__0__note": "good"}, "note"),
        ({"result": {"winner": 0.0, "scores": [1, 2], "termination": "full_board"}}, "result"),
        ({"result": [1]}, "result"),
        ({"moves": {}}, "moves"),
        ({"decks": "x"}, "decks"),
    ],
    ids=lambda value: "-".join(value) if isinstance(value, dict) else None,
)
def test_replays_refuse_lenient_fields(changes, message):
    with pytest.raises(PositionError, match=message):
        Replay.from_dict(_replay_with(**changes))


def test_a_strict_replay_still_plays_back():
    data = _replay()
    assert Replay.from_dict(json.loads(json.dumps(data))).to_dict() == data


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"draft": True}, "draft"),
        ({"reward": 1}, "reward"),
        ({"first_player": 1.0}, "first_player"),
        ({"open_hands": "no"}, "open_hands"),
        ({"max_a_cards": True}, "max_a_cards"),
        ({"draft": "fixed", "hands": [[0.0, 1, 2, 3, 4, 5, 6, 7], list(range(8))]}, "hands"),
        ({"draft": "fixed", "hands": [[True, 1, 2, 3, 4, 5, 6, 7], list(range(8))]}, "hands"),
    ],
)
def test_rules_configs_refuse_lenient_fields(fields, message):
    with pytest.raises(ConfigError, match=message):
        make_config(fields)


@pytest.mark.parametrize(
    ("text", "message"),
    [("name: 5\ncards: []\n", "name"), ("description: [a]\ncards: []\n", "description")],
)
def test_deck_files_refuse_lenient_fields(text, message, tmp_path):
    with pytest.raises(DeckError, match=message):
        load_deck(_yaml(tmp_path, text))


@pytest.mark.parametrize("name", ["standard", "hidden_hands", "random_decks"])
def test_the_shipped_rules_still_load(name):
    make_config(name)


def test_the_shipped_decks_still_load():
    assert len(standard_deck()) == 16


# ---------------------------------------------------------------------- files that are not files


def _cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [sys.executable, "-m", "trinity_env.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"trinity {' '.join(args)} blocked for {timeout} s")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
@pytest.mark.parametrize("command", [["show"], ["solve"], ["arena", "--agents", "random", "random", "--config"]])
def test_a_named_pipe_is_refused_at_once(command, tmp_path):
    fifo = tmp_path / ("pipe.yaml" if "--config" in command else "pipe.json")
    os.mkfifo(fifo)
    done = _cli(*command, str(fifo), *(["--out", str(tmp_path / "o")] if "arena" in command else []))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0] and fifo.name in lines[0], done.stderr


def test_a_device_is_refused(tmp_path):
    with pytest.raises(PositionError, match="not a regular file"):
        read_json(os.devnull, "position", PositionError)


def test_standard_input_still_reads():
    done = subprocess.run(
        [sys.executable, "-m", "trinity_env.cli", "show", "-"],
        input=json.dumps(EXAMPLE),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr

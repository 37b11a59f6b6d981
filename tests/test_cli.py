"""The ``trinity`` command line."""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from processes import reaped

from trinity_env.cli import main
from trinity_env.core import GameState, Replay, TrinityError

POSITION = {
    "phase": "play",
    "to_move": 0,
    "board": [[None, {"card": "5A32", "owner": 1}, None, None, None], [None] * 5, [None] * 5],
    "hands": [["7A24"], ["3333"]],
    "max_a_cards": 3,
}


def test_show_draws_a_position(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POSITION))
    assert main(["show", str(path)]) == 0
    assert capsys.readouterr().out.rstrip("\n") == str(GameState.from_dict(POSITION))


def test_show_reads_stdin_and_replays(tmp_path, capsys, monkeypatch):
    rng = random.Random(0)
    states = [GameState.new_game()]
    while not states[-1].is_over:
        states.append(states[-1].apply(rng.choice(states[-1].legal_actions())))
    monkeypatch.setattr("sys.stdin", io.StringIO(Replay.from_states(states).to_json()))
    assert main(["show", "-"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == str(states[-1])


def test_bad_input_is_one_line_on_stderr_with_status_2(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(POSITION | {"phase": "draft"}))
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trinity show: unknown phase 'draft'") and err.count("\n") == 1
    assert main(["show", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    path.write_text("{")
    assert main(["show", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


# ---------------------------------------------------------------------- one line, status 2, before any work

OPEN_8 = GameState.new_game(hands=[range(5, 13), range(8, 16)], first_player=0).to_dict()
"""Full hands on an empty board: far too big to solve within a small budget."""


def _one_line_error(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"trinity {command}: ") and err.endswith("\n"), err
    assert len(err.splitlines()) == 1 and err.count("\n") == 1, err
    assert "Traceback" not in err and "usage:" not in err
    return err


@pytest.fixture
def no_games(monkeypatch):
    """Make any game played fail the test: every check must come before the first game."""

    def refuse(*args, **kwargs):
        raise AssertionError("a game was started before the input was checked")

    monkeypatch.setattr("trinity_env.evaluation.arena.round_robin", refuse)
    monkeypatch.setattr("trinity_env.evaluation.balance.run_balance", refuse)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["arena", "--agents", "random"], "at least two agents"),
        (["arena", "--agents", "random", "greedy", "--games", "0"], "argument --games: expected a whole number >= 1"),
        (["arena", "--agents", "random", "greedy", "--games", "1.5"], "got '1.5'"),
        (["arena", "--agents", "random", "greedy", "--games", "1e3"], "got '1e3'"),
        (["arena", "--agents", "random", "greedy", "--games", "+3"], "got '+3'"),
        (["arena", "--agents", "random", "greedy", "--games", "1_000"], "got '1_000'"),
        (["arena", "--agents", "random", "greedy", "--games", " 3"], "got ' 3'"),
        (["arena", "--agents", "random", "greedy", "--games", "\u0663"], "expected a whole number"),
        (["arena", "--agents", "random", "greedy", "--games", "9" * 5000], "expected a whole number"),
        (["arena", "--agents", "random", "greedy", "--workers", "-1"], "argument --workers"),
        (["arena", "--agents", "random", "greedy", "--workers", "0"], "argument --workers"),
        (
            ["arena", "--agents", "random", "greedy", "--seed", "-5"],
            "argument --seed: expected a whole number 0-9223372036854775807",
        ),
        (["arena", "--agents", "random", "greedy", "--seed=--"], "argument --seed: expected one argument"),
        (["arena", "--agents", "random", "greedy", "--out=--"], "argument --out: expected one argument"),
        (["arena", "--agents", "random", "nobody"], "no agent named 'nobody'"),
        (["arena", "--agents", "random", "mcts:1e3"], "bad arguments in agent spec 'mcts:1e3'"),
        (["arena", "--agents", "random", "greedy", "--bogus"], "unrecognized arguments: --bogus"),
        (["arena"], "the following arguments are required: --agents"),
        (["balance", "--games", "0"], "argument --games"),
        (["balance", "--a-limits", "9"], "argument --a-limits: expected a whole number 0-8"),
        (["balance", "--a-limits", "3.0"], "argument --a-limits"),
        (["balance", "--agents", "nobody"], "no agent named 'nobody'"),
        (["balance", "--seed", "-1"], "argument --seed"),
        (["solve", "x.json", "--max-seconds", "0"], "argument --max-seconds"),
        (["solve", "x.json", "--max-seconds", "nan"], "argument --max-seconds"),
        (["solve", "x.json", "--max-seconds", "inf"], "argument --max-seconds"),
        (["solve", "x.json", "--max-nodes", "1.5"], "argument --max-nodes"),
        (["play", "--seed", "-5"], "argument --seed"),
        (["play", "--seat", "2"], "invalid choice"),
        (["play", "--opponent", "nobody"], "no agent named 'nobody'"),
        (["show"], "the following arguments are required: file"),
    ],
)
def test_bad_arguments_are_one_line_with_status_2(argv, message, capsys, no_games, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written in the checkout
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("trinity play asked for a move"))
    assert main(argv) == 2
    assert message in _one_line_error(capsys, argv[0])
    assert list(tmp_path.iterdir()) == [], "bad input must not leave output behind"


def test_a_bad_command_is_one_line_too(capsys):
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trinity: argument command: invalid choice") and err.count("\n") == 1
    assert main([]) == 2
    assert capsys.readouterr().err == "trinity: the following arguments are required: command\n"


def test_integers_are_integers():
    from trinity_env.arguments import non_negative_int, positive_int
    from trinity_env.cli.solve import positive_seconds

    assert positive_int("12") == 12 and type(positive_int("12")) is int and non_negative_int("0") == 0
    assert positive_seconds("0.5") == 0.5 and positive_seconds("1e3") == 1000.0 and positive_seconds("60") == 60.0
    for bad in ["1.5", "1e3", "1.0", "+1", "0x10", "1_0", " 1", "1 ", "", "-0", "true", "\u0663", "9" * 19]:
        with pytest.raises(argparse.ArgumentTypeError):
            positive_int(bad)
    for bad in ["nan", "inf", "-1", "0", "0.0", "1e999", "1_0", "", " 1", "one"]:
        with pytest.raises(argparse.ArgumentTypeError):
            positive_seconds(bad)


@pytest.mark.parametrize("command", ["arena", "balance"])
def test_output_paths_are_checked_before_any_game(command, tmp_path, capsys, no_games):
    agents = ["random", "greedy"] if command == "arena" else ["greedy"]
    base = [command, "--agents", *agents, "--games", "1000000", "--quiet"]
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    for out, message in [(a_file, "not a folder"), (a_file / "below", "cannot write there")]:
        assert main([*base, "--out", str(out)]) == 2
        assert message in _one_line_error(capsys, command)
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / ("arena.json" if command == "arena" else "balance.md")).mkdir()
    assert main([*base, "--out", str(blocked)]) == 2
    assert "in the way" in _one_line_error(capsys, command)
    if command == "arena":
        good = str(tmp_path / "fine")
        for path, message in [(tmp_path, "is a folder"), (a_file / "s.json", "cannot write there")]:
            assert main([*base, "--out", good, "--json", str(path)]) == 2
            assert message in _one_line_error(capsys, command)
        assert not (tmp_path / "fine").exists(), "a bad --json is refused while parsing, before --out is created"
    assert a_file.read_text() == "not a folder"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_output_folder_is_refused(tmp_path, capsys, no_games):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert main(["arena", "--agents", "random", "greedy", "--quiet", "--out", str(locked)]) == 2
        assert "cannot write there" in _one_line_error(capsys, "arena")
    finally:
        locked.chmod(0o755)


# ---------------------------------------------------------------------- hostile files

_PLAIN = json.dumps(POSITION)


def _hostile() -> dict[str, bytes]:
    """Files that once gave tracebacks (or might): each must be one line on stderr with status 2."""
    deep_board = json.loads(_PLAIN)
    deep_board["board"][0][0] = json.loads("[" * 900 + "]" * 900)
    owner_float = json.loads(_PLAIN)
    owner_float["board"][0][1]["owner"] = 1.0
    owner_true = json.loads(_PLAIN)
    owner_true["board"][0][1]["owner"] = True
    return {
        "not_utf8": b'\xff\xfe{"phase": "play"}',
        "latin1": _PLAIN.replace('"play"', '"pl\u00e9y"').encode("latin-1"),
        "utf16": _PLAIN.encode("utf-16"),
        "nul_bytes": b"\x00" * 64,
        "empty": b"",
        "blank": b" \n\t ",
        "bom_only": b"\xef\xbb\xbf",
        "deep_lists": b"[" * 100_000 + b"]" * 100_000,
        "deep_objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        "deep_board": json.dumps(deep_board).encode(),
        "int_5000_digits": _PLAIN.replace('"to_move": 0', '"to_move": ' + "9" * 5000).encode(),
        "int_4000_digits": _PLAIN.replace('"to_move": 0', '"to_move": -' + "9" * 4000).encode(),
        "int_50_digits": _PLAIN.replace('"to_move": 0', '"to_move": ' + "9" * 50).encode(),
        "nan": _PLAIN.replace('"to_move": 0', '"to_move": NaN').encode(),
        "infinity": _PLAIN.replace('"max_a_cards": 3', '"max_a_cards": Infinity').encode(),
        "minus_infinity": _PLAIN.replace('"max_a_cards": 3', '"max_a_cards": -Infinity').encode(),
        "float_overflow": _PLAIN.replace('"to_move": 0', '"to_move": 1e400').encode(),
        "huge_string": json.dumps(POSITION | {"phase": "x" * 1_000_000}).encode(),
        "huge_card": json.dumps(POSITION | {"hands": [["7" * 100_000], ["3333"]]}).encode(),
        "huge_key": json.dumps(POSITION | {"k" * 100_000: 1}).encode(),
        "newline_in_key": json.dumps(POSITION | {"bad\nkey\r\u2028": 1}).encode(),
        "lone_surrogate": _PLAIN.replace('"play"', '"\\ud800"').encode(),
        "to_move_float": json.dumps(POSITION | {"to_move": 1.0}).encode(),
        "to_move_true": json.dumps(POSITION | {"to_move": True}).encode(),
        "to_move_string": json.dumps(POSITION | {"to_move": "0"}).encode(),
        "owner_true": json.dumps(owner_true).encode(),
        "owner_float": json.dumps(owner_float).encode(),
        "max_a_cards_string": json.dumps(POSITION | {"max_a_cards": "3"}).encode(),
        "hands_object": json.dumps(POSITION | {"hands": {"0": [], "1": []}}).encode(),
        "board_string": json.dumps(POSITION | {"board": "." * 15}).encode(),
        "card_number": json.dumps(POSITION | {"hands": [[7324], ["3333"]]}).encode(),
        "null": b"null",
        "list": b"[]",
        "number": b"42",
        "string": b'"position"',
        "replay_bad_moves": json.dumps({"format": "trinity-towers-replay", "version": 1, "moves": 5}).encode(),
        "replay_wrong_types": json.dumps(
            {"format": "trinity-towers-replay", "version": 1.0, "rules": [], "decks": {}, "moves": [[]]}
        ).encode(),
    }


@pytest.mark.parametrize("name", sorted(_hostile()))
@pytest.mark.parametrize("command", ["show", "solve"])
def test_hostile_files_are_one_line_with_status_2(name, command, tmp_path, capsys):
    path = tmp_path / f"{name}.json"
    path.write_bytes(_hostile()[name])
    assert main([command, str(path)]) == 2
    err = _one_line_error(capsys, command)
    assert len(err) < 1000, "a huge bad value is cut in the message"
    assert capsys.readouterr().out == ""


def test_hostile_standard_input_is_one_line_too(capsys, monkeypatch):
    for data, message in [(b"\xff{}", "standard input is not UTF-8 text"), (b"[" * 50_000, "nested too deeply")]:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert main(["show", "-"]) == 2
        assert message in _one_line_error(capsys, "show")


def test_what_the_messages_say(tmp_path, capsys):
    hostile = _hostile()
    for name, message in [
        ("not_utf8", "is not UTF-8 text (byte 0"),
        ("deep_lists", "is not valid JSON: nested too deeply"),
        ("int_5000_digits", "an integer of 5000 digits is too long"),
        ("nan", "NaN is not a JSON number"),
        ("infinity", "Infinity is not a JSON number"),
        ("to_move_float", "to_move"),
        ("owner_true", "owner"),
    ]:
        path = tmp_path / f"{name}.json"
        path.write_bytes(hostile[name])
        assert main(["show", str(path)]) == 2
        assert message in _one_line_error(capsys, "show"), name
    assert main(["show", str(tmp_path)]) == 2
    assert "cannot read" in _one_line_error(capsys, "show")


def test_a_utf8_bom_is_accepted(tmp_path, capsys, monkeypatch):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + _PLAIN.encode())
    assert main(["show", str(path)]) == 0
    assert capsys.readouterr().out.rstrip("\n") == str(GameState.from_dict(POSITION))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbf" + _PLAIN.encode())))
    assert main(["solve", "-", "--json", str(tmp_path / "solved.json")]) == 0
    assert json.loads((tmp_path / "solved.json").read_text())["winner"] in (0, 1, None)


# ---------------------------------------------------------------------- trinity solve


@pytest.mark.parametrize(
    "position",
    [
        POSITION | {"phase": "over"} | {"board": [[{"card": "5555", "owner": 0}] * 5, [None] * 5, [None] * 5]},
        POSITION | {"hands": [[], []]},
    ],
    ids=["finished", "empty-hands"],
)
def test_solve_refuses_a_position_without_a_move(position, tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(position))
    assert main(["solve", str(path)]) == 2
    assert "no move to solve" in _one_line_error(capsys, "solve")


def test_solve_refuses_a_draft(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POSITION | {"phase": "draft"}))
    assert main(["solve", str(path)]) == 2
    _one_line_error(capsys, "solve")


def test_solve_passes_its_budgets_as_keywords(tmp_path, capsys, monkeypatch):
    from trinity_env.search import solver

    seen = {}

    def solve(self, state, **budgets):
        seen.update(budgets)
        raise solver.SolverBudgetError(5, 0.25, budgets.get("max_nodes"), budgets.get("max_seconds"))

    class BudgetError(TrinityError):
        def __init__(self, nodes, seconds, max_nodes=None, max_seconds=None):
            super().__init__(f"not solved within the budget ({nodes} nodes, {seconds} s)")

    monkeypatch.setattr(solver, "SolverBudgetError", getattr(solver, "SolverBudgetError", BudgetError), raising=False)
    monkeypatch.setattr(solver.Solver, "solve", solve)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POSITION))
    assert main(["solve", str(path), "--max-nodes", "5", "--max-seconds", "2.5"]) == 3
    assert seen == {"max_nodes": 5, "max_seconds": 2.5}
    assert "not solved within the budget" in _one_line_error(capsys, "solve")
    assert main(["solve", str(path)]) == 3
    assert seen == {"max_nodes": None, "max_seconds": 60.0}, "defaults: 60 seconds, no node limit"
    capsys.readouterr()


def _budgets_or_skip():
    try:
        from trinity_env.search.solver import SolverBudgetError
    except ImportError:
        pytest.skip("the solver has no budgets yet (trinity_env.search.solver.SolverBudgetError)")
    return SolverBudgetError


def test_solve_stops_at_its_node_budget(tmp_path, capsys):
    _budgets_or_skip()
    path = tmp_path / "open8.json"
    path.write_text(json.dumps(OPEN_8))
    assert main(["solve", str(path), "--max-nodes", "2000"]) == 3
    assert _one_line_error(capsys, "solve").startswith("trinity solve: not solved within the budget (")


def test_solve_stops_at_its_time_budget(tmp_path, capsys):
    _budgets_or_skip()
    path = tmp_path / "open8.json"
    path.write_text(json.dumps(OPEN_8))
    start = time.perf_counter()
    assert main(["solve", str(path), "--max-seconds", "0.5"]) == 3
    assert time.perf_counter() - start < 20
    assert "not solved within the budget" in _one_line_error(capsys, "solve")


def test_ctrl_c_in_solve_is_one_line_and_130(tmp_path, capsys, monkeypatch):
    from trinity_env.search import solver

    def interrupted(self, state, **budgets):
        raise KeyboardInterrupt

    monkeypatch.setattr(solver.Solver, "solve", interrupted)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POSITION))
    assert main(["solve", str(path)]) == 130
    assert capsys.readouterr().err == "trinity solve: interrupted\n"


# ---------------------------------------------------------------------- rules configs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"draft: dealt\nreward: \xff\n", "is not UTF-8 text"),
        (b"- draft\n- random\n", "expected a mapping of fields, got list"),
        (b"just a string\n", "expected a mapping of fields, got str"),
        (b"max_a_cards: 3.0\n", "max_a_cards must be an integer"),
        (b"max_a_cards: true\n", "max_a_cards must be an integer"),
        (b'max_a_cards: "3"\n', "max_a_cards must be an integer"),
        (b"max_a_cards: " + b"9" * 5000 + b"\n", "is not valid YAML"),
        (b"first_player: 1.0\n", "first_player must be"),
        (b"first_player: true\n", "first_player must be"),
        (b"open_hands: 1\n", "open_hands must be true or false"),
        (b"draft: [\n", "is not valid YAML"),
        (b"draft: " + b"[" * 20_000 + b"]" * 20_000 + b"\n", "nested too deeply"),
        (b"deck: !!binary aGVsbG8=\n", "deck must be"),
        (b"deck: [1, 2]\n", "deck"),
        (b"3: random\n", "field names are strings"),
    ],
)
def test_bad_rules_configs_name_the_field_or_file(text, message, tmp_path, capsys, no_games):
    from trinity_env.spec.config import ConfigError, make_config

    path = tmp_path / "rules.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        make_config(str(path))
    assert main(["arena", "--agents", "random", "greedy", "--config", str(path), "--out", str(tmp_path / "o")]) == 2
    assert message in _one_line_error(capsys, "arena")
    assert not (tmp_path / "o").exists(), "a bad config is found before the output folder is made"


def test_a_deck_file_that_is_not_utf8_is_a_config_error(tmp_path):
    from trinity_env.spec.config import ConfigError, make_config

    deck = tmp_path / "deck.yaml"
    deck.write_bytes(b"cards: [\xff]\n")
    with pytest.raises(ConfigError, match=r"deck: .*not UTF-8"):
        make_config(deck=str(deck))
    with pytest.raises(ConfigError, match="first_player"):
        make_config(first_player=1.0)
    assert make_config(first_player=1).first_player == 1


# ---------------------------------------------------------------------- Ctrl-C, for real

_RUN_CLI = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from trinity_env.cli import main; sys.exit(main(sys.argv[1:]))"
)  # the default handler even where the test runner ignores SIGINT (a background job)


def _interrupt_when_playing(argv: list[str], stdout: Path) -> tuple[int, float, str]:
    """Run ``trinity ARGV``, send SIGINT once its progress bar counts a finished game; its status,
    the seconds from SIGINT to exit, and stderr with the progress bar taken out."""
    chunks: list[bytes] = []
    with stdout.open("wb") as printed:
        proc = subprocess.Popen([sys.executable, "-c", _RUN_CLI, *argv], stdout=printed, stderr=subprocess.PIPE)

    def read_err() -> None:
        while chunk := os.read(proc.stderr.fileno(), 65536):
            chunks.append(chunk)

    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    started = time.monotonic()
    with reaped(proc):
        while not re.search(rb"\| *[1-9][0-9]*/[0-9]+ ", b"".join(chunks)):
            assert proc.poll() is None, b"".join(chunks).decode(errors="replace")
            assert time.monotonic() - started < 180, "no game finished in 3 minutes"
            time.sleep(0.05)
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        seconds = time.monotonic() - sent
    reader.join(30)
    proc.stderr.close()
    text = b"".join(chunks).decode(errors="replace")
    # the progress bars, and the warm-up's two lines where loading the compiled engine took a busy machine over a second
    shown = r"(arena|balance): |preparing the .* \(first run only: compiling\)\.\.\.$|ready \(\d+ s; later runs skip"
    lines = [line for line in re.split(r"[\r\n]", text) if line.strip() and not re.match(shown, line)]
    return proc.returncode, seconds, "\n".join(lines)


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.e2e)])  # a pool: make test-e2e
@pytest.mark.parametrize("command", ["arena", "balance"])
def test_ctrl_c_stops_at_once_and_keeps_what_was_played(command, workers, tmp_path):
    out = tmp_path / "out"
    if command == "arena":
        argv = ["arena", "--agents", "random", "greedy", "--json", str(tmp_path / "summary.json")]
    else:
        argv = ["balance", "--agents", "greedy", "--a-limits", "2", "3"]
    stdout = tmp_path / "stdout.txt"
    code, seconds, err = _interrupt_when_playing(
        [*argv, "--games", "1000000", "--workers", workers, "--out", str(out)], stdout
    )
    printed = stdout.read_text()
    assert code == 130, err
    assert seconds < 15, f"took {seconds:.1f} s to stop"
    assert "Traceback" not in err and "leaked" not in err, err
    assert re.fullmatch(rf"trinity {command}: interrupted: partial results of [1-9][0-9]* games written", err), err
    played = int(re.search(r"of (\d+) games", err).group(1))
    assert "Partial results: interrupted after" in printed
    if command == "arena":
        for data in (json.loads((out / "arena.json").read_text()), json.loads((tmp_path / "summary.json").read_text())):
            assert data["partial"] is True and data["games_requested"] == 1_000_000
            assert data["games"][0][1] == data["games"][1][0] == played
        assert "**Partial results: interrupted after" in (out / "arena.md").read_text()
        assert (out / "arena_heatmap.png").read_bytes()[:4] == b"\x89PNG"
    else:
        data = json.loads((out / "balance.json").read_text())
        assert data["partial"] is True and data["games"] == 1_000_000
        assert sum(study["games"] for study in data["studies"].values()) == played
        assert "**Partial results: interrupted after" in (out / "balance.md").read_text()


def test_ctrl_c_stops_a_long_solve(tmp_path):
    _budgets_or_skip()  # Ctrl-C reaches the search with the budgets
    path = tmp_path / "open8.json"
    path.write_text(json.dumps(OPEN_8))
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN_CLI, "solve", str(path), "--max-seconds", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with reaped(proc):
        seen = []  # imported and searching: its progress line, after a second of search (a fixed wait of 3 s
        while not seen or not seen[-1].startswith(b"trinity solve: searching"):  # was still importing at load 11)
            assert proc.poll() is None, b"".join(seen)
            seen.append(proc.stderr.readline())
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and time.monotonic() - sent < 10
    lines = (b"".join(seen) + err).decode().splitlines()
    if lines and lines[0].startswith("preparing the exact solver"):  # loading the cache was slow (a busy machine)
        lines = lines[2:] if len(lines) > 1 and lines[1].startswith("ready (") else lines[1:]
    lines = [line for line in lines if not line.startswith("trinity solve: searching")]  # its progress line
    assert lines == ["trinity solve: interrupted"] and out == b""


@pytest.mark.parametrize("error", [TypeError("list indices must be integers"), KeyError("owner"), IndexError("x")])
@pytest.mark.parametrize("command", ["show", "solve"])
def test_a_loader_gap_is_still_one_line(error, command, tmp_path, capsys, monkeypatch):
    """Should the core let a TypeError (or a KeyError...) out of ``from_dict``, the CLI still answers in one line."""

    def leaky(data):
        raise error

    monkeypatch.setattr(GameState, "from_dict", staticmethod(leaky))
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POSITION))
    assert main([command, str(path)]) == 2
    assert f"is not a valid position: {type(error).__name__}" in _one_line_error(capsys, command)


def test_train_picks_the_rllib_trainer_for_rllib_configs_and_names_the_missing_extra(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # as where the rllib extra is not installed
    assert main(["train", "rllib", "--run", str(tmp_path / "run")]) == 2
    err = _one_line_error(capsys, "train")
    assert "needs the rllib extra (pip install 'trinity-towers[rllib]')" in err
    assert not (tmp_path / "run").exists()

"""Every path a user names goes through one door (``trinity_env.core.paths``): a named pipe, a device, a folder
where a file is wanted (a file where a folder is) and a NUL byte are refused in one line, exit status 2, within
seconds and without reading anything (issue 39: ``--json FIFO`` blocked forever in ``open()``, ``--openings
/dev/zero`` read until memory ran out).

The options come from the parser itself: an option whose type is one of ``trinity_env.arguments``' path types is
walked; any other option that takes a string must be listed in ``NOT_PATHS`` with what it takes instead, so a new
option that takes a path cannot be forgotten.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_parsers import parsers

from trinity_env.cli.common import Renamed
from trinity_env.core import TrinityError, paths
from trinity_env.core.files import read_text

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX only")

NOT_PATHS = {
    ("arena", "--agents"): "agent specs (trinity_env.agents.registry checks the paths among them)",
    ("balance", "--agents"): "agent specs",
    ("play", "--opponent"): "an agent spec",
    ("exploit", "--agent"): "an agent spec",
    ("review", "--agent"): "an agent spec",
    ("puzzles build", "--agent"): "an agent spec",
    ("puzzles score", "--agents"): "agent specs",
    ("accuracy score", "--agents"): "agent specs",
    ("accuracy build", "--agent"): "an agent spec",
    ("dataset build", "--agent"): "an agent spec",
    ("benchmark", "--agent"): "an agent spec",
    ("solve-openings", "--ray"): "a Ray address",
    ("train", "--ray"): "a Ray address",
    ("serve", "--host"): "a network address",
    ("serve", "--agents"): "agent specs",
    ("serve", "--onnx-folder"): "a folder of ONNX files (web.catalogue.onnx_folder checks it)",
}
"""Options that take a string that is not a path, and what it is instead."""

BASE = {
    "review": ["REPLAY"],
    "arena": ["--agents", "random", "greedy"],
    "solve-openings": ["--seeds", "0", "--max-nodes", "9", "--records", "o.jsonl"],
    "exploit": ["--agent", "greedy", "--steps", "1"],
}
"""What each command needs besides the option under test (the option itself is left out)."""


_commands = parsers  # every command and verb


def _string_options() -> list[tuple[str, argparse.Action]]:
    """Every option or positional of every command that takes a string as it is written (no number, no choice)."""
    found = []
    for name, parser in _commands().items():
        for action in parser._actions:
            if action.nargs == 0 or action.choices is not None or isinstance(action, (argparse._HelpAction, Renamed)):
                continue
            if isinstance(action, argparse._SubParsersAction):  # its verbs are walked as commands of their own
                continue
            if action.type is None or getattr(action.type, "path_kind", None):
                found.append((name, action))
    return found


def _key(command: str, action: argparse.Action) -> tuple[str, str]:
    return command, action.option_strings[0] if action.option_strings else action.dest


PATH_OPTIONS = sorted(
    (*_key(command, action), action.type.path_kind)
    for command, action in _string_options()
    if getattr(action.type, "path_kind", None)
)


def test_every_option_that_takes_a_string_is_a_path_or_listed():
    unlisted = [_key(c, a) for c, a in _string_options() if a.type is None and _key(c, a) not in NOT_PATHS]
    assert unlisted == [], "give these a path type from trinity_env.arguments, or list them in NOT_PATHS"
    assert set(NOT_PATHS) <= {_key(c, a) for c, a in _string_options()}, "NOT_PATHS names an option that is gone"
    assert len(PATH_OPTIONS) >= 25  # the options of issue 39's table, at least
    for option in [
        ("arena", "--json"),
        ("solve-openings", "--records"),
        ("puzzles build", "file"),
        ("balance", "--openings"),
    ]:
        assert option in {(c, o) for c, o, _ in PATH_OPTIONS}


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    """The bad paths: a named pipe (no writer, no reader), a device, a folder, a regular file, a NUL byte."""
    root = tmp_path_factory.mktemp("paths")
    fifo = root / "pipe.yaml"
    os.mkfifo(fifo)
    (root / "folder.yaml").mkdir()
    (root / "file").write_text("a file\n")
    return {
        "fifo": str(fifo),
        "device": "/dev/zero",
        "folder": str(root / "folder.yaml"),
        "file": str(root / "file"),
        "nul": str(root / "a\x00b.yaml"),
    }


def _argv(command: str, option: str, value: str) -> list[str]:
    base = list(BASE.get(command, []))
    if option in base:
        at = base.index(option)
        del base[at : at + 2]
    if option.startswith("-"):
        return [*command.split(), *base, option, value]
    positional = [value]
    if command == "review":  # its positional is the option under test: REPLAY stands for it
        base.remove("REPLAY")
    return [*command.split(), *positional, *base]


PEAK = (
    "import atexit, os, runpy, sys\n"
    "def peak():\n"
    "    with open('/proc/self/status') as status, open(os.environ['PEAK_FILE'], 'w') as out:\n"
    "        out.write(next(line.split()[1] for line in status if line.startswith('VmHWM:')))\n"
    "atexit.register(peak)\n"
    "sys.argv[0] = 'trinity'\n"
    "runpy.run_module('trinity_env.cli', run_name='__main__', alter_sys=True)\n"
)
"""``python -m trinity_env.cli`` that writes its own peak resident memory (``VmHWM``, KiB) at exit: the memory of
this process since its ``exec``, not the pages of the (large) test process it was forked from, which a child's
``ru_maxrss`` counts."""


def _run(argv: list[str], cwd: Path) -> tuple[int, str, int]:
    """``trinity ARGV`` in a process of its own: exit status, stderr and peak memory (KiB); killed after 60 s."""
    err_path = cwd / "stderr.txt"
    peak_path = cwd.parent / f"{cwd.name}.peak"
    with open(err_path, "wb") as err:
        child = subprocess.Popen(
            [sys.executable, "-c", PEAK, *argv],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=os.environ | {"PEAK_FILE": str(peak_path)},
        )
        deadline = time.monotonic() + 60
        while True:
            pid, status, _ = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.kill(child.pid, signal.SIGKILL)
                os.wait4(child.pid, 0)
                pytest.fail(f"trinity {' '.join(map(ascii, argv))} was still running after 60 s (blocked or reading)")
            time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    return child.returncode, err_path.read_text(errors="replace"), int(peak_path.read_text())


KINDS = ["fifo", "device", "folder", "nul"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("command", "option", "path_kind"), PATH_OPTIONS)
def test_every_path_option_refuses_pipes_devices_folders_and_nul(
    command, option, path_kind, kind, bad, tmp_path, capsys, monkeypatch
):
    value = bad["file" if kind == "folder" and path_kind == "folder path" else kind]
    argv = _argv(command, option, value)
    if kind == "nul":  # no process can be given a NUL in its arguments: the Python entry point can
        from trinity_env.cli import main

        monkeypatch.chdir(tmp_path)
        status, err = main(argv), capsys.readouterr().err
    else:
        status, err, peak_kib = _run(argv, tmp_path)
        assert peak_kib < 1024 * 1024, f"{peak_kib} KiB: a refused path must not be read"
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, (argv, status, err)
    assert lines[0].startswith(f"trinity {command}: "), lines[0]
    words = {"fifo": "a named pipe", "device": "a device", "folder": "folder", "nul": "NUL"}[kind]
    assert words in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["stderr.txt"]), "nothing created"


# ---------------------------------------------------------------------- the door itself


def test_the_door_never_opens_what_it_refuses(bad, tmp_path):
    for check in (paths.input_file, paths.output_file, paths.record_file):
        for kind, words in (("fifo", "a named pipe"), ("device", "a device"), ("folder", "a folder"), ("nul", "NUL")):
            with pytest.raises(TrinityError, match=words):
                check(bad[kind])  # a pipe with no writer would block here if it were opened
    with pytest.raises(TrinityError, match="it is a file, not a folder"):
        paths.output_folder(bad["file"])
    with pytest.raises(TrinityError, match="cannot write there"):
        paths.output_file(str(Path(bad["file"]) / "below.json"))
    link = tmp_path / "link.json"
    link.symlink_to(bad["file"])
    with pytest.raises(TrinityError, match="symbolic link"):
        paths.output_file(str(link))
    assert paths.record_file(str(link)) == str(link), "a record file is appended to in place, through a link"
    assert paths.input_file("-") == "-" and paths.output_file(str(tmp_path / "new" / "x.json"))
    with pytest.raises(TrinityError, match="a named pipe"):
        paths.open_output(bad["fifo"])  # O_NONBLOCK: no reader, refused at once (ENXIO) or by fstat
    with pytest.raises(TrinityError, match="a device"):
        paths.open_output(bad["device"])


def test_reading_refuses_a_nul_and_unseekable_files(bad):
    with pytest.raises(TrinityError, match=r"cannot read config .*a path cannot hold a NUL character"):
        read_text(bad["nul"], "config")
    if os.path.exists("/proc/self/mem"):  # a regular file to stat, that cannot be sought or read
        handle, kind, _ = paths.open_regular("/proc/self/mem")
        assert handle is None and kind == paths.UNSEEKABLE
        with pytest.raises(TrinityError, match="cannot be sought"):
            read_text("/proc/self/mem")


def test_the_openings_reader_is_bounded(bad):
    """``read_records`` (``trinity balance --openings``, the resumed ``solve-openings --records``) reads through the
    door: /dev/zero was read until memory ran out."""
    from trinity_env.evaluation.openings_file import OpeningsError, read_records

    for kind in ("fifo", "device", "folder"):
        with pytest.raises(OpeningsError, match="cannot read solved-openings file"):
            read_records(bad[kind])


def test_a_training_command_line_refuses_them_too(bad, tmp_path):
    """``python -m training.alphazero`` without ``trinity train``: the config is read through ``core.files`` and the
    run folder is refused by ``training.run_folder``, both in one line, status 2."""
    pytest.importorskip("torch")
    for argv in (
        ["--config", bad["fifo"], "--run", str(tmp_path / "run")],
        ["--config", "az-quick", "--run", bad["device"]],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "training.alphazero", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "named pipe" in lines[0] or "is a file, not a folder" in lines[0] or "device" in lines[0], lines[0]
        assert not (tmp_path / "run").exists()

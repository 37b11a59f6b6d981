"""What every ``trinity`` command uses: one-line errors and exit statuses, reading a position, checking output paths
before any work, writing JSON atomically, and one finisher for a run that Ctrl-C cut short.

The exit statuses, one meaning each (the table in docs/guide.md#exit-statuses): 0 done; 1 (``EXIT_FAILED``) the
work could not be finished or written for a reason outside the input (a file not written: disk full, read-only;
standard output closed; deals failed on a Ray cluster); 2 (``EXIT_BAD_INPUT``) bad input, one line on stderr,
``trinity <command>: <problem>``, before any work; 3 (``EXIT_BUDGET``) a search ran out of its budget
(``trinity solve --max-seconds``): the same call with a larger budget finishes; 130 (``EXIT_INTERRUPTED``) stopped
by Ctrl-C, after writing what was done and saying so in one line; 143 (``EXIT_TERMINATED``) stopped by SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TypeVar

from trinity_env.arguments import UsageError
from trinity_env.core import REPLAY_FORMAT, GameState, PositionError, Replay, TrinityError
from trinity_env.core.errors import ArgumentError
from trinity_env.core.files import read_json
from trinity_env.core.paths import prepare_file, prepare_folder
from trinity_env.core.stops import stop_raised
from trinity_env.core.writes import write_text, writing_folder

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_BUDGET = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
MAX_MESSAGE = 500
"""Characters of an error message shown (a message quoting a huge bad value is cut)."""
T = TypeVar("T")


# ---------------------------------------------------------------------- one-line errors


def printable_line(text: str) -> str:
    """``text`` as one printable line, cut to ``MAX_MESSAGE`` characters."""
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "..."
    text = " ".join(text.splitlines())
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def say(prog: str, message: str) -> None:
    """``prog: message`` on stderr, one line."""
    print(f"{prog}: {printable_line(message)}", file=sys.stderr, flush=True)


def describe_error(err: BaseException) -> str:
    """What went wrong, in words (an ``OSError`` by its reason and file, never its errno tuple)."""
    if isinstance(err, OSError) and err.strerror:
        where = f": {err.filename}" if err.filename is not None else ""
        return f"{err.strerror}{where}"
    if isinstance(err, RecursionError):
        return "input nested too deeply"
    if isinstance(err, MemoryError):
        return "out of memory"
    return str(err) or type(err).__name__


class Renamed(argparse.Action):
    """An option's old spelling: refused while parsing, before any other check, in one line saying what to write
    instead (``--out`` always names a folder, ``--json`` a file); hidden from ``--help``."""

    def __init__(self, option_strings: list[str], dest: str, instead: str, **_: object):
        super().__init__(
            option_strings, dest=argparse.SUPPRESS, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        self.instead = instead

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        raise UsageError(parser.prog, f"{option_string} is now {self.instead}")


# ---------------------------------------------------------------------- reading input


def source(path: str) -> str:
    """How a message names an input: its path, or standard input for ``-``."""
    return "standard input" if path == "-" else path


def read_document(path: str) -> object:
    """A UTF-8 JSON file (a BOM is allowed) or standard input (``-``), parsed."""
    return read_json(path, "file")


def loading(name: str, what: str, load: Callable[[], T]) -> T:
    """``load()``, with anything but a named ``TrinityError`` turned into one line naming the file.

    The core names what is wrong with a document; a ``TypeError`` or ``KeyError`` escaping it is
    a gap in its checks (reported upstream), but never a traceback here.
    """
    try:
        return load()
    except TrinityError:
        raise
    except RecursionError:
        raise PositionError(f"{name}: {what} nested too deeply") from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
        raise PositionError(f"{name} is not a valid {what}: {type(err).__name__}: {err}") from None


def load_position(path: str) -> GameState:
    """The position JSON (docs/rules.md) in ``path`` (``-``: standard input); a replay is refused in one line saying
    what to do with it instead."""
    data = read_document(path)
    if isinstance(data, dict) and data.get("format") == REPLAY_FORMAT:
        raise PositionError(
            f"{source(path)} is a replay, not a position: `trinity review {path}` solves each of its placements, "
            f"`trinity show {path} --all` draws every state"
        )
    return loading(source(path), "position", lambda: GameState.from_dict(data))


def replay_states(name: str, data: object) -> tuple[Replay, list[GameState]]:
    """The replay document ``data`` (read from ``name``) and every state it plays back through; one that is not a
    legal game is refused in one line naming ``name``."""
    replay = loading(name, "replay", lambda: Replay.from_dict(data))
    return replay, loading(name, "replay", replay.states)


def load_replay(path: str) -> Replay:
    """The replay in ``path`` (``-``: standard input), checked to play back before any work; any other document is
    refused in one line."""
    data = read_document(path)
    if not isinstance(data, dict) or data.get("format") != REPLAY_FORMAT:
        raise PositionError(f"{source(path)} is not a replay (a replay's 'format' is {REPLAY_FORMAT!r})")
    return replay_states(source(path), data)[0]


# ---------------------------------------------------------------------- output paths


_HOLDING: list[tuple[ExitStack, set[str]]] = []
"""The output folders the running command holds (``folders_held``), and their real paths."""


@contextmanager
def folders_held() -> Iterator[None]:
    """The output folders that ``check_folder`` takes stay held until the block ends: ``main`` runs each command
    inside one, so a second job writing to the same folder is refused for the whole of the first one's run."""
    with ExitStack() as stack:
        _HOLDING.append((stack, set()))
        try:
            yield
        finally:
            _HOLDING.pop()


def check_folder(option: str, folder: str, names: Sequence[str]) -> None:
    """Create ``folder`` and prove it writable, before any game is played (``core.paths``: never a pipe or device);
    inside ``folders_held`` (every ``trinity`` command), take it for this job: another job writing there is refused
    in one line (``core.writes.writing_folder``), the temporary files of dead writers in it removed."""
    prepare_folder(folder, option, names, ArgumentError)
    if _HOLDING:
        stack, held = _HOLDING[-1]
        real = os.path.realpath(folder)
        if real not in held:  # --out and --replays may name one folder: held once
            stack.enter_context(writing_folder(folder, ArgumentError, option))
            held.add(real)


def check_file(option: str, file: str, record: bool = False) -> None:
    """Prove ``file`` writable (its folder created), before any game is played; an existing file is kept as it is.
    A ``record`` file (appended to) may be a link to a regular file; other outputs are written atomically, never
    through a link."""
    prepare_file(file, option, ArgumentError, link=record)


def write_json(path: str, data: object) -> None:
    """Write a JSON summary atomically (``core.writes``: beside the name, then renamed over it)."""
    write_text(path, json.dumps(data, indent=1) + "\n")


# ---------------------------------------------------------------------- runs that Ctrl-C may cut short


@contextmanager
def stop_on_signals() -> Iterator[list[int]]:
    """Inside the block, Ctrl-C and SIGTERM both raise ``KeyboardInterrupt`` (a shell's background job inherits SIGINT
    ignored, and SIGTERM would otherwise kill a long run without a word, between two records or in one); the list
    holds the signal that stopped it (``exit_status``). The handlers before the block are put back after it."""
    stopped = [signal.SIGINT]

    def stop(signum, frame) -> None:
        stopped[0] = signum
        raise KeyboardInterrupt

    with stop_raised(stop):
        yield stopped


def exit_status(stopped: list[int]) -> int:
    """The exit status of a run ``stop_on_signals`` stopped: 143 for SIGTERM, 130 for Ctrl-C."""
    return EXIT_TERMINATED if stopped[0] == signal.SIGTERM else EXIT_INTERRUPTED


def interruptible(work: Callable[..., T], *args: object, **kwargs: object) -> tuple[T, bool]:
    """``work(*args, **kwargs)`` and ``False``; or, when Ctrl-C stopped it (``RunInterrupted``), the partial result
    it left, to be written like a whole one, and ``True``."""
    from trinity_env.evaluation.match import RunInterrupted

    try:
        return work(*args, **kwargs), False
    except RunInterrupted as stop:
        return stop.partial, True


def finish(command: str, interrupted: bool, written: str, stopped: list[int] | None = None) -> int:
    """The exit status once a run's result is written: 0, or, for a run Ctrl-C cut short, 130 after one line on
    stderr, ``trinity COMMAND: interrupted: WRITTEN`` (what was kept); 143 where ``stopped`` (``stop_on_signals``'s
    list) says SIGTERM stopped it."""
    if not interrupted:
        return EXIT_OK
    say(f"trinity {command}", f"interrupted: {written}")
    return EXIT_INTERRUPTED if stopped is None else exit_status(stopped)


# ---------------------------------------------------------------------- the optional trainers


TRAINERS = "trinity_training"
"""The trainers' import name in the installed wheel: a name no lab's own package has (a checkout's folder is
``training/``, beside the package, which the wheel ships under this name)."""


def trainers():
    """The trainers' package: ``TRAINERS`` where the wheel is installed, else the checkout's ``training/`` beside the
    package (never another package named ``training``, such as a lab's own: that is one line)."""
    import importlib
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2] / "training"
    try:
        try:
            return importlib.import_module(TRAINERS)
        except ModuleNotFoundError as err:
            if err.name != TRAINERS or not (checkout / "__init__.py").is_file():
                raise
        package = importlib.import_module("training")
    except ModuleNotFoundError as err:
        if err.name in (TRAINERS, "training"):
            raise TrinityError("the trainers are not installed: pip install 'trinity-towers[train]'") from None
        raise TrinityError(f"training needs the train extra ('trinity-towers[train]'): {err}") from None
    if Path(package.__file__).resolve().parent != checkout:
        raise TrinityError(f"the package named training at {package.__file__} is not this checkout's trainers")
    return package


# ---------------------------------------------------------------------- agents


ALLOW_CODE_HELP = "allow py:package.module:factory agents (their code is imported and run)"
POLICY_KINDS = (
    "a name (greedy, mcts:400, level:5, az-standard), a checkpoint or run folder by path (./model.pt), "
    "onnx:PATH, state_dict:PATH,trainer=ppo, or py:package.module:factory with --allow-code"
)
"""The kinds of agent spec a command's policy argument takes, for its help (arena, benchmark, exploit, review,
serve: the same words everywhere)."""


def add_allow_code(parser: argparse.ArgumentParser) -> None:
    """``--allow-code``: the one permission a ``py:`` agent spec needs (``AgentSpec.parse(..., allow_code=True)``)."""
    parser.add_argument("--allow-code", action="store_true", help=ALLOW_CODE_HELP)

"""What the trainers' command lines share: a graceful Ctrl-C and one-line errors.

- ``GracefulStop``: the first Ctrl-C (SIGINT), or SIGTERM (what ``kill``, a scheduler or a
  container stop sends), asks the trainer to stop at its next
  consistent point (the end of the current update, or at once during an evaluation, which
  is simply done again on resume); the trainer saves its latest checkpoint there and raises
  ``TrainingInterrupted``. A second Ctrl-C stops at once, without saving (the checkpoint on
  disk is the previous one, whole: checkpoints are written atomically).
- ``run_command``: parses the arguments and runs the trainer (``run_trainer``: what ``trinity train`` calls with
  the config it read once and a ``RunRequest``, no command line rebuilt); a bad config, run folder or
  checkpoint prints one line and exits with status 2, a file that cannot be written (a full
  disk) one line and status 1, an interrupt one line and status 130 (143 after SIGTERM).
  ``--resume`` on a run that already reached its budget says so in one line and exits with
  status 0 (``RunFinished``), nothing evaluated again. ``--total-steps N`` / ``--total-games N``
  (``add_run_arguments``, read by ``command_line_budget``) set the budget over the config's, so
  ``--resume --total-steps N`` extends a finished run without editing its YAML.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from trinity_env.agents.networks.ppo_network import CheckpointError
from trinity_env.arguments import positive_int
from trinity_env.core.errors import ArgumentError, WriteError
from trinity_env.core.files import one_line
from trinity_env.core.stops import stops_handled_by

from .config import BUDGETS, TrainConfigError
from .run_folder import RunFolderError

EXIT_USAGE = 2
"""Exit status for a bad command line, config, run folder or checkpoint (argparse's own)."""
EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it; after SIGTERM, 128 + SIGTERM (143)."""
EXIT_WRITE_FAILED = 1
"""Exit status when a file of the run could not be written (disk full, read-only, I/O error)."""

_stopped_by = [EXIT_INTERRUPTED - 128]
"""The signal that last asked a trainer to stop: its exit status is 128 + that signal."""

_command_line = ContextVar("trinity_training_command_line", default=False)
"""Whether a trainer's command line (``run_command``) runs: there, resuming a finished run ends in ``RunFinished``."""


class RunFinished(Exception):
    """``--resume`` on a run that already reached its budget: nothing to train; the message says how to extend it."""


def finished_runs_stop() -> bool:
    """Whether resuming a finished run ends in ``RunFinished`` (inside ``run_command``) rather than returning its
    history (``train`` called from Python)."""
    return _command_line.get()


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped on Ctrl-C after saving its latest checkpoint; the message says where."""


class GracefulStop:
    """Turns Ctrl-C into a request (``requested``) the training loop honours at a consistent point.

    Inside ``interruptible()`` (an evaluation: nothing to save halfway) Ctrl-C raises
    ``KeyboardInterrupt`` at once. A second Ctrl-C sets ``forced`` and raises wherever it lands.
    Installs itself only in the main thread (signals go there); elsewhere Ctrl-C keeps Python's default.
    """

    def __init__(self) -> None:
        self.requested = False
        self.forced = False
        self._interruptible = False

    def _handle(self, signum, frame) -> None:
        _stopped_by[0] = signum
        if self.requested:
            self.forced = True
            raise KeyboardInterrupt
        self.requested = True
        if self._interruptible:
            raise KeyboardInterrupt

    @contextmanager
    def installed(self) -> Iterator[GracefulStop]:
        with stops_handled_by(self._handle):
            yield self

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False

    @property
    def graceful(self) -> bool:
        """Whether the ``KeyboardInterrupt`` just caught is this stop's first Ctrl-C (save, then stop)."""
        return self.requested and not self.forced


_command_name: ContextVar[str | None] = ContextVar("trinity_training_command_name", default=None)
"""The command a trainer's command line runs as (``trinity train``), when not its own ``python -m training.X``."""


@contextmanager
def command_name(prog: str) -> Iterator[None]:
    """Run a trainer's ``main`` as the command ``prog``: its errors and messages start with ``prog:``."""
    token = _command_name.set(prog)
    try:
        yield
    finally:
        _command_name.reset(token)


@dataclass(frozen=True)
class RunRequest:
    """What a command line asks of a run, typed once: the config's name as given (the report's title), the run
    folder, and whether to continue it (``resume``) or start it again (``overwrite``)."""

    config_name: str
    run: Path
    resume: bool = False
    overwrite: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunRequest:
        """The request of a trainer's own command line (``add_run_arguments``'s options)."""
        return cls(str(args.config), Path(args.run), args.resume, args.overwrite)


def run_command(parser: argparse.ArgumentParser, body: Callable[[argparse.Namespace], None], argv=None) -> None:
    """Parse ``argv`` and run ``body`` (``run_trainer``'s exits and one-line messages), each line starting with the
    command's name (``command_name``'s, else the parser's); a bad argument is argparse's one line and status 2."""
    parser.prog = _command_name.get() or parser.prog
    parser.error = lambda message: parser.exit(EXIT_USAGE, f"{parser.prog}: error: {message}\n")  # one line, no usage
    args = parser.parse_args(argv)
    run_trainer(parser.prog, lambda: body(args))


def run_trainer(prog: str, body: Callable[[], None]) -> None:
    """Run ``body`` (load a config, claim a run folder, train); expected failures end in one line on stderr starting
    with ``prog`` and exit status 2 (bad input), 1 (a file not written) or 128 + the stopping signal (130 after
    Ctrl-C, 143 after SIGTERM)."""
    prog = _command_name.get() or prog
    _stopped_by[0] = EXIT_INTERRUPTED - 128
    token = _command_line.set(True)
    try:
        body()
    except RunFinished as done:
        print(one_line(done), flush=True)
    except TrainingInterrupted as stop:
        print(f"{prog}: interrupted: {one_line(stop)}", file=sys.stderr)
        sys.exit(128 + _stopped_by[0])
    except KeyboardInterrupt:
        print(f"{prog}: interrupted (the checkpoints on disk are the last ones saved)", file=sys.stderr)
        sys.exit(128 + _stopped_by[0])
    except (TrainConfigError, RunFolderError, CheckpointError, ArgumentError) as err:
        _exit(EXIT_USAGE, f"{prog}: error: {one_line(err)}")
    except WriteError as err:
        _exit(EXIT_WRITE_FAILED, f"{prog}: error: {one_line(err)} (the last checkpoint is kept)")
    finally:
        _command_line.reset(token)


def _exit(status: int, line: str) -> None:
    print(line, file=sys.stderr, flush=True)
    sys.exit(status)


def command_line_budget(args: argparse.Namespace) -> dict[str, int]:
    """The budget given on the command line (``--total-steps``/``--total-games``), for ``YAMLConfig.load``'s
    ``budget``: that config refuses a budget field it does not have, naming the option it takes."""
    return {name: getattr(args, name) for name in BUDGETS if getattr(args, name, None) is not None}


def trainer_parser(module: str, doc: str, default_config: str, default_run: str) -> argparse.ArgumentParser:
    """The command line of ``python -m training.MODULE``, described by the first line of ``doc`` (the module's
    docstring), with the run-folder and budget options (``add_run_arguments``, ``--resume`` included)."""
    parser = argparse.ArgumentParser(prog=f"python -m training.{module}", description=doc.splitlines()[0])
    add_run_arguments(parser, default_config=default_config, default_run=default_run, resume=True)
    return parser


def add_run_arguments(parser: argparse.ArgumentParser, default_config: str, default_run: str, resume: bool) -> None:
    """``--config``, ``--run`` and (``resume``) ``--resume``, with ``--overwrite``: the run-folder options; and the
    budget over the config's, ``--total-steps`` or ``--total-games`` (a config without that field refuses it)."""
    parser.add_argument("--config", default=default_config, help="a name in configs/train/ or a YAML path")
    parser.add_argument("--run", default=default_run, help="the run folder (one trainer at a time)")
    for name, what in BUDGETS.items():
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=positive_int,
            default=None,
            metavar="N",
            help=f"{what} to train for, over the config's {name} (with --resume: extend the run to N)",
        )
    choice = parser.add_mutually_exclusive_group()
    if resume:
        choice.add_argument("--resume", action="store_true", help="continue the run in RUN (same config.json)")
    choice.add_argument("--overwrite", action="store_true", help="delete the run in RUN and start again")

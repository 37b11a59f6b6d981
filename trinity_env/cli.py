"""The ``trinity`` command line.

``trinity show FILE`` draws a position (RULES §6 JSON) or a replay (its final position, or
every state with ``--all``); ``-`` reads standard input. Bad input is reported in one line
on stderr with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from trinity_env.core import REPLAY_FORMAT, GameState, Replay, TrinityError


def _read_json(path: str) -> object:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise TrinityError(f"cannot read {path}: {err.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise TrinityError(f"{path} is not valid JSON: {err}") from None


def _show(args: argparse.Namespace) -> None:
    data = _read_json(args.file)
    if isinstance(data, dict) and data.get("format") == REPLAY_FORMAT:
        states = Replay.from_dict(data).states()
        shown = states if args.all else states[-1:]
        for number, state in enumerate(shown):
            if args.all:
                print(f"--- state {number}")
            print(state if state.phase != "draft" else repr(state))
        return
    print(GameState.from_dict(data))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trinity", description="Trinity Towers: rules, positions and replays.")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="draw a position or a replay as a text board")
    show.add_argument("file", help="a position or replay JSON file, or - for standard input")
    show.add_argument("--all", action="store_true", help="for a replay: draw every state, not just the last")
    show.set_defaults(run=_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except TrinityError as err:
        print(f"trinity {args.command}: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

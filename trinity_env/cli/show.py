"""``trinity show FILE``: draw a position (the position JSON of docs/rules.md) or a replay (its final position, or
every state with ``--all``) as a text board, a replay's agents first when it names them; ``-`` reads standard
input."""

from __future__ import annotations

import argparse

from trinity_env.arguments import input_path
from trinity_env.cli.common import loading, read_document, replay_states, source
from trinity_env.core import REPLAY_FORMAT, GameState, Phase


def add(commands: argparse._SubParsersAction) -> None:
    show = commands.add_parser("show", help="draw a position or a replay as a text board")
    show.add_argument("file", type=input_path, help="a position or replay JSON file, or - for standard input")
    show.add_argument("--all", action="store_true", help="for a replay: draw every state, not just the last")
    show.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    data = read_document(args.file)
    if isinstance(data, dict) and data.get("format") == REPLAY_FORMAT:
        replay, states = replay_states(source(args.file), data)
        if replay.agents is not None:
            print(f"player 0 (w): {replay.agents[0]}; player 1 (b): {replay.agents[1]}")
        shown = states if args.all else states[-1:]
        for number, state in enumerate(shown):
            if args.all:
                print(f"--- state {number}")
            print(state if state.phase != Phase.DRAFT else repr(state))
        return
    print(loading(source(args.file), "position", lambda: str(GameState.from_dict(data))))

"""``trinity serve``: play, watch and replay games in the browser (a local web app)."""

from __future__ import annotations

import argparse

from trinity_env.arguments import positive_int, whole_number
from trinity_env.cli.common import POLICY_KINDS, add_allow_code
from trinity_env.core import TrinityError


def add(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="play, watch and replay games in the browser (a local web app)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    serve.add_argument("--port", type=whole_number(1, 65535), default=8000, help="port (default 8000)")
    serve.add_argument(
        "--max-games",
        type=positive_int,
        default=200,
        help="games kept at once, all browsers together (200); each browser keeps at most 20, and past this cap "
        "the least recently used browser loses its oldest game",
    )
    serve.add_argument(
        "--agents",
        nargs="+",
        default=[],
        metavar="SPEC",
        help=f"also offer these agents, each {POLICY_KINDS}; a browser names only agents on the list",
    )
    serve.add_argument("--onnx-folder", default=None, metavar="DIR", help="also offer every *.onnx model in DIR")
    add_allow_code(serve)
    serve.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    from trinity_env.agents.spec import AgentSpec

    agents = [AgentSpec.parse(text, allow_code=args.allow_code) for text in args.agents]
    try:
        from trinity_env.web.app import serve
        from trinity_env.web.catalogue import onnx_folder
    except ImportError as err:
        raise TrinityError(f"the web app needs the web extra: pip install 'trinity-towers[web]' ({err})") from None
    if args.onnx_folder is not None:
        agents += onnx_folder(args.onnx_folder)
    serve(args.host, args.port, max_games=args.max_games, agents=agents)

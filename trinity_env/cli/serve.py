"""``trinity serve``: play, watch and replay games in the browser (a local web app)."""

from __future__ import annotations

import argparse

from trinity_env.arguments import whole_number
from trinity_env.cli.common import POLICY_KINDS, add_allow_code
from trinity_env.core import TrinityError
from trinity_env.core.limits import MAX_SERVER_GAMES


def add(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="play, watch and replay games in the browser (a local web app)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    serve.add_argument("--port", type=whole_number(1, 65535), default=8000, help="port (default 8000)")
    serve.add_argument(
        "--max-games",
        type=whole_number(1, MAX_SERVER_GAMES),
        default=200,  # web.store.DEFAULT_MAX_GAMES (not imported here: it loads the engine)
        help=f"games kept at once, all browsers together (200; at most {MAX_SERVER_GAMES:,}); each browser keeps at "
        "most 20 (past that its own least recently used game goes); when all are kept, a new game takes the place "
        "of one nobody has used for 30 minutes, or is refused (503, retry later): no game in use is pushed out",
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

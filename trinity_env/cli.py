"""The ``trinity`` command line.

``trinity show FILE`` draws a position (the position JSON of docs/rules.md) or a replay (its
final position, or every state with ``--all``); ``trinity solve FILE`` prints the exact
result of an open-hand position as JSON; ``trinity arena`` plays a round robin; ``trinity
balance`` runs the balance lab; ``trinity play`` lets a person play an agent in the
terminal and ``trinity serve`` in the browser; ``trinity review`` annotates a replay with
the solver; ``trinity puzzles`` builds and scores puzzles; ``trinity accuracy`` scores agents against
perfect play; ``trinity solve-openings`` solves dealt games from their first placement (one
process, a pool or a Ray cluster) and summarises the first mover's share; ``trinity train`` trains an agent
from a config; ``trinity exploit`` trains a best response to an agent and reports its win
rate. ``-`` reads standard input.

Bad input — a usage error, a file that cannot be read or is not UTF-8 JSON, a bad position,
agent spec, rules config or output path — is reported in one line on stderr,
``trinity <command>: <problem>``, with exit status 2, never as a traceback, and before any
work starts. Ctrl-C stops a long run within moments: ``arena`` and ``balance`` write what
was played (marked partial), ``solve-openings`` keeps every deal finished (its file is
appended to as each one finishes), and the command says so in one line and exits with 130.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from trinity_env.arguments import (
    OneLineParser,
    UsageError,
    config_path,
    empty_range,
    folder_path,
    input_file_path,
    input_path,
    non_negative_int,
    output_path,
    positive_int,
    process_count,
    record_path,
    whole_number,
)
from trinity_env.core import REPLAY_FORMAT, ArgumentError, GameState, Phase, PositionError, Replay, TrinityError
from trinity_env.core.errors import BudgetExhausted
from trinity_env.core.files import read_json, read_text
from trinity_env.core.limits import check_count, check_memory
from trinity_env.core.paths import prepare_file, prepare_folder
from trinity_env.core.writes import write_text
from trinity_env.prepare import families_for, prepare, warm

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
MAX_MESSAGE = 500
"""Characters of an error message shown (a message quoting a huge bad value is cut)."""
_DECIMAL = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", re.ASCII)
T = TypeVar("T")


# ---------------------------------------------------------------------- one-line errors


def _one_line(text: str) -> str:
    """``text`` as one printable line, cut to ``MAX_MESSAGE`` characters."""
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "..."
    text = " ".join(text.splitlines())
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _say(prog: str, message: str) -> None:
    print(f"{prog}: {_one_line(message)}", file=sys.stderr, flush=True)


def _describe(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        where = f": {err.filename}" if err.filename is not None else ""
        return f"{err.strerror}{where}"
    if isinstance(err, RecursionError):
        return "input nested too deeply"
    if isinstance(err, MemoryError):
        return "out of memory"
    return str(err) or type(err).__name__


# ---------------------------------------------------------------------- strict argument types


a_limit = whole_number(0, 8)


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (``60``, ``0.5``, ``1e3``)."""
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def seed_range(text: str) -> range:
    """An argparse type: dealt games' seeds, one (``7``) or an inclusive range (``0-999``), whole numbers >= 0."""
    low, dash, high = text.partition("-")
    parse = whole_number(0)
    try:
        seeds = range(parse(low), parse(high) + 1) if dash else range(parse(low), parse(low) + 1)
    except argparse.ArgumentTypeError:
        seeds = range(0)
    if not seeds:
        raise argparse.ArgumentTypeError(f"expected a seed N or a range LOW-HIGH of whole numbers, got {text!r}")
    return seeds


# ---------------------------------------------------------------------- reading input


def _source(path: str) -> str:
    return "standard input" if path == "-" else path


def _read_text(path: str) -> str:
    """A UTF-8 file (a BOM is allowed) or standard input, as text."""
    return read_text(path, "file")


def _read_json(path: str) -> object:
    return read_json(path, "file")


def _loading(name: str, what: str, load: Callable[[], T]) -> T:
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


def _load_position(path: str) -> GameState:
    data = _read_json(path)
    return _loading(_source(path), "position", lambda: GameState.from_dict(data))


# ---------------------------------------------------------------------- output paths


def _prepare_folder(option: str, folder: str, names: Sequence[str]) -> None:
    """Create ``folder`` and prove it writable, before any game is played (``core.paths``: never a pipe or device)."""
    prepare_folder(folder, option, names, ArgumentError)


def _prepare_file(option: str, file: str, record: bool = False) -> None:
    """Prove ``file`` writable (its folder created), before any game is played; an existing file is kept as it is.
    A ``record`` file (appended to) may be a link to a regular file; other outputs are written atomically, never
    through a link."""
    prepare_file(file, option, ArgumentError, link=record)


def _write_json(path: str, data: object) -> None:
    """Write a JSON summary atomically (``core.writes``: beside the name, then renamed over it)."""
    write_text(path, json.dumps(data, indent=1) + "\n")


# ---------------------------------------------------------------------- commands


def _show(args: argparse.Namespace) -> None:
    data = _read_json(args.file)
    if isinstance(data, dict) and data.get("format") == REPLAY_FORMAT:
        states = _loading(_source(args.file), "replay", lambda: Replay.from_dict(data).states())
        shown = states if args.all else states[-1:]
        for number, state in enumerate(shown):
            if args.all:
                print(f"--- state {number}")
            print(state if state.phase != Phase.DRAFT else repr(state))
        return
    print(_loading(_source(args.file), "position", lambda: str(GameState.from_dict(data))))


def _prepare(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    prepare(jobs=args.jobs)
    print(f"ready: the engine is compiled ({time.perf_counter() - start:.1f} s)")


def _solve(args: argparse.Namespace) -> None:
    from trinity_env.search.solver import Solver

    state = _load_position(args.file)
    if state.phase == Phase.DRAFT:
        raise PositionError("no move to solve: the position is in the draft (the solver needs both hands)")
    if state.is_over or not state.legal_actions():
        raise PositionError("no move to solve: the game is over")
    solver = Solver(threads=args.threads)
    warm(["exact solver"])
    print(json.dumps(solver.solve(state, max_nodes=args.max_nodes, max_seconds=args.max_seconds).to_json()))


def _arena(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.arena import OUTPUT_FILES, check_arena, round_robin
    from trinity_env.evaluation.match import RunInterrupted
    from trinity_env.spec.config import make_config

    check_arena(args.agents, args.games, args.workers)
    config = make_config(args.config).to_dict() if args.config else None
    _prepare_folder("--out", args.out, OUTPUT_FILES)
    if args.json:
        _prepare_file("--json", args.json)
    if args.replays:
        _prepare_folder("--replays", args.replays, ())
    warm(families_for(args.agents))
    try:
        result = round_robin(
            args.agents, args.games, seed=args.seed, config=config, workers=args.workers, progress=not args.quiet,
            replays=args.replays,
        )  # fmt: skip
    except RunInterrupted as stop:
        result = stop.partial  # written like a whole result, marked partial
    print(result.table())
    for path in result.write(args.out):
        print(f"wrote {path}")
    if args.replays:
        print(f"wrote {int(result.games.sum() // 2)} replays in {args.replays} (trinity review FILE)")
    if args.json:
        _write_json(args.json, result.to_json())
        print(f"wrote {args.json}")
    if result.partial:
        played = int(result.games.sum() // 2)
        _say("trinity arena", f"interrupted: partial results of {played} games written")
        return EXIT_INTERRUPTED
    return 0


def _balance(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.balance import DEFAULT_AGENTS, OUTPUT_FILES, check_balance, run_balance
    from trinity_env.evaluation.match import RunInterrupted

    agents = args.agents or DEFAULT_AGENTS
    check_balance(agents, args.games, tuple(args.a_limits), args.workers)
    solved = None
    if args.openings:
        from trinity_env.evaluation.openings import file_summary

        solved = file_summary(args.openings)  # a file that is not one is refused before any game
    _prepare_folder("--out", args.out, OUTPUT_FILES)
    try:
        report = run_balance(
            agents, args.games, seed=args.seed, a_limits=tuple(args.a_limits), workers=args.workers,
            progress=not args.quiet, openings=solved,
        )  # fmt: skip
    except RunInterrupted as stop:
        report = stop.partial  # written like a whole report, marked partial
    print(report.table())
    print()
    print(report.card_table())
    for path in report.write(args.out):
        print(f"wrote {path}")
    if report.partial:
        played = sum(s["games"] for s in report.studies.values())
        _say("trinity balance", f"interrupted: partial results of {played} games written")
        return EXIT_INTERRUPTED
    return 0


def _solve_openings(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from trinity_env.evaluation import openings
    from trinity_env.evaluation.match import RunInterrupted
    from trinity_env.search.solver import TABLE_SLOT_BYTES

    seeds = args.seeds
    threads = args.threads or 1
    openings.check_openings(seeds, args.budget_nodes, threads, args.table_bits, args.classify_nodes)
    if args.ray is not None:
        openings.check_ray_address(args.ray)
        if args.threads is not None and args.ray != "local":
            raise ArgumentError("--threads: a cluster's own CPUs decide how many deals run at once (--ray local only)")
    if args.ray in (None, "local"):  # each deal running here holds its own solver table
        running = min(threads if args.ray is None else args.threads or 1, len(seeds))
        table = TABLE_SLOT_BYTES << args.table_bits
        check_memory({f"--threads {running} with --table-bits {args.table_bits} ({running} solver tables of "
                      f"{table:,} bytes)": running * table}, ArgumentError)  # fmt: skip
    _prepare_file("--out", args.out, record=True)
    if os.path.exists(args.out):
        openings.read_records(args.out)  # a file that is not one is refused before any work
    if args.summary:
        _prepare_file("--summary", args.summary)
    cluster = nullcontext(None)
    if args.ray is not None:
        cluster = openings.ray_cluster(args.ray, args.threads if args.ray == "local" else None)
    with cluster as connected:  # connecting checks the address: one line, before any deal
        warm(["exact solver"])
        try:
            run = openings.solve_openings(
                seeds, args.budget_nodes, args.out, threads=threads, table_bits=args.table_bits,
                classify_nodes=args.classify_nodes, cluster=connected, progress=not args.quiet,
            )  # fmt: skip
        except RunInterrupted as stop:
            run = stop.partial
    summary = run.summary()
    shown = f"{seeds.start}-{seeds.stop - 1}" if len(seeds) > 1 else str(seeds.start)
    print(f"seeds {shown}: {len(run.new)} deals recorded now, {run.skipped} already in {args.out}"
          + (f" ({run.retried} unsolved ones tried again with the larger budget)" if run.retried else ""))  # fmt: skip
    if run.cut:
        print(f"{args.out}: its last line, cut short when a run was killed, was dropped")
    print(openings.summary_text(summary, args.out))
    if args.summary:
        _write_json(args.summary, summary | {"file": args.out})
        print(f"wrote {args.summary}")
    if run.partial:
        _say("trinity solve-openings", f"interrupted: {len(run.new)} deals recorded in {args.out}; run again to go on")
        return EXIT_INTERRUPTED
    if run.failed:
        seeds_failed = " ".join(str(seed) for seed, _ in run.failed)
        _say("trinity solve-openings", f"{len(run.failed)} deals failed on the cluster and were not recorded "
             f"(run again to retry them): seeds {seeds_failed}; first: {run.failed[0][1]}")  # fmt: skip
        return 1
    return 0


def _play(args: argparse.Namespace) -> None:
    from trinity_env.play import play_in_terminal

    play_in_terminal(args.opponent, seat=args.seat, seed=args.seed, config=args.config, save=args.save)


def _trainers():
    """The trainers' package, ``training``: one import name in a checkout and in an installed wheel."""
    import importlib

    try:
        return importlib.import_module("training")
    except ModuleNotFoundError as err:
        if err.name == "training":
            raise TrinityError("the trainers are not installed: pip install 'trinity-towers[train]'") from None
        raise TrinityError(f"training needs the train extra ('trinity-towers[train]'): {err}") from None


def _train(args: argparse.Namespace) -> None:
    import importlib

    package = _trainers()
    name = Path(args.config).stem if args.config.endswith((".yaml", ".yml")) else args.config
    trainer = args.trainer or ("alphazero" if name.startswith("az") else "rllib" if name.startswith("rllib") else "ppo")
    modules = {"alphazero": "alphazero", "rllib": "rllib_selfplay", "ppo": "fast_ppo"}
    budgets = {"ppo": "--total-steps", "alphazero": "--total-games"}  # rllib's is its config's iterations
    for option, value in (("--total-steps", args.total_steps), ("--total-games", args.total_games)):
        if value is not None and budgets.get(trainer) != option:
            takes = f"; its budget is {budgets[trainer]} N" if trainer in budgets else ""
            raise ArgumentError(f"{option} does not apply to the {trainer} trainer{takes}")
    on_ray = args.ray is not None or args.actors is not None
    if on_ray and trainer != "alphazero":
        raise ArgumentError(f"--ray and --actors are for the alphazero trainer (the {trainer} trainer: docs/rllib.md)")
    if on_ray:
        modules["alphazero"] = "alphazero_ray"
        if args.actors is not None and args.ray in (None, "local"):  # a local cluster: each actor a process here
            check_count("--actors", args.actors, ArgumentError)
    extra = "rllib" if trainer == "rllib" or on_ray else "train"
    try:
        module = importlib.import_module(f"{package.__name__}.{modules[trainer]}")
        if trainer == "rllib" or on_ray:
            importlib.import_module("ray.rllib" if trainer == "rllib" else "ray")
    except ModuleNotFoundError as err:
        raise TrinityError(f"training needs the {extra} extra (pip install 'trinity-towers[{extra}]'): {err}") from None
    argv = ["--config", args.config, "--run", args.run_folder or f"runs/{name}"]
    argv += ["--resume"] * args.resume + ["--overwrite"] * args.overwrite
    for option, value in (("--total-steps", args.total_steps), ("--total-games", args.total_games)):
        argv += [option, str(value)] if value is not None else []
    if on_ray:
        argv += ["--ray", args.ray or "local", "--actors", str(args.actors or 1)]
    module.main(argv)


def _exploit(args: argparse.Namespace) -> int:
    import importlib

    from trinity_env.evaluation.match import RunInterrupted

    package = _trainers()
    try:
        module = importlib.import_module(f"{package.__name__}.exploit")
    except ModuleNotFoundError as err:
        raise TrinityError(f"exploit needs the train extra (pip install 'trinity-towers[train]'): {err}") from None
    module.check_exploit(args.agent, args.steps, args.games)
    if args.json:
        _prepare_file("--json", args.json)
    try:
        result = module.exploit(args.agent, args.steps, seed=args.seed, games=args.games, progress=not args.quiet)
    except RunInterrupted as stop:
        result = stop.partial  # written like a whole result, marked partial
    print(result.summary())
    if args.json:
        _write_json(args.json, result.to_json())
        print(f"wrote {args.json}")
    if result.partial:
        _say("trinity exploit", f"interrupted: partial result ({result.steps:,} steps, {result.games} games) written")
        return EXIT_INTERRUPTED
    return 0


def _review(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.match import RunInterrupted
    from trinity_env.evaluation.review import check_review, review_replay

    data = _read_json(args.file)
    name = _source(args.file)
    if not isinstance(data, dict) or data.get("format") != REPLAY_FORMAT:
        raise PositionError(f"{name} is not a replay (a replay's 'format' is {REPLAY_FORMAT!r})")
    replay = _loading(name, "replay", lambda: Replay.from_dict(data))
    _loading(name, "replay", replay.states)  # a replay that does not play back is refused before any work
    check_review(args.agent, args.max_nodes)
    for option, path in (("--json", args.json), ("--png", args.png)):
        if path:
            _prepare_file(option, path)
    warm(["exact solver", *families_for([args.agent])])
    try:
        review = review_replay(
            replay, max_nodes=args.max_nodes, agent=args.agent, seed=args.seed, progress=not args.quiet, source=name
        )
    except RunInterrupted as stop:
        review = stop.partial  # written like a whole review, marked partial
    print(review.text())
    if args.json:
        review.write_json(args.json)
        print(f"wrote {args.json}")
    if args.png:
        review.plot(args.png)
        print(f"wrote {args.png}")
    if review.partial:
        done = sum(e is not None for e in review.evaluations[:-1])
        _say("trinity review", f"interrupted: partial review ({done} of {len(review.placements)} positions) written")
        return EXIT_INTERRUPTED
    return 0


def _refuse_given(options: dict[str, object], why: str) -> None:
    """One line naming every option given (not ``None``) that this mode of a command does not take."""
    given = [option for option, value in options.items() if value is not None]
    if given:
        raise ArgumentError(f"{', '.join(given)}: {why}")


def _puzzles(args: argparse.Namespace) -> int:
    return _build_puzzles(args) if args.out else _score_puzzles(args)


def _build_puzzles(args: argparse.Namespace) -> int:
    from trinity_env.evaluation.match import RunInterrupted
    from trinity_env.evaluation.puzzles import DEFAULT_AGENT, DEFAULT_EMPTY, DEFAULT_MAX_NODES, build_file, check_build

    if args.agents is not None or args.json is not None:
        raise ArgumentError("--agents and --json are for scoring (--score FILE), not for building (--out)")
    count = args.count or 200
    empty = args.empty or DEFAULT_EMPTY
    agent = args.agent or DEFAULT_AGENT
    max_nodes = args.max_nodes or DEFAULT_MAX_NODES
    check_build(count, empty, agent, max_nodes)
    _prepare_file("--out", args.out)
    try:  # written beside --out (never a pipe or device), moved over it when complete: Ctrl-C leaves the old one whole
        report = build_file(args.out, count, empty=empty, agent=agent, seed=args.seed, max_nodes=max_nodes,
                            max_games=args.max_games, progress=not args.quiet)  # fmt: skip
    except RunInterrupted as stop:
        report = stop.partial
    print(f"{report.summary()}; wrote {report.file}")
    if report.partial:
        kept = f" ({args.out} is left as it was)" if report.kept else ""
        _say("trinity puzzles", f"interrupted: {len(report.puzzles)} puzzles written to {report.file}{kept}")
        return EXIT_INTERRUPTED
    if len(report.puzzles) < count:
        print(f"found {len(report.puzzles)} of {count} puzzles within {report.games} games (--max-games)")
    return 0


def _score_puzzles(args: argparse.Namespace) -> int:
    from trinity_env.agents.registry import make
    from trinity_env.evaluation.match import RunInterrupted
    from trinity_env.evaluation.puzzles import describe, describe_line, load_puzzles, score_agents, score_table

    building = {"--count": args.count, "--empty": args.empty, "--agent": args.agent, "--max-nodes": args.max_nodes,
                "--max-games": args.max_games}  # fmt: skip
    _refuse_given(building, "only for building puzzles (--out FILE), not for --score")
    if not args.agents:
        raise ArgumentError("--score needs --agents: the agent specs to score, e.g. --agents random greedy mcts:400")
    for spec in args.agents:
        make(spec)
    puzzles = load_puzzles(args.score)
    if args.json:
        _prepare_file("--json", args.json)
    try:
        scores = score_agents(args.agents, puzzles, seed=args.seed)
        partial = False
    except RunInterrupted as stop:
        scores, partial = stop.partial, True
    print(f"{len(puzzles)} puzzles from {_source(args.score)}: {describe_line(puzzles)}")
    print("share of puzzles whose winning move the agent plays:")
    print(score_table(scores))
    if args.json:
        summary = {"puzzles": _source(args.score), "count": len(puzzles), "set": describe(puzzles),
                   "partial": partial, "scores": [s.to_json() for s in scores]}  # fmt: skip
        _write_json(args.json, summary)
        print(f"wrote {args.json}")
    if partial:
        _say("trinity puzzles", f"interrupted: scores of {len(scores)} of {len(args.agents)} agents written")
        return EXIT_INTERRUPTED
    return 0


def _accuracy(args: argparse.Namespace) -> int:
    return _build_accuracy(args) if args.build else _score_accuracy(args)


def _build_accuracy(args: argparse.Namespace) -> int:
    from trinity_env.evaluation import accuracy
    from trinity_env.evaluation.match import RunInterrupted

    scoring = {"agents": args.agents or None, "--set": args.set, "--json": args.json, "--png": args.png,
               "--limit": args.limit}  # fmt: skip
    _refuse_given(scoring, "for scoring, not for building a set (--build FILE)")
    per_count = args.per_count or accuracy.DEFAULT_PER_COUNT
    empty = args.empty or accuracy.DEFAULT_EMPTY
    agent = args.agent or accuracy.DEFAULT_AGENT
    max_nodes = args.max_nodes or accuracy.DEFAULT_MAX_NODES
    accuracy.check_build(per_count, empty, agent, max_nodes, args.seed)
    if not os.path.exists(args.build):
        _prepare_file("--build", args.build, record=True)
    try:
        progress = accuracy.build_set(args.build, per_count=per_count, empty=empty, agent=agent, seed=args.seed,
                                      max_nodes=max_nodes, progress=not args.quiet)  # fmt: skip
    except RunInterrupted as stop:
        _say("trinity accuracy", f"interrupted: {stop.partial.summary()} in {args.build}; run again to go on")
        return EXIT_INTERRUPTED
    print(f"{progress.summary()}; wrote {args.build}")
    return 0


def _score_accuracy(args: argparse.Namespace) -> int:
    from trinity_env.agents.registry import make
    from trinity_env.evaluation import accuracy
    from trinity_env.evaluation.match import RunInterrupted

    building = {"--per-count": args.per_count, "--agent": args.agent, "--max-nodes": args.max_nodes}
    _refuse_given(building, "only for building a set (--build FILE), not for scoring")
    if not args.agents:
        raise ArgumentError("give agents to score, or --build FILE: e.g. trinity accuracy greedy mcts:400")
    for spec in args.agents:
        make(spec)
    source = args.set or str(accuracy.DEFAULT_SET)
    positions = accuracy.load_set(source)
    if args.empty:
        positions = [p for p in positions if args.empty[0] <= p.empty <= args.empty[1]]
    if args.limit:
        positions = accuracy.first_per_count(positions, args.limit)
    if not positions:
        raise PositionError(f"{_source(source)}: no positions with {args.empty[0]}-{args.empty[1]} empty tiles")
    for option, path in (("--json", args.json), ("--png", args.png)):
        if path:
            _prepare_file(option, path)
    try:
        results, partial = accuracy.score_agents(args.agents, positions, seed=args.seed, progress=not args.quiet), False
    except RunInterrupted as stop:
        results, partial = stop.partial, True
    expected = accuracy.random_expectation(positions)
    print(f"{len(positions)} positions from {_source(source)}: share of moves that keep the exact value "
          "(over positions the mover does not lose) [95% interval]")  # fmt: skip
    print(accuracy.table(results, expected))
    heads = accuracy.network_table(results)
    if heads:
        print("\nnetworks' heads against the exact value (value sign over positions not drawn):")
        print(heads)
    if args.json:
        summary = accuracy.summary(results, _source(source), positions, partial)
        _write_json(args.json, summary)
        print(f"wrote {args.json}")
    if args.png and results:
        accuracy.plot(results, args.png, expected)
        print(f"wrote {args.png}")
    if partial:
        _say("trinity accuracy", f"interrupted: accuracy of {len(results)} of {len(args.agents)} agents written")
        return EXIT_INTERRUPTED
    return 0


def _serve(args: argparse.Namespace) -> None:
    try:
        from trinity_env.web.app import serve
    except ImportError as err:
        raise TrinityError(f"the web app needs the web extra: pip install 'trinity-towers[web]' ({err})") from None
    serve(args.host, args.port, max_games=args.max_games)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="trinity", description="Trinity Towers: rules, positions and replays.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    show = commands.add_parser("show", help="draw a position or a replay as a text board")
    show.add_argument("file", type=input_path, help="a position or replay JSON file, or - for standard input")
    show.add_argument("--all", action="store_true", help="for a replay: draw every state, not just the last")
    show.set_defaults(run=_show)

    solve = commands.add_parser("solve", help="solve an open-hand position exactly; prints JSON")
    solve.add_argument(
        "file", type=input_path, help="a position JSON file (the position format of docs/rules.md), or - for stdin"
    )
    solve.add_argument(
        "--max-seconds", type=positive_seconds, default=60.0, help="give up after this many seconds (default 60)"
    )
    solve.add_argument(
        "--max-nodes", type=positive_int, default=None,
        help="give up after this many nodes (default: no limit; searches with one thread, the same on any machine)",
    )  # fmt: skip
    solve.add_argument("--threads", type=process_count, default=2, help="search threads sharing the table (default 2)")
    solve.set_defaults(run=_solve)

    arena = commands.add_parser("arena", help="round robin between agents, seats swapped, with ratings")
    arena.add_argument(
        "--agents",
        nargs="+",
        required=True,
        help="two or more agent specs, e.g. random greedy mcts:400 (a checkpoint or run folder by path: ./model.pt)",
    )
    arena.add_argument("--games", type=positive_int, default=100, help="games per pair (default 100)")
    arena.add_argument("--seed", type=non_negative_int, default=0)
    arena.add_argument(
        "--workers", type=process_count, default=None, help="processes (default: all cores; at most one per task)"
    )
    arena.add_argument(
        "--config",
        type=config_path("rules"),
        default=None,
        help="a rules config (name in configs/rules/ or YAML path); default: dealt hands",
    )
    arena.add_argument(
        "--out", type=folder_path, default="arena", help="folder for the CSV, markdown, JSON and heatmap"
    )
    arena.add_argument("--json", type=output_path, default=None, help="also write the JSON summary to this path")
    arena.add_argument(
        "--replays", type=folder_path, default=None, help="also write every game as a replay in this folder"
    )
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.set_defaults(run=_arena)

    balance = commands.add_parser(
        "balance", help="self-play studies of the game's balance: first mover, cards, A limit, endings, domino"
    )
    balance.add_argument("--games", type=positive_int, default=200, help="games per study (default 200)")
    balance.add_argument(
        "--agents", nargs="+", default=None, help="agent specs, each in self-play (default: mcts:200,draft=search "
        "and ppo-standard:sample=draft); the A-limit studies use the first",
    )  # fmt: skip
    balance.add_argument(
        "--a-limits", type=a_limit, nargs="+", default=[2, 3, 4], help="max_a_cards values to compare (0-8)"
    )
    balance.add_argument("--seed", type=non_negative_int, default=0)
    balance.add_argument(
        "--workers", type=process_count, default=None, help="processes (default: all cores; at most one per task)"
    )
    balance.add_argument("--out", type=folder_path, default="balance", help="folder for balance.json and the plots")
    balance.add_argument("--quiet", action="store_true", help="no progress bar")
    balance.add_argument(
        "--openings", type=input_file_path, default=None, metavar="FILE",
        help="also report the first mover under perfect play from this solved-openings file (trinity solve-openings)",
    )  # fmt: skip
    balance.set_defaults(run=_balance)

    openings = commands.add_parser(
        "solve-openings",
        help="solve dealt games from their first placement exactly (JSON lines, resumable), and summarise them",
    )
    openings.add_argument(
        "--seeds", type=seed_range, required=True, help="the dealt games: a seed N or an inclusive range, e.g. 0-999"
    )
    openings.add_argument(
        "--budget-nodes", type=positive_int, required=True, metavar="N",
        help="solver nodes per deal; a deal past it is recorded as unsolved with the nodes spent",
    )  # fmt: skip
    openings.add_argument(
        "--classify-nodes", type=whole_number(0), default=0, metavar="N",
        help="more nodes per solved deal to find every first placement that keeps its value (default 0: "
        "record the one the search found; classifying costs many times the value)",
    )  # fmt: skip
    openings.add_argument(
        "--out", type=record_path, required=True, help="the JSON-lines file of records (appended to; a rerun resumes)"
    )
    openings.add_argument(
        "--threads", type=process_count, default=None,
        help="deals solved at once, a process each (default 1); with --ray local, the local cluster's CPUs",
    )  # fmt: skip
    openings.add_argument(
        "--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
        help="run each deal as a Ray task: local (alone: a cluster started here), auto, HOST:PORT or "
        "ray://HOST:PORT (needs the rllib extra)",
    )  # fmt: skip
    openings.add_argument(
        "--table-bits", type=whole_number(10, 32), default=24, metavar="B",
        help="the solver's table per deal: 2**B slots of 16 bytes (default 24: 256 MiB)",
    )  # fmt: skip
    openings.add_argument(
        "--summary", type=output_path, default=None, help="also write the summary as JSON to this path"
    )
    openings.add_argument("--quiet", action="store_true", help="no progress bar")
    openings.set_defaults(run=_solve_openings)

    play = commands.add_parser("play", help="play an agent in the terminal")
    play.add_argument(
        "--opponent", default="greedy", help="agent spec (default greedy; a checkpoint or run folder by path: ./x.pt)"
    )
    play.add_argument("--seat", default="random", choices=["0", "1", "random"], help="your seat")
    play.add_argument("--seed", type=non_negative_int, default=None)
    play.add_argument(
        "--config", type=config_path("rules"), default=None, help="a rules config (name in configs/rules/ or YAML path)"
    )
    play.add_argument(
        "--save", type=output_path, default=None, help="write the game as a replay to this file (for trinity review)"
    )
    play.set_defaults(run=_play)

    train = commands.add_parser(
        "train", help="train an agent by self-play from a shipped config or a YAML file (needs the train extra)"
    )
    train.add_argument(
        "config",
        nargs="?",
        type=config_path("training"),
        default="quick",
        help="quick, standard, az-quick, az-standard, rllib or a path",
    )
    train.add_argument(
        "--run", dest="run_folder", type=folder_path, default=None, help="the run folder (default runs/CONFIG)"
    )
    train.add_argument(
        "--trainer",
        choices=["ppo", "alphazero", "rllib"],
        default=None,
        help="default: alphazero for az-* configs, rllib for rllib* configs, else ppo",
    )
    again = train.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="continue the run in RUN")
    again.add_argument("--overwrite", action="store_true", help="delete the run in RUN and start again")
    train.add_argument(
        "--total-steps", type=positive_int, default=None, metavar="N",
        help="PPO: learner steps to train for, over the config's (with --resume: extend the run to N)",
    )  # fmt: skip
    train.add_argument(
        "--total-games", type=positive_int, default=None, metavar="N",
        help="AlphaZero: self-play games to train for, over the config's (with --resume: extend the run to N)",
    )  # fmt: skip
    train.add_argument(
        "--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
        help="AlphaZero on Ray: self-play and labels on actors of a cluster ('local', auto, HOST:PORT; docs/ray.md)",
    )  # fmt: skip
    train.add_argument("--actors", type=positive_int, default=None, help="AlphaZero on Ray: self-play actors")
    train.set_defaults(run=_train)

    exploit = commands.add_parser(
        "exploit", help="approximate exploitability: train a best response to an agent with PPO, report its win rate"
    )
    exploit.add_argument("agent", help="the agent spec to exploit, e.g. greedy, ppo-standard, mcts:400")
    exploit.add_argument("--steps", type=positive_int, required=True, help="learner steps of PPO training (budget)")
    exploit.add_argument(
        "--games", type=positive_int, default=400, help="seat-swapped evaluation games afterwards (default 400)"
    )
    exploit.add_argument("--seed", type=non_negative_int, default=0)
    exploit.add_argument(
        "--json", type=output_path, default=None, help="also write the result and learning curve as JSON to this path"
    )
    exploit.add_argument("--quiet", action="store_true", help="no progress line")
    exploit.set_defaults(run=_exploit)

    review = commands.add_parser(
        "review", help="annotate every placement of a replay with exact values (or labelled estimates) and blunders"
    )
    review.add_argument("file", type=input_path, help="a replay JSON file, or - for standard input")
    review.add_argument(
        "--max-nodes", type=positive_int, default=2_000_000,
        help="solver nodes per position; past it the value is an estimate (default 2,000,000)",
    )  # fmt: skip
    review.add_argument(
        "--agent", default="mcts:1600", help="agent spec estimating where the solver gives up (default mcts:1600)"
    )
    review.add_argument("--seed", type=non_negative_int, default=0)
    review.add_argument("--json", type=output_path, default=None, help="also write the review as JSON to this path")
    review.add_argument(
        "--png", type=output_path, default=None, help="also draw the value over the game, blunders marked, to this PNG"
    )
    review.add_argument("--quiet", action="store_true", help="no progress bar")
    review.set_defaults(run=_review)

    puzzles = commands.add_parser(
        "puzzles", help="build solved puzzles from self-play (--out FILE) or score agents on a puzzle file (--score)"
    )
    mode = puzzles.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", type=output_path, default=None, help="build: write the puzzles to this JSON-lines file")
    mode.add_argument(
        "--score",
        type=input_path,
        default=None,
        help="score: a puzzle file (or the endgame suite) to score --agents on",
    )
    puzzles.add_argument("--count", type=positive_int, default=None, help="build: puzzles to find (default 200)")
    puzzles.add_argument(
        "--empty", type=empty_range, default=None, help="build: empty tiles, N or LOW-HIGH within 1-14 (default 8-10)"
    )
    puzzles.add_argument("--agent", default=None, help="build: the agent that plays itself (default mcts:400)")
    puzzles.add_argument(
        "--max-nodes", type=positive_int, default=None, help="build: solver nodes per position (default 20,000,000)"
    )
    puzzles.add_argument(
        "--max-games", type=positive_int, default=None, help="build: give up after this many games (default 50 x count)"
    )
    puzzles.add_argument("--agents", nargs="+", default=None, help="score: agent specs, e.g. random greedy mcts:400")
    puzzles.add_argument(
        "--json", type=output_path, default=None, help="score: also write the scores as JSON to this path"
    )
    puzzles.add_argument("--seed", type=non_negative_int, default=0)
    puzzles.add_argument("--quiet", action="store_true", help="no progress bar")
    puzzles.set_defaults(run=_puzzles)

    accuracy = commands.add_parser(
        "accuracy", help="score agents against perfect play: moves that keep the exact value, by empty tiles"
    )
    accuracy.add_argument("agents", nargs="*", help="agent specs to score, e.g. greedy mcts:400 az-standard")
    accuracy.add_argument(
        "--set", type=input_path, default=None, help="a position set file (default: the shipped set, 4-11 empty)"
    )
    accuracy.add_argument("--empty", type=empty_range, default=None, help="only (or build) N or LOW-HIGH empty tiles")
    accuracy.add_argument("--limit", type=positive_int, default=None, help="score: the first N positions of each count")
    accuracy.add_argument(
        "--json", type=output_path, default=None, help="score: also write the figures as JSON to this path"
    )
    accuracy.add_argument(
        "--png", type=output_path, default=None, help="score: also plot accuracy by empty tiles to this PNG"
    )
    accuracy.add_argument(
        "--build", type=record_path, default=None, help="build (or go on building) a position set in this file"
    )
    accuracy.add_argument(
        "--per-count", type=positive_int, default=None, help="build: positions not lost for the mover, per count (400)"
    )
    accuracy.add_argument("--agent", default=None, help="build: the agent whose self-play makes the set (mcts:400)")
    accuracy.add_argument(
        "--max-nodes", type=positive_int, default=None, help="build: solver nodes per position (default 50,000,000)"
    )
    accuracy.add_argument("--seed", type=non_negative_int, default=0)
    accuracy.add_argument("--quiet", action="store_true", help="no progress bar")
    accuracy.set_defaults(run=_accuracy)

    serve = commands.add_parser("serve", help="play, watch and replay games in the browser (a local web app)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    serve.add_argument("--port", type=whole_number(1, 65535), default=8000, help="port (default 8000)")
    serve.add_argument(
        "--max-games", type=positive_int, default=200,
        help="games kept at once, all browsers together (200); each browser keeps at most 20, and past this cap "
        "the least recently used browser loses its oldest game",
    )  # fmt: skip
    serve.set_defaults(run=_serve)

    prepare = commands.add_parser(
        "prepare", help="compile the engine once (every kernel family; a fresh install's first commands wait less)"
    )
    prepare.add_argument(
        "--jobs", type=process_count, default=1, help="families compiled at once, each in a process of its own (1)"
    )
    prepare.set_defaults(run=_prepare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status: 0, 2 for bad input (one line on stderr), 130 when interrupted."""
    try:
        args, extra = build_parser().parse_known_args(argv)
        if extra:
            raise UsageError(f"trinity {args.command}", f"unrecognized arguments: {' '.join(extra)}")
    except UsageError as err:
        _say(err.prog, err.message)
        return EXIT_BAD_INPUT
    prog = f"trinity {args.command}"
    try:
        return args.run(args) or 0
    except KeyboardInterrupt:
        _say(prog, "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of standard output went away (trinity show x | head -1)
        _silence_stdout()
        return 1
    except (TrinityError, ValueError, OSError, RecursionError, MemoryError, BudgetExhausted) as err:
        _say(prog, _describe(err))
        return EXIT_BAD_INPUT


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (captured in tests)
        pass


if __name__ == "__main__":
    sys.exit(main())

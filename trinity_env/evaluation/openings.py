"""Solved openings: how much placing first is worth under perfect play, over many dealt games.

The balance lab measures the first mover's edge between strong agents; this measures it
exactly. Each task deals one game from its seed (the standard deck, hands dealt at random,
the first mover drawn, as the arena and the puzzle builder deal: ``dealt_game``) and asks the
exact solver for the first placement position's value for the player who places first, and
for the first placements that keep it. Dealt games are independent, so the work spreads over
processes on one machine (``threads``) or over a Ray cluster (``ray_cluster``), and each
result is appended to a JSON-lines file as soon as it is known.

Budgets are in solver nodes, never seconds, so a record is the same on every machine: a deal
is solved within ``budget_nodes`` or recorded as unsolved with the nodes spent. One record
per seed (``read_records`` refuses a file that repeats one). Which placements a record lists:

- the value is found first (``Solver.best_move``); that call's move keeps the value;
- with a second budget, ``classify_nodes`` (0 by default: none), every legal first placement is
  classified (``Solver.solve`` on the same table, so the value costs little again): when that
  fits, ``best_moves`` holds every placement that keeps the value and ``all_best_moves`` is
  true; when it does not, ``best_moves`` holds the one move found and ``all_best_moves`` is
  false. Classifying a won opening's placements costs a refutation of every losing one, many
  times the value's nodes, so a job that wants many deals' values spends nothing on it.

The file is the state of the job: a rerun skips every seed it holds (solved, or unsolved
within a budget at least as large as the rerun's); an unsolved seed whose budget was smaller
is solved again with the new budget, its old record dropped first, so the file never holds
a seed twice. A last line cut short (the process was killed while writing it) is dropped
before anything is appended, and said. While a job runs, the file is locked (POSIX
``flock``) so that two jobs cannot append the same seed.

Ctrl-C stops within about a second: the pool or the cluster's outstanding tasks are
cancelled, and ``RunInterrupted`` carries the run so far; every finished deal is already on
disk. ``summarise`` turns records into the designers' figures: the share of solved deals the
first player wins, draws and loses (Wilson 95% intervals), the count solved and unsolved, and
the first placements found best most often.

Ray is optional (the ``rllib`` extra) and imported only by ``ray_cluster``.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import re
import socket
import statistics
import time
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from trinity_env.core import ArgumentError, GameState, records
from trinity_env.core.board import EMPTY
from trinity_env.core.files import read_text
from trinity_env.core.writes import write_text
from trinity_env.evaluation.match import RunInterrupted, chunk_results
from trinity_env.evaluation.ratings import Share
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.config import make_config

DEFAULT_TABLE_BITS = 24
"""The solver's table per deal: 2**24 slots of 16 bytes, 256 MiB (a process or a Ray task each hold one)."""
MAX_SEEDS = 1_000_000
"""Deals one run may ask for: the list of seeds still to solve is built before the first task."""
RAY_RETRIES = 3
"""How often Ray runs a deal again whose worker died (a killed process, a lost node) before it gives up."""
WAIT_STEP = 0.5
"""Seconds the Ray path waits for a result before it looks again (Ctrl-C is honoured between looks)."""
CONNECT_TIMEOUT = 5.0
"""Seconds a cluster address gets to accept a connection before ``ray_cluster`` calls it unreachable."""
PROGRESS_POLL = 1.0
"""Seconds between looks at the running deals' node counts (a pool of processes); Ctrl-C is honoured between."""
BAR_EVERY = 5.0
"""Seconds between redraws of the progress bar's node counts (a log file gets a line each time)."""


class OpeningsError(ArgumentError):
    """A solved-openings file or a cluster that cannot be used, said in one line (the command exits with 2)."""


# ---------------------------------------------------------------------- what is solved


class Deal(Protocol):
    """A source of positions to solve, one per seed; ``name`` is written in every record so that a
    file never mixes two sources. It must be picklable (it travels to worker processes and Ray tasks)."""

    name: str

    def __call__(self, seed: int) -> GameState: ...


@dataclass(frozen=True)
class DealtGame:
    """The first placement position of dealt game ``seed``: standard decks, each hand a uniformly
    random legal hand, a random first mover, all from ``random.Random(seed)`` (as ``config.new_game``
    deals for the arena and the puzzle builder). Both hands are open: the solver needs both."""

    name: str = "opening"

    def __call__(self, seed: int) -> GameState:
        return make_config(draft="dealt").new_game(random.Random(seed))


@dataclass(frozen=True)
class LateGame:
    """Dealt game ``seed`` played at random (from the same generator) down to ``empty`` empty tiles,
    dealt again when a game ends before it gets there.

    Positions the solver finishes in milliseconds: they run the whole job (files, pools, a cluster)
    in seconds, which the tests and a first run on a new cluster need; a dealt game's opening takes
    billions of nodes."""

    empty: int

    def __post_init__(self) -> None:
        if isinstance(self.empty, bool) or not isinstance(self.empty, int) or not 1 <= self.empty <= 14:
            raise ArgumentError(f"empty must be an int from 1 to 14, got {self.empty!r}")

    @property
    def name(self) -> str:
        return f"late-{self.empty}"

    def __call__(self, seed: int) -> GameState:
        rng = random.Random(seed)
        config = make_config(draft="dealt")
        state = config.new_game(rng)
        while state.is_over or state.owners.count(EMPTY) > self.empty:
            state = config.new_game(rng) if state.is_over else state.apply(rng.choice(state.legal_actions()))
        return state


dealt_game = DealtGame()


def _moves(moves: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"card": card, "tile": tile} for card, tile in moves]


def solve_deal(
    seed: int,
    budget_nodes: int,
    table_bits: int = DEFAULT_TABLE_BITS,
    deal: Deal = dealt_game,
    classify_nodes: int = 0,
    progress: Callable[[int], object] | None = None,
) -> dict:
    """The record of one deal: solved within ``budget_nodes`` (value, winner, the first placement found)
    or not (the nodes spent); with ``classify_nodes`` more, every best first placement where that fits.
    A fresh table per deal, so a record depends on its seed, budgets and table size only, not on which
    deals a process solved before it. ``seconds`` is the one field that depends on the machine.
    ``progress``, if given, sees the nodes the deal's current query has searched, about once a second."""
    state = deal(seed)
    solver = Solver(table_bits=table_bits, progress=None if progress is None else lambda nodes, _: progress(nodes))
    record: dict[str, Any] = {"seed": seed, "deal": deal.name, "first_player": state.to_move}
    start = time.perf_counter()
    try:
        value, move = solver.best_move(state, max_nodes=budget_nodes)
    except SolverBudgetError as stopped:
        record |= {"solved": False, "nodes": stopped.nodes}
    else:
        value_nodes = solver.nodes
        best, complete, nodes = [move.notation(state.decks[state.to_move])], False, value_nodes
        if classify_nodes > 0:  # classify every first placement on the same table
            try:
                solution = solver.solve(state, max_nodes=classify_nodes)
            except SolverBudgetError as stopped:
                nodes += stopped.nodes
            else:
                if solution.value != value:  # the solver is exact: this never happens
                    raise AssertionError(f"seed {seed}: value {value} then {solution.value}")
                best, complete, nodes = solution.best_moves, True, nodes + solution.nodes
        winner = None if value == 0 else (state.to_move if value == 1 else 1 - state.to_move)
        record |= {
            "solved": True,
            "value": value,
            "winner": winner,
            "best_moves": _moves(best),
            "all_best_moves": complete,
            "nodes": nodes,
            "value_nodes": value_nodes,
        }
    record |= {
        "budget_nodes": budget_nodes,
        "classify_nodes": classify_nodes,
        "table_bits": table_bits,
        "seconds": round(time.perf_counter() - start, 3),
        "position": state.to_dict(),
    }
    return record


_progress_slots: Any = None
"""In a pool's worker process: the parent's shared array of node counts, one slot per deal of the run."""


def _share_progress(slots: Any) -> None:
    """Pool initializer: where this worker's deals write the nodes searched so far (read by the parent)."""
    global _progress_slots
    _progress_slots = slots


def _solve_task(task: tuple[int, int, int, Deal, int, int]) -> dict:
    *deal_task, slot = task
    slots = _progress_slots
    report = None if slots is None else lambda nodes: slots.__setitem__(slot, nodes)
    return solve_deal(*deal_task, progress=report)


@contextmanager
def _pool_results(
    tasks: Iterable[tuple[int, int, int, Deal, int]],
    seeds: list[int],
    workers: int,
    show: Callable[[dict[int, int]], None],
) -> Iterator[Iterator[dict]]:
    """Each deal's record as it finishes, solved in a pool of ``workers`` processes; between records,
    about every ``PROGRESS_POLL`` seconds, ``show`` gets the running deals' nodes so far by seed."""
    slots = multiprocessing.get_context("spawn").Array("q", len(seeds), lock=False)  # zero: not started
    numbered = ((*task, k) for k, task in enumerate(tasks))
    with chunk_results(_solve_task, numbered, workers, _share_progress, (slots,)) as results:

        def records() -> Iterator[dict]:
            finished: set[int] = set()
            low = 0  # the first deal not finished
            while True:
                try:
                    record = results.next(timeout=PROGRESS_POLL)
                except multiprocessing.TimeoutError:
                    while low < len(seeds) and seeds[low] in finished:
                        low += 1
                    # the workers take the deals in order, so those started are the first finished + running,
                    # and at most ``workers`` run: a window, not every slot of a long run
                    high = min(len(seeds), len(finished) + workers)
                    show({seeds[k]: slots[k] for k in range(low, high) if slots[k] and seeds[k] not in finished})
                    continue
                except StopIteration:
                    return
                finished.add(record["seed"])
                yield record

        yield records()


def _count(nodes: int) -> str:
    """A node count in a few characters: 950, 12.3k, 4.56M, 7.89G."""
    for size, unit in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if nodes >= size:
            return f"{nodes / size:.3g}{unit}"
    return str(nodes)


# ---------------------------------------------------------------------- the file


def _is_int(value: object, low: int, high: int | None = None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)


def _record_problem(record: object) -> str | None:
    """What is wrong with one parsed line as a record (``None``: nothing)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    checks = [
        ("seed", _is_int(record.get("seed"), 0)),
        ("deal", isinstance(record.get("deal"), str)),
        ("solved", isinstance(record.get("solved"), bool)),
        ("nodes", _is_int(record.get("nodes"), 0)),
        ("budget_nodes", _is_int(record.get("budget_nodes"), 1)),
        ("first_player", _is_int(record.get("first_player"), 0, 1)),
    ]
    if record.get("solved") is True:
        moves = record.get("best_moves")
        checks += [
            ("value", _is_int(record.get("value"), -1, 1)),
            ("all_best_moves", isinstance(record.get("all_best_moves"), bool)),
            (
                "best_moves",
                isinstance(moves, list)
                and bool(moves)
                and all(
                    isinstance(m, dict) and isinstance(m.get("card"), str) and _is_int(m.get("tile"), 0, 14)
                    for m in moves
                ),
            ),
        ]
    bad = [name for name, ok in checks if not ok]
    return f"bad or missing {', '.join(bad)}" if bad else None


@dataclass
class _Contents:
    records: dict[int, dict]
    """Each seed's record."""
    lines: dict[int, str]
    """Each seed's line as written."""
    cut: bool
    """Whether the last line was cut short (written in part when the job was killed): left out."""
    whole: bool
    """Whether the file is whole lines only (empty, or ending with a newline after a record)."""


def _parse(text: str, name: str) -> _Contents:
    """The records of a solved-openings file's text; ``OpeningsError`` (one line) for anything but a
    cut last line, which is left out and reported in ``cut``."""
    records: dict[int, dict] = {}
    lines: dict[int, str] = {}
    first_line: dict[int, int] = {}
    cut, deals = False, set()
    pieces = text.split("\n")
    for number, line in enumerate(pieces, 1):
        last = number == len(pieces)
        if last and not line:
            break  # the file ends with a newline
        try:
            record = json.loads(line)
            problem = _record_problem(record)
        except ValueError:
            record, problem = None, "not JSON"
        if problem is not None:
            if last:  # no newline after it: the job was killed while writing it
                cut = True
                break
            raise OpeningsError(f"{name} line {number}: not a solved-openings record ({problem})")
        seed = record["seed"]
        if seed in records:
            raise OpeningsError(f"{name} line {number}: seed {seed} again (first on line {first_line[seed]})")
        records[seed], lines[seed], first_line[seed] = record, line, number
        deals.add(record["deal"])
    if len(deals) > 1:
        raise OpeningsError(f"{name} mixes records of different deals ({', '.join(sorted(deals))})")
    return _Contents(records, lines, cut, text == "" or text.endswith("\n"))


def read_records(path: str | Path) -> dict[int, dict]:
    """The records of a solved-openings file by seed (a cut last line left out; the file is not changed).

    ``OpeningsError`` in one line for a file that cannot be read, a line that is not a record, or a
    seed written twice."""
    text = read_text(path, "solved-openings file", OpeningsError)  # core.files: a regular file, at most 64 MiB
    return _parse(text, str(path)).records


def _lock(handle: Any, name: str) -> None:
    """An exclusive lock on the open file, or ``OpeningsError`` when another job holds it (``records.lock``)."""
    records.lock(handle.fileno(), name, OpeningsError, "another solve-openings job")


@dataclass
class OpeningsRun:
    """What one ``solve_openings`` call did. ``records``: the file's records of the seeds asked for,
    the new ones included, by seed; ``new``: the seeds recorded by this call, in the order they
    finished; ``skipped``: seeds asked for that the file held already; ``retried``: unsolved seeds
    solved again with a larger budget; ``cut``: a cut last line was dropped; ``failed``: seeds whose
    Ray task failed for good (not recorded: a rerun tries them again) and why; ``partial``: Ctrl-C."""

    out: str
    seeds: Sequence[int]
    records: dict[int, dict] = field(default_factory=dict)
    new: list[int] = field(default_factory=list)
    skipped: int = 0
    retried: int = 0
    cut: bool = False
    failed: list[tuple[int, str]] = field(default_factory=list)
    partial: bool = False

    def summary(self) -> dict[str, Any]:
        """``summarise`` of the seeds asked for."""
        return summarise(self.records.values())


def check_openings(
    seeds: Sequence[int],
    budget_nodes: int,
    threads: int = 1,
    table_bits: int = DEFAULT_TABLE_BITS,
    classify_nodes: int = 0,
) -> None:
    """What ``solve_openings`` checks before any work (``ArgumentError``, one line)."""
    if not isinstance(seeds, Sequence) or isinstance(seeds, str | bytes):
        raise ArgumentError(f"seeds must be a range or a list of ints, got {type(seeds).__name__}")
    if not seeds:
        raise ArgumentError("seeds: no deals to solve")
    if len(seeds) > MAX_SEEDS:
        raise ArgumentError(f"seeds: at most {MAX_SEEDS:,} deals a run, got {len(seeds):,}")
    if not isinstance(seeds, range):
        bad = next((s for s in seeds if not _is_int(s, 0)), None)
        if bad is not None:
            raise ArgumentError(f"seeds must be ints >= 0, got {bad!r}")
    elif seeds.start < 0 or seeds.step != 1:
        raise ArgumentError(f"seeds must be a range of ints >= 0 in steps of 1, got {seeds!r}")
    if not _is_int(budget_nodes, 1):
        raise ArgumentError(f"budget_nodes must be a positive int, got {budget_nodes!r}")
    if not _is_int(classify_nodes, 0):
        raise ArgumentError(f"classify_nodes must be an int >= 0, got {classify_nodes!r}")
    if not _is_int(threads, 1):
        raise ArgumentError(f"threads must be a positive int, got {threads!r}")
    if not _is_int(table_bits, 2, 32):
        raise ArgumentError(f"table_bits must be an int from 2 to 32, got {table_bits!r}")


def _open_locked(path: Path, name: str) -> Any:
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - the caller holds it for the whole run
    try:
        _lock(handle, name)
    except BaseException:
        handle.close()
        raise
    return handle


def _replace(path: Path, text: str) -> None:
    """``path`` holds ``text`` afterwards, or (interrupted, or a failed write) still what it held:
    written beside it and moved over it (``trinity_env.core.writes``: never through a link)."""
    write_text(path, text)


def solve_openings(
    seeds: Sequence[int],
    budget_nodes: int,
    out: str | Path,
    *,
    threads: int = 1,
    table_bits: int = DEFAULT_TABLE_BITS,
    classify_nodes: int = 0,
    cluster: RayCluster | None = None,
    deal: Deal | None = None,
    progress: bool = True,
    on_record: Callable[[dict], object] | None = None,
    on_progress: Callable[[dict[int, int]], object] | None = None,
) -> OpeningsRun:
    """Solve the deals of ``seeds`` not yet in ``out``, appending each record to ``out`` as it finishes.

    ``threads``: deals solved at once, each in a process of its own (one: in this process); with
    ``cluster`` (a connected ``RayCluster``) every deal is a Ray task instead and the cluster's CPUs
    set the pace. ``classify_nodes``: see ``solve_deal``. ``deal``: what each seed gives to solve
    (default ``dealt_game``, the first placement of the dealt game). ``on_record`` sees each new record
    once it is on disk; ``on_progress``, about once a second, the nodes each running deal has searched so
    far by seed (here and in a pool, not on a cluster), which the progress bar shows too. Ctrl-C raises
    ``RunInterrupted`` whose ``partial`` is the ``OpeningsRun`` so far (``partial=True``).
    """
    check_openings(seeds, budget_nodes, threads, table_bits, classify_nodes)
    deal = dealt_game if deal is None else deal
    name, path = str(out), Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = _open_locked(path, name)
    try:
        handle.seek(0)
        try:
            contents = _parse(handle.read(), name)
        except UnicodeDecodeError:
            raise OpeningsError(f"{name}: not UTF-8 text") from None
        kinds = {r["deal"] for r in contents.records.values()}
        if kinds and kinds != {deal.name}:
            raise OpeningsError(f"{name} holds records of deal {kinds.pop()!r}, not {deal.name!r}: use another file")
        wanted = seeds if isinstance(seeds, range) else set(seeds)
        retry = {
            s
            for s, r in contents.records.items()
            if s in wanted and not r["solved"] and r["budget_nodes"] < budget_nodes
        }
        run = OpeningsRun(name, seeds, retried=len(retry), cut=contents.cut)
        if retry or not contents.whole:  # every seed once, whole lines only, before anything is appended
            _replace(path, "".join(contents.lines[s] + "\n" for s in contents.records if s not in retry))
            handle.close()
            handle = _open_locked(path, name)
        run.records = {s: r for s, r in contents.records.items() if s in wanted and s not in retry}
        run.skipped = len(run.records)
        todo = [s for s in dict.fromkeys(seeds) if s not in run.records]
        tasks = ((seed, budget_nodes, table_bits, deal, classify_nodes) for seed in todo)
        bar = tqdm(total=len(todo), disable=not progress, desc="openings", unit="deal")
        drawn = [time.monotonic()]

        def show(running: dict[int, int]) -> None:
            if on_progress is not None:
                on_progress(running)
            if progress and running and time.monotonic() - drawn[0] >= BAR_EVERY:
                drawn[0] = time.monotonic()
                text = ", ".join(f"seed {seed} {_count(nodes)}" for seed, nodes in sorted(running.items()))
                bar.set_postfix_str(f"nodes: {text} (of {_count(budget_nodes)})", refresh=True)

        try:
            if cluster is not None:
                pool = cluster.results(tasks, run.failed)
            elif min(threads, len(todo)) > 1:
                pool = _pool_results(tasks, todo, min(threads, len(todo)), show)
            else:  # here, one deal after another: the solver reports from this thread
                pool = nullcontext(
                    solve_deal(*task, progress=lambda nodes, seed=task[0]: show({seed: nodes})) for task in tasks
                )
            with pool as results:
                for record in results:
                    handle.write(json.dumps(record) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                    run.records[record["seed"]] = record
                    run.new.append(record["seed"])
                    bar.update(1)
                    if on_record is not None:
                        on_record(record)
        except KeyboardInterrupt:
            run.partial = True
        finally:
            bar.close()
    finally:
        handle.close()
    if run.partial:
        _count_what_reached_the_file(run, path, wanted)
        raise RunInterrupted(run)
    return run


def _count_what_reached_the_file(run: OpeningsRun, path: Path, wanted: Container[int]) -> None:
    """After Ctrl-C the file is the truth: a record whose line was written (closing the file flushed it)
    when the interrupt landed before it was counted is counted now."""
    on_disk = _parse(path.read_text(encoding="utf-8"), str(path)).records
    for seed, record in on_disk.items():
        if seed in wanted and seed not in run.records:
            run.records[seed] = record
            run.new.append(seed)


# ---------------------------------------------------------------------- Ray


_ADDRESS_FORMS = "local, auto, HOST:PORT or ray://HOST:PORT"


def check_ray_address(address: str) -> tuple[str, int] | None:
    """The host and port to reach for ``address`` (``None`` for ``local`` and ``auto``); ``OpeningsError``
    when it is none of the forms Ray takes."""
    if address in ("local", "auto"):
        return None
    rest = address.removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if (
        not colon
        or not host
        or not port.isascii()
        or not port.isdigit()
        or not 1 <= int(port) <= 65535
        or any(ch.isspace() or ch in "/?#@" for ch in host)
    ):
        raise OpeningsError(f"--ray {address!r}: not a cluster address (expected {_ADDRESS_FORMS})")
    return host, int(port)


class RayCluster:
    """A connection to a Ray cluster on which each deal is a task (``ray_cluster`` makes one)."""

    def __init__(self, ray: Any, address: str):
        self.ray = ray
        self.address = address
        self._solve = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(solve_deal)

    def cpus(self) -> int:
        """The cluster's CPUs (at least one)."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    @contextmanager
    def results(
        self, tasks: Iterable[tuple[int, int, int, Deal, int]], failed: list[tuple[int, str]]
    ) -> Iterator[Iterator[dict]]:
        """Each task's record as it finishes, with at most two tasks per CPU outstanding. A task that
        fails for good (its retries spent) is added to ``failed`` instead. Leaving the block early (Ctrl-C)
        cancels every outstanding task; the finished ones were handed out already."""
        ray = self.ray
        pending: dict[Any, int] = {}

        def run() -> Iterator[dict]:
            window = 2 * self.cpus()
            queue = iter(tasks)
            while True:
                while len(pending) < window and (task := next(queue, None)) is not None:
                    pending[self._solve.remote(*task)] = task[0]
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_STEP)
                for ref in done:
                    seed = pending.pop(ref)
                    try:
                        record = ray.get(ref)
                    except ray.exceptions.RayError as err:
                        failed.append((seed, _why(err)))
                        continue
                    yield record

        try:
            yield run()
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)


def _why(err: BaseException) -> str:
    """A failed task's error in one line: the task's own exception where Ray wraps one, without colours."""
    cause = getattr(err, "cause", None)
    shown = cause if isinstance(cause, BaseException) else err
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(shown)).strip()
    return f"{type(shown).__name__}: {text.splitlines()[0]}" if text else type(shown).__name__


@contextmanager
def ray_cluster(address: str, cpus: int | None = None) -> Iterator[RayCluster]:
    """Connect to the Ray cluster at ``address`` (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``), or
    start one in this process (``local``, with ``cpus`` CPUs: the deals solved at once; default all).

    Checked before any work: a bad or unreachable address, or Ray not installed, is an
    ``OpeningsError`` in one line. If this process is connected already (``ray.init`` was called), that
    connection is used and left open; otherwise the connection is closed (a local cluster stopped) on leaving.
    """
    if not isinstance(address, str):
        raise ArgumentError(f"the Ray address must be a string, got {address!r}")
    target = check_ray_address(address)
    if cpus is not None and not _is_int(cpus, 1):
        raise ArgumentError(f"cpus must be a positive int, got {cpus!r}")
    if cpus is not None and address != "local":
        raise ArgumentError("a cluster's own CPUs decide how many deals run at once: give cpus only for a local one")
    try:
        import ray
    except ModuleNotFoundError:
        raise OpeningsError("--ray needs Ray, the rllib extra: pip install 'trinity-towers[rllib]'") from None
    owned = not ray.is_initialized()
    if owned:
        if target is not None:
            try:
                socket.create_connection(target, timeout=CONNECT_TIMEOUT).close()
            except OSError as err:
                raise OpeningsError(f"--ray {address}: cannot reach the cluster ({err.strerror or err})") from None
        try:
            if address == "local":
                ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
            else:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as err:
            message = " ".join(str(err).split()) or type(err).__name__
            raise OpeningsError(f"--ray {address}: cannot connect ({message})") from None
    try:
        yield RayCluster(ray, address)
    finally:
        if owned:
            ray.shutdown()


# ---------------------------------------------------------------------- the summary


def _bounds(wins: int, unsolved: int, deals: int) -> dict[str, Any] | None:
    """The first player's share of wins over every deal, with each unsolved deal counted first as
    not a win (``low``), then as a win (``high``); ``interval`` is the 95% Wilson interval that
    covers both (from the low count's lower end to the high count's upper end)."""
    if not deals:
        return None
    return {
        "low": wins / deals,
        "high": (wins + unsolved) / deals,
        "interval": [Share(wins, deals).interval[0], Share(wins + unsolved, deals).interval[1]],
        "n": deals,
    }


def mover_tile(tile: int, first_player: int) -> int:
    """``tile`` as the first player sees it from their own tower: player 1's tower is at position 4,
    so their tiles are mirrored (position p becomes 4 - p); player 0's are as they are."""
    lane, position = divmod(tile, 5)
    return tile if first_player == 0 else 5 * lane + 4 - position


def summarise(records: Iterable[dict], top: int = 10) -> dict[str, Any]:
    """The designers' figures from solved-openings records: the share of solved deals the first
    player wins, draws and loses under perfect play (Wilson 95% intervals), the count solved and
    unsolved, the share of all deals the first player wins whatever the unsolved ones hold
    (``wins_all_deals``: bounds, since the solved deals are not a fair sample of them: an opening
    the first player does not win is the dearer to solve, every first placement needing its
    refutation), and the ``top`` best first placements (card and tile as placed) and tiles (seen from
    the first player's tower) by the number of solved deals in which they keep the value."""
    records = sorted(records, key=lambda r: r["seed"])
    solved = [r for r in records if r["solved"]]
    unsolved = [r for r in records if not r["solved"]]
    outcomes = Counter(r["value"] for r in solved)
    placements: Counter = Counter()
    tiles: Counter = Counter()
    for r in solved:
        placements.update({(m["card"], m["tile"]) for m in r["best_moves"]})
        tiles.update({mover_tile(m["tile"], r["first_player"]) for m in r["best_moves"]})
    order = lambda item: (-item[1], item[0])  # noqa: E731 - most deals first, then by name: deterministic
    nodes = [r["nodes"] for r in solved]
    lost = [r["nodes"] for r in unsolved]
    seconds = [r["seconds"] for r in solved if isinstance(r.get("seconds"), int | float)]
    return {
        "deal": records[0]["deal"] if records else None,
        "deals": len(records),
        "solved": len(solved),
        "unsolved": len(unsolved),
        "seeds": [records[0]["seed"], records[-1]["seed"]] if records else None,
        "budget_nodes": sorted({r["budget_nodes"] for r in records}),
        "first_player": {
            "wins": Share(outcomes[1], len(solved)).to_json(),
            "draws": Share(outcomes[0], len(solved)).to_json(),
            "losses": Share(outcomes[-1], len(solved)).to_json(),
        },
        "wins_all_deals": _bounds(outcomes[1], len(unsolved), len(records)),
        "all_best_moves": sum(r["all_best_moves"] for r in solved),
        "placements": [{"card": c, "tile": t, "deals": n} for (c, t), n in sorted(placements.items(), key=order)[:top]],
        "tiles": [{"tile": t, "deals": n} for t, n in sorted(tiles.items(), key=order)[:top]],
        "nodes_solved": {"median": statistics.median(nodes), "max": max(nodes)} if nodes else None,
        "nodes_unsolved": {"median": statistics.median(lost), "max": max(lost)} if lost else None,
        "seconds_solved": {"median": statistics.median(seconds), "max": max(seconds)} if seconds else None,
        "unsolved_seeds": [r["seed"] for r in unsolved][:100],
    }


def summary_text(summary: dict[str, Any], source: str = "") -> str:
    """The summary in a few lines, for people."""
    where = f" in {source}" if source else ""
    if not summary["deals"]:
        return f"no deals recorded{where}"
    budgets = ", ".join(f"{b:,}" for b in summary["budget_nodes"])
    lines = [
        f"{summary['deals']} deals{where} (seeds {summary['seeds'][0]}-{summary['seeds'][1]}, {summary['deal']}): "
        f"{summary['solved']} solved, {summary['unsolved']} unsolved within {budgets} nodes"
    ]
    first = summary["first_player"]
    if summary["solved"]:
        lines.append(
            f"the first player under perfect play: wins {Share.from_json(first['wins']).text()}, "
            f"draws {Share.from_json(first['draws']).text()}, loses {Share.from_json(first['losses']).text()} "
            f"of {summary['solved']} solved deals"
        )
        shown = ", ".join(f"{p['card']} on tile {p['tile']} ({p['deals']})" for p in summary["placements"])
        lines.append(
            f"best first placements (solved deals where each keeps the value; every best placement "
            f"found in {summary['all_best_moves']} of {summary['solved']}): {shown}"
        )
        tiles = ", ".join(f"{t['tile']} ({t['deals']})" for t in summary["tiles"])
        lines.append(f"best first tiles, seen from the first player's tower: {tiles}")
        nodes, seconds = summary["nodes_solved"], summary["seconds_solved"]
        timing = f", {seconds['median']:,.1f} s (max {seconds['max']:,.1f} s)" if seconds else ""
        lines.append(f"per solved deal: median {nodes['median']:,.0f} nodes (max {nodes['max']:,}){timing}")
    if summary["unsolved"]:
        bounds = summary["wins_all_deals"]
        low, high = bounds["interval"]
        lines.append(
            f"over all {summary['deals']} deals, each unsolved one counted as not won, then as won: "
            f"the first player wins {bounds['low']:.1%} to {bounds['high']:.1%} "
            f"(95%: [{low:.1%}, {high:.1%}])"
        )
        nodes = summary["nodes_unsolved"]
        lines.append(
            f"unsolved deals spent a median {nodes['median']:,.0f} nodes; seeds "
            + " ".join(str(s) for s in summary["unsolved_seeds"])
            + (" ..." if summary["unsolved"] > len(summary["unsolved_seeds"]) else "")
        )
    return "\n".join(lines)


def file_summary(path: str | Path) -> dict[str, Any]:
    """``summarise`` of every record of a solved-openings file, with the file's name in ``"file"``;
    ``OpeningsError`` for a file that is not one or holds no deal."""
    records = read_records(path)
    if not records:
        raise OpeningsError(f"{path}: no solved-openings records in it")
    return {"file": str(path)} | summarise(records.values())

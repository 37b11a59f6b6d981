"""Solved openings: how much placing first is worth under perfect play, over many dealt games.

The balance lab measures the first mover's edge between strong agents; this measures it
exactly. Each task deals one game from its seed (the standard deck, hands dealt at random,
the first mover drawn, as the arena and the puzzle builder deal: ``dealt_game``) and asks the
exact solver for the first placement position's value for the player who places first, and
for the first placements that keep it. Dealt games are independent, so the work spreads over
processes on one machine (``threads``) or over a cluster (``Cluster``: a Ray cluster from
``trinity_env.integrations.ray_cluster``), and each result is appended to a JSON-lines file
(``trinity_env.evaluation.openings_file``) as soon as it is known.

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
before anything is appended, and said. While a job runs, the file is locked so that two jobs
cannot append the same seed.

Ctrl-C stops within about a second: the pool or the cluster's outstanding tasks are
cancelled, and ``RunInterrupted`` carries the run so far; every finished deal is already on
disk. ``summarise`` turns records into the designers' figures: the share of solved deals the
first player wins, draws and loses (Wilson 95% intervals), the count solved and unsolved, and
the first placements found best most often.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from trinity_env.core import ArgumentError, GameState, Move
from trinity_env.core.board import EMPTY
from trinity_env.evaluation.match import RunInterrupted, chunk_results
from trinity_env.evaluation.openings_file import holding, parse, whole
from trinity_env.evaluation.openings_summary import summarise
from trinity_env.search.solver import Solver, SolverBudgetError
from trinity_env.spec.config import make_config

DEFAULT_TABLE_BITS = 24
"""The solver's table per deal: 2**24 slots of 16 bytes, 256 MiB (a process or a Ray task each hold one)."""
MAX_SEEDS = 1_000_000
"""Deals one run may ask for: the list of seeds still to solve is built before the first task."""
PROGRESS_POLL = 1.0
"""Seconds between looks at the running deals' node counts (a pool of processes); Ctrl-C is honoured between."""
BAR_EVERY = 5.0
"""Seconds between redraws of the progress bar's node counts (a log file gets a line each time)."""


# ---------------------------------------------------------------------- what is solved


class Deal(Protocol):
    """A source of positions to solve, one per seed; ``name`` is written in every record so that a
    file never mixes two sources. It must be picklable (it travels to worker processes and Ray tasks)."""

    name: str

    def __call__(self, seed: int) -> GameState: ...


class Cluster(Protocol):
    """Where deals run as tasks of a cluster (``trinity_env.integrations.ray_cluster.RayCluster`` is one)."""

    def results(
        self, tasks: Iterable[tuple[int, int, int, Deal, int]], failed: list[tuple[int, str]]
    ) -> AbstractContextManager[Iterator[dict]]:
        """Each task's record (``solve_deal(*task)``) as it finishes; a task that fails for good goes to ``failed``
        as ``(seed, why)``. Leaving the block early cancels the tasks still running."""
        ...


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


def _moves(moves: Iterable[Move]) -> list[dict[str, Any]]:
    return [move.to_json() for move in moves]


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
        best, complete, nodes = [move], False, value_nodes
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
        bad = next((s for s in seeds if not whole(s, 0)), None)
        if bad is not None:
            raise ArgumentError(f"seeds must be ints >= 0, got {bad!r}")
    elif seeds.start < 0 or seeds.step != 1:
        raise ArgumentError(f"seeds must be a range of ints >= 0 in steps of 1, got {seeds!r}")
    if not whole(budget_nodes, 1):
        raise ArgumentError(f"budget_nodes must be a positive int, got {budget_nodes!r}")
    if not whole(classify_nodes, 0):
        raise ArgumentError(f"classify_nodes must be an int >= 0, got {classify_nodes!r}")
    if not whole(threads, 1):
        raise ArgumentError(f"threads must be a positive int, got {threads!r}")
    if not whole(table_bits, 2, 32):
        raise ArgumentError(f"table_bits must be an int from 2 to 32, got {table_bits!r}")


def solve_openings(
    seeds: Sequence[int],
    budget_nodes: int,
    out: str | Path,
    *,
    threads: int = 1,
    table_bits: int = DEFAULT_TABLE_BITS,
    classify_nodes: int = 0,
    cluster: Cluster | None = None,
    deal: Deal | None = None,
    progress: bool = True,
    on_record: Callable[[dict], object] | None = None,
    on_progress: Callable[[dict[int, int]], object] | None = None,
) -> OpeningsRun:
    """Solve the deals of ``seeds`` not yet in ``out``, appending each record to ``out`` as it finishes.

    ``threads``: deals solved at once, each in a process of its own (one: in this process); with
    ``cluster`` (a connected ``Cluster``, such as ``trinity_env.integrations.ray_cluster``'s) every deal is a
    task of the cluster instead and its CPUs set the pace. ``classify_nodes``: see ``solve_deal``. ``deal``: what
    each seed gives to solve (default ``dealt_game``, the first placement of the dealt game). ``on_record`` sees
    each new record once it is on disk; ``on_progress``, about once a second, the nodes each running deal has
    searched so far by seed (here and in a pool, not on a cluster), which the progress bar shows too. Ctrl-C
    raises ``RunInterrupted`` whose ``partial`` is the ``OpeningsRun`` so far (``partial=True``).
    """
    check_openings(seeds, budget_nodes, threads, table_bits, classify_nodes)
    deal = dealt_game if deal is None else deal
    name, path = str(out), Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    wanted = seeds if isinstance(seeds, range) else set(seeds)
    with holding(path, deal.name, budget_nodes, wanted) as file:
        run = OpeningsRun(name, seeds, retried=file.retried, cut=file.cut)
        run.records = {s: r for s, r in file.records.items() if s in wanted}
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
                    file.append(record)
                    run.records[record["seed"]] = record
                    run.new.append(record["seed"])
                    bar.update(1)
                    if on_record is not None:
                        on_record(record)
        except KeyboardInterrupt:
            run.partial = True
        finally:
            bar.close()
    if run.partial:
        _count_what_reached_the_file(run, path, wanted)
        raise RunInterrupted(run)
    return run


def _count_what_reached_the_file(run: OpeningsRun, path: Path, wanted: Container[int]) -> None:
    """After Ctrl-C the file is the truth: a record whose line was written (closing the file flushed it)
    when the interrupt landed before it was counted is counted now."""
    on_disk = parse(path.read_text(encoding="utf-8"), str(path)).records
    for seed, record in on_disk.items():
        if seed in wanted and seed not in run.records:
            run.records[seed] = record
            run.new.append(seed)

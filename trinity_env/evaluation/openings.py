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
import statistics
import time
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from trinity_env.core import ArgumentError, GameState, Move
from trinity_env.core.board import EMPTY
from trinity_env.evaluation.match import RunInterrupted, chunk_results
from trinity_env.evaluation.openings_file import OpeningsError, holding, parse, read_records, whole
from trinity_env.evaluation.ratings import Share
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

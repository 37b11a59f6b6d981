"""``trinity solve-openings``: solve dealt games from their first placement (one process, a pool or a Ray cluster),
record each in a JSON-lines file as it finishes (a rerun resumes), and summarise the first mover's share."""

from __future__ import annotations

import argparse
import os

from trinity_env.arguments import record_path, whole_number
from trinity_env.cli.common import check_file, finish, interruptible, say, write_json
from trinity_env.cli.options import add_json, add_max_nodes, add_quiet, add_workers, renamed
from trinity_env.core.errors import ArgumentError
from trinity_env.core.limits import check_memory
from trinity_env.prepare import warm


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


def add(commands: argparse._SubParsersAction) -> None:
    openings = commands.add_parser(
        "solve-openings",
        help="solve dealt games from their first placement exactly (JSON lines, resumable), and summarise them",
    )
    openings.add_argument(
        "--seeds", type=seed_range, required=True, help="the dealt games: a seed N or an inclusive range, e.g. 0-999"
    )
    add_max_nodes(openings, "a deal past it is recorded as unsolved with the nodes spent", required=True)
    renamed(openings, "--budget-nodes", instead="--max-nodes N")
    openings.add_argument(
        "--max-classify-nodes",
        type=whole_number(0),
        default=0,
        metavar="N",
        help="more nodes per solved deal to find every first placement that keeps its value (default 0: "
        "record the one the search found; classifying costs many times the value)",
    )
    openings.add_argument(
        "--records",
        type=record_path,
        required=True,
        metavar="FILE",
        help="the JSON-lines file of records (appended to; a rerun resumes)",
    )
    renamed(openings, "--classify-nodes", instead="--max-classify-nodes N")
    renamed(openings, "--out", instead="--records FILE (the records file; --out names a folder)")
    add_workers(openings, "deals solved at once, a process each; with --ray local, the local cluster's CPUs", shown=1)
    renamed(openings, "--threads", instead="--workers N (deals solved at once, a process each)")
    openings.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="run each deal as a Ray task: local (alone: a cluster started here), auto, HOST:PORT or "
        "ray://HOST:PORT (needs the rllib extra)",
    )
    openings.add_argument(
        "--table-bits",
        type=whole_number(10, 32),
        default=24,
        metavar="B",
        help="the solver's table per deal: 2**B slots of 16 bytes (default 24: 256 MiB)",
    )
    add_json(openings)
    renamed(openings, "--summary", instead="--json FILE")
    add_quiet(openings)
    openings.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from trinity_env.evaluation import openings, openings_file, openings_summary
    from trinity_env.integrations.ray_cluster import check_ray_address, ray_cluster
    from trinity_env.search.solver import TABLE_SLOT_BYTES

    seeds = args.seeds
    given_workers, workers = args.workers is not None, args.workers or 1
    openings.check_openings(seeds, args.max_nodes, workers, args.table_bits, args.max_classify_nodes)
    if args.ray is not None:
        check_ray_address(args.ray)
        if given_workers and args.ray != "local":
            raise ArgumentError("--workers: a cluster's own CPUs decide how many deals run at once (--ray local only)")
    if args.ray in (None, "local"):  # each deal running here holds its own solver table
        running = min(workers, len(seeds))
        table = TABLE_SLOT_BYTES << args.table_bits
        check_memory(
            {
                f"--workers {running} with --table-bits {args.table_bits} ({running} solver tables of "
                f"{table:,} bytes)": running * table
            },
            ArgumentError,
        )
    check_file("--records", args.records, record=True)
    if os.path.exists(args.records):
        openings_file.read_records(args.records)  # a file that is not one is refused before any work
    if args.json:
        check_file("--json", args.json)
    cluster = nullcontext(None)
    if args.ray is not None:
        cluster = ray_cluster(args.ray, workers if args.ray == "local" and given_workers else None)
    with cluster as connected:  # connecting checks the address: one line, before any deal
        warm(["exact solver"])
        run, _ = interruptible(
            openings.solve_openings,
            seeds,
            args.max_nodes,
            args.records,
            threads=workers,
            table_bits=args.table_bits,
            classify_nodes=args.max_classify_nodes,
            cluster=connected,
            progress=not args.quiet,
        )
    summary = run.summary()
    shown = f"{seeds.start}-{seeds.stop - 1}" if len(seeds) > 1 else str(seeds.start)
    print(
        f"seeds {shown}: {len(run.new)} deals recorded now, {run.skipped} already in {args.records}"
        + (f" ({run.retried} unsolved ones tried again with the larger budget)" if run.retried else "")
    )
    if run.cut:
        print(f"{args.records}: its last line, cut short when a run was killed, was dropped")
    print(openings_summary.summary_text(summary, args.records))
    if args.json:
        write_json(args.json, summary | {"file": args.records})
        print(f"wrote {args.json}")
    if run.partial or not run.failed:
        return finish(
            "solve-openings", run.partial, f"{len(run.new)} deals recorded in {args.records}; run again to go on"
        )
    seeds_failed = " ".join(str(seed) for seed, _ in run.failed)
    say(
        "trinity solve-openings",
        f"{len(run.failed)} deals failed on the cluster and were not recorded "
        f"(run again to retry them): seeds {seeds_failed}; first: {run.failed[0][1]}",
    )
    return 1

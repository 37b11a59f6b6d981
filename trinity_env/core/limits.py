"""One table of resource limits: how many threads and processes a run may start, and how much memory it may plan.

Counts people type (``--workers``, ``trinity solve --threads``, a config's ``label_workers``) and sizes
(``replay_size``, ``num_games``) are checked here before a process is spawned, a table allocated or
a run folder claimed, so a typo (``--workers 100000``, ``replay_size: 10000000000``) is one line,
not a machine brought to its knees or a run that dies "out of memory" after it started:

- ``PROCESSES_PER_CPU``: processes (or threads) at most this many times ``os.cpu_count()``; more
  only wait for a core and cost their memory. ``check_workers`` also clamps a pool to its tasks.
- ``MEMORY_SHARE``: a run's planned memory (estimated from the real array sizes, before anything
  is allocated) at most this share of the machine's physical memory (``os.sysconf``).
  The environment variable ``TRINITY_MEMORY_BUDGET`` (bytes, or with a ``K``/``M``/``G``/``T``
  suffix: ``48G``) sets the budget instead, for a machine whose swap or cgroup the share misjudges.
"""

from __future__ import annotations

import os
import re

from trinity_env.core.errors import TrinityError

PROCESSES_PER_CPU = 4
"""Processes (or threads) a count may ask for, per CPU of this machine."""
MEMORY_SHARE = 0.5
"""The share of physical memory one run may plan to use."""
MEMORY_VARIABLE = "TRINITY_MEMORY_BUDGET"
"""The environment variable that sets the memory budget in bytes (``K``, ``M``, ``G``, ``T``: binary units)."""
FALLBACK_MEMORY = 8 * 2**30
"""Physical memory assumed where ``os.sysconf`` cannot say (not Linux or macOS)."""
MAX_SERVER_GAMES = 10_000
"""The most games ``trinity serve`` may keep at once (``--max-games``, ``web.store.GameStore``): a game's states take
about 22 KiB, so its store stays near 250 MB at this bound."""
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_AMOUNT = re.compile(r"([0-9]{1,15})([KMGT]?)(?:i?B)?", re.ASCII | re.IGNORECASE)


def cpus() -> int:
    """The CPUs of this machine (``os.cpu_count()``; 1 where it cannot say)."""
    return os.cpu_count() or 1


def max_processes() -> int:
    """The most processes (or threads) a count may ask for: ``PROCESSES_PER_CPU`` x ``cpus()``."""
    return PROCESSES_PER_CPU * cpus()


def count_problem(count: int) -> str | None:
    """Why ``count`` processes or threads are too many for this machine (one phrase), or ``None``."""
    most = max_processes()
    if count <= most:
        return None
    return f"{count:,} is more than this machine can use (at most {most:,}: {PROCESSES_PER_CPU} per CPU, {cpus()} CPUs)"


def check_processes(what: str, count: int, error: type[Exception] = TrinityError) -> int:
    """``count`` processes or threads if at most ``max_processes()``; else ``error`` in one line naming ``what``."""
    problem = count_problem(count)
    if problem is not None:
        raise error(f"{what}: {problem}")
    return count


def check_workers(what: str, workers: int | None, tasks: int, error: type[Exception] = TrinityError) -> int:
    """The processes of a pool for ``tasks`` tasks: ``workers`` (default: every CPU) within ``check_processes``'s bound,
    clamped to the tasks (a worker with no task is never started)."""
    if workers is not None:
        check_processes(what, workers, error)
    return max(1, min(workers or cpus(), tasks))


def physical_memory() -> int:
    """This machine's physical memory in bytes (``os.sysconf``; ``FALLBACK_MEMORY`` where it cannot say)."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return FALLBACK_MEMORY
    return pages * size if pages > 0 and size > 0 else FALLBACK_MEMORY


def memory_budget(error: type[Exception] = TrinityError) -> tuple[int, str]:
    """The bytes a run may plan to use, and where that figure comes from (for a message)."""
    text = os.environ.get(MEMORY_VARIABLE)
    if text is None or not text.strip():
        return int(
            physical_memory() * MEMORY_SHARE
        ), f"{MEMORY_SHARE:.0%} of this machine's memory; {MEMORY_VARIABLE} sets another"
    match = _AMOUNT.fullmatch(text.strip())
    if match is None or int(match[1]) == 0:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise error(f"{MEMORY_VARIABLE} must be a number of bytes above 0 (e.g. 8G), got {shown!r}")
    return int(match[1]) * _UNITS[match[2].upper()], f"set by {MEMORY_VARIABLE}"


def size(count: float) -> str:
    """Bytes as a short figure: ``512 MiB``, ``1.5 GiB``, ``9.1 TiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{int(count)} bytes"


def check_memory(parts: dict[str, int], error: type[Exception] = TrinityError, source: str = "") -> None:
    """Refuse, in one line, a plan whose ``parts`` (a name -- a field or option and what it holds -- to its
    estimated bytes) add up to more than ``memory_budget()``; the line names the largest part."""
    budget, where = memory_budget(error)
    total = sum(parts.values())
    if total <= budget:
        return
    name, largest = max(parts.items(), key=lambda item: item[1])
    rest = f" (all together {size(total)})" if total > 1.01 * largest else ""
    prefix = f"{source}: " if source else ""
    raise error(f"{prefix}{name} needs about {size(largest)}{rest}, over the memory budget of {size(budget)} ({where})")

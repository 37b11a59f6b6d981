"""Run the notebooks top to bottom and save them with their outputs (plots included).

    python notebooks/execute.py                  # full budgets, outputs written back
    python notebooks/execute.py --budget small   # the tiny budgets CI uses, nothing written

Each notebook runs in its own kernel with ``notebooks/`` as working directory; the
``TRINITY_NOTEBOOK_BUDGET`` environment variable tells its cells how much to do.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))


def execute(path: Path, budget: str = "full", timeout: int = 1200) -> nbformat.NotebookNode:
    """The notebook at ``path``, executed; a failing cell raises ``nbclient`` 's CellExecutionError."""
    notebook = nbformat.read(path, as_version=4)
    previous = os.environ.get("TRINITY_NOTEBOOK_BUDGET")
    os.environ["TRINITY_NOTEBOOK_BUDGET"] = budget  # the kernel inherits this process's environment
    try:
        NotebookClient(
            notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
        ).execute()
    finally:
        if previous is None:
            os.environ.pop("TRINITY_NOTEBOOK_BUDGET")
        else:
            os.environ["TRINITY_NOTEBOOK_BUDGET"] = previous
    return notebook


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", choices=["full", "small"], default="full")
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    args = parser.parse_args()
    for path in NOTEBOOKS:
        if args.names and not any(name in path.name for name in args.names):
            continue
        started = time.perf_counter()
        notebook = execute(path, args.budget)
        if args.budget == "full":
            nbformat.write(notebook, path)
        print(f"{path.name}: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

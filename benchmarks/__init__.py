"""Speed measurements of the engine, the environments, search and training.

Each module is a script, run from the repository root as ``python -m benchmarks.<name>``
(``engine``, ``env``, ``fast``, ``solver``, ``mcts``, ``endgames``, ``trainers``, ``rllib``).
"""

import os


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, printed beside every timing: a busy machine slows figures unevenly."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())

"""Speed measurements of the engine, the environments, search and training.

Each module is a script, run from the repository root as ``python -m benchmarks.<name>``
(``engine``, ``env``, ``fast``, ``solver``, ``mcts``, ``endgames``, ``trainers``, ``rllib``).
"""

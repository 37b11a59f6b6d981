"""Search on the fast engine: the baselines' lookahead, MCTS, AlphaZero's batched search and the exact solver.

Each module is imported on its own (``from trinity_env.search import solver``): importing this
package compiles nothing and loads no torch.
"""

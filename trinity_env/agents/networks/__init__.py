"""The agents' networks: the policy-value networks (``network``'s MLP and its presets, PPO's ``ppo_network``, the
``board_network``), the board network's fast forward passes for the search (``board_fast``, ``board_int8``, their
``precision``) and the ``tactics`` features they read.

Nothing is imported here: each module is imported by name, so only an agent that needs torch or numba loads them.
"""

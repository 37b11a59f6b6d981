"""Gumbel's sequential halving of the simulation budget among the considered root actions (mctx's
``seq_halving.py``): at each simulation, the visit count an action must have to be considered next."""

from __future__ import annotations

import math

import numpy as np


def considered_visits(max_considered: int, simulations: int) -> tuple[int, ...]:
    """Sequential halving's schedule (mctx's ``get_sequence_of_considered_visits``): for each simulation,
    the visit count an action must have to be considered next."""
    if max_considered <= 1:
        return tuple(range(simulations))
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(sequence) < simulations:
        extra = max(1, int(simulations / (log2max * considered)))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return tuple(sequence[:simulations])


def considered_table(max_considered: int, simulations: int) -> np.ndarray:
    """``table[m, k]``: the schedule for ``m`` considered actions at simulation ``k`` (int32)."""
    table = np.zeros((max_considered + 1, max(simulations, 1)), np.int32)
    for m in range(max_considered + 1):
        table[m, :simulations] = considered_visits(m, simulations)
    return table

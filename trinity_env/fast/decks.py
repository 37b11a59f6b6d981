"""Random decks dealt in batch: the core's random-deck rule, drawn with numpy.

``FastGames`` with ``deck: random`` restarts thousands of games a second; building each
deck in Python (``trinity_env.core.random_deck``) made that about 15 times slower than the
standard deck. This draws the same distribution — ``RANDOM_DECK_A_CARDS`` different cards
with an A and the rest without, all with side sum ``RANDOM_DECK_SIDE_SUM``, in a random
order — for many decks at once. The pools are the core's.
"""

from __future__ import annotations

import functools

import numpy as np

from trinity_env.core.decks import DECK_SIZE, RANDOM_DECK_A_CARDS, RANDOM_DECK_SIDE_SUM, cards_with_side_sum


@functools.cache
def _pools() -> tuple[np.ndarray, np.ndarray]:
    with_a, without_a = cards_with_side_sum(RANDOM_DECK_SIDE_SUM)
    return np.array(with_a, np.int8), np.array(without_a, np.int8)


def _distinct_indices(rng: np.random.Generator, count: int, size: int, pool: int) -> np.ndarray:
    """``count`` rows of ``size`` different indices below ``pool``, each row uniform over such sets."""
    rows = rng.integers(0, pool, (count, size))
    while True:
        ordered = np.sort(rows, axis=1)
        repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if repeated.size == 0:
            return rows
        rows[repeated] = rng.integers(0, pool, (repeated.size, size))


def random_deck_batch(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random decks, int8 ``[count, 16, 4]`` (sides top, right, bottom, left; A = 10)."""
    with_a, without_a = _pools()
    plain = DECK_SIZE - RANDOM_DECK_A_CARDS
    cards = np.concatenate(
        [
            with_a[_distinct_indices(rng, count, RANDOM_DECK_A_CARDS, len(with_a))],
            without_a[_distinct_indices(rng, count, plain, len(without_a))],
        ],
        axis=1,
    )
    order = np.argsort(rng.random((count, DECK_SIZE)), axis=1)
    return np.take_along_axis(cards, order[:, :, None], axis=1)

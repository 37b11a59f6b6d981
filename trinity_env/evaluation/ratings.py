"""Win rates with confidence intervals, and Elo ratings with uncertainty.

Ratings are the Bradley-Terry (Elo) model fitted to every game of the round robin by
maximum likelihood, with a weak prior (one virtual draw per pair) so an agent that never
loses still gets a finite rating; their 95% intervals come from bootstrapping the games.
"""

from __future__ import annotations

import math

import numpy as np

ELO_SCALE = 400 / math.log(10)


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (draws counted as half a win). With no
    successes the low end is exactly 0, and with all successes the high end exactly 1: the
    rounded difference of two equal floats would not (2.8e-17 for 0 of 11, which a report would print)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return low, high


def fit_elo(score: np.ndarray, games: np.ndarray, iterations: int = 500) -> np.ndarray:
    """Elo ratings (mean 0) from ``score[i, j]`` (points of i against j) and ``games[i, j]``."""
    n = score.shape[0]
    score = score + 0.5 * (games + games.T > 0)  # the prior: one virtual draw per pair that played
    games = games + (games + games.T > 0)
    strength = np.ones(n)
    wins = score.sum(axis=1)
    for _ in range(iterations):  # the minorise-maximise update for Bradley-Terry
        total = games + games.T
        denominator = (total / (strength[:, None] + strength[None, :])).sum(axis=1)
        updated = np.where(denominator > 0, wins / np.maximum(denominator, 1e-12), strength)
        updated = np.maximum(updated, 1e-9)
        updated /= np.exp(np.log(updated).mean())
        if np.allclose(updated, strength, rtol=1e-10, atol=0):
            strength = updated
            break
        strength = updated
    ratings = ELO_SCALE * np.log(strength)
    return ratings - ratings.mean()


def bootstrap_elo(
    score: np.ndarray, games: np.ndarray, rng: np.random.Generator, samples: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """2.5% and 97.5% quantiles of each rating over games resampled pair by pair."""
    n = score.shape[0]
    draws = []
    for _ in range(samples):
        resampled = np.zeros_like(score)
        for i in range(n):
            for j in range(n):
                g = int(games[i, j])
                if g:
                    resampled[i, j] = rng.binomial(g, min(1.0, max(0.0, score[i, j] / g)))
        draws.append(fit_elo(resampled, games))
    stacked = np.stack(draws)
    return np.quantile(stacked, 0.025, axis=0), np.quantile(stacked, 0.975, axis=0)

"""Win rates with confidence intervals, and Elo ratings with uncertainty.

Ratings are the Bradley-Terry (Elo) model fitted to every game of the round robin by
maximum likelihood, with a weak prior (one virtual draw per pair) so an agent that never
loses still gets a finite rating; their 95% intervals come from bootstrapping the games.
A round robin's ratings have mean 0 unless ``anchor`` names an agent rated 0.

``fit_against_fixed`` rates one agent against opponents whose ratings are held fixed (the
reference pool, ``trinity_env.evaluation.anchored``): the one-dimensional maximum-likelihood
Elo, with the same prior, and its 95% likelihood-ratio (profile likelihood) interval.
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


def fit_elo(score: np.ndarray, games: np.ndarray, iterations: int = 500, anchor: int | None = None) -> np.ndarray:
    """Elo ratings from ``score[i, j]`` (points of i against j) and ``games[i, j]``: mean 0, or with agent
    ``anchor`` rated 0."""
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
    return ratings - (ratings.mean() if anchor is None else ratings[anchor])


def bootstrap_elo(
    score: np.ndarray, games: np.ndarray, rng: np.random.Generator, samples: int = 200, anchor: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """2.5% and 97.5% quantiles of each rating over games resampled pair by pair (each fit anchored as
    ``fit_elo``'s ``anchor`` says)."""
    n = score.shape[0]
    draws = []
    for _ in range(samples):
        resampled = np.zeros_like(score)
        for i in range(n):
            for j in range(n):
                g = int(games[i, j])
                if g:
                    resampled[i, j] = rng.binomial(g, min(1.0, max(0.0, score[i, j] / g)))
        draws.append(fit_elo(resampled, games, anchor=anchor))
    stacked = np.stack(draws)
    return np.quantile(stacked, 0.025, axis=0), np.quantile(stacked, 0.975, axis=0)


Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval: the likelihood-ratio interval drops the
log-likelihood by ``Z95 ** 2 / 2`` (the chi-squared quantile of one degree of freedom, halved)."""


def _log_likelihood(rating: float, fixed: np.ndarray, score: np.ndarray, games: np.ndarray) -> float:
    x = (rating - fixed) / ELO_SCALE  # log-odds of beating each opponent
    return float(-(score * np.logaddexp(0.0, -x) + (games - score) * np.logaddexp(0.0, x)).sum())


def _slope(rating: float, fixed: np.ndarray, score: np.ndarray, games: np.ndarray) -> float:
    p = 0.5 * (1.0 + np.tanh((rating - fixed) / (2 * ELO_SCALE)))  # the logistic, without overflow
    return float((score - games * p).sum())


def _root(function, low: float, high: float) -> float:
    """Where the decreasing ``function`` crosses 0, by bisection after widening ``[low, high]`` until it brackets it:
    the same floats in, the same rating out."""
    width = high - low
    while function(low) < 0:
        low -= width
        width *= 2
    width = high - low
    while function(high) > 0:
        high += width
        width *= 2
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if function(middle) > 0:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def fit_against_fixed(
    fixed: np.ndarray, score: np.ndarray, games: np.ndarray, z: float = Z95
) -> tuple[float, float, float]:
    """The Elo of one agent that scored ``score[m]`` points in ``games[m]`` games against opponents rated
    ``fixed[m]``, those ratings held fixed: ``(rating, low, high)``.

    ``rating`` maximises the Bradley-Terry log-likelihood (draws count half a win), with ``fit_elo``'s prior (one
    virtual draw against each opponent played) so that winning every game still gives a finite rating; ``low`` and
    ``high`` bound the 95% likelihood-ratio interval, the ratings whose log-likelihood is within ``z**2 / 2`` of the
    maximum (one parameter, so this is the profile likelihood). The opponents' own uncertainty is not in it.
    """
    fixed, score, games = (np.asarray(a, dtype=float).ravel() for a in (fixed, score, games))
    if not (fixed.shape == score.shape == games.shape):
        raise ValueError(f"fixed, score and games must have one length, got {fixed.size}, {score.size}, {games.size}")
    if not (np.isfinite(fixed).all() and np.isfinite(score).all() and np.isfinite(games).all()):
        raise ValueError("ratings, scores and games must be finite")
    if (games < 0).any() or (score < 0).any() or (score > games).any():
        raise ValueError("each score must lie between 0 and its number of games")
    played = games > 0
    if not played.any():
        raise ValueError("no games against the fixed opponents: nothing to rate")
    fixed, score, games = fixed[played], score[played] + 0.5, games[played] + 1.0  # the prior
    low, high = float(fixed.min()) - ELO_SCALE, float(fixed.max()) + ELO_SCALE
    best = _root(lambda r: _slope(r, fixed, score, games), low, high)
    top = _log_likelihood(best, fixed, score, games)
    drop = z * z / 2

    def excess(r: float) -> float:  # > 0 inside the interval
        return _log_likelihood(r, fixed, score, games) - (top - drop)

    lower = _root(lambda r: -excess(r), best - ELO_SCALE, best)
    upper = _root(excess, best, best + ELO_SCALE)
    return best, lower, upper

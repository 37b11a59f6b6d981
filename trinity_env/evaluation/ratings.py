"""Win rates with confidence intervals, and Elo ratings with uncertainty.

``Share`` is every figure that is a proportion (a win rate, accuracy, puzzles solved): ``hits`` of ``total`` with
its 95% Wilson interval (``wilson_interval``), written to JSON and read back strictly.

Ratings are the Bradley-Terry (Elo) model fitted to every game of the round robin by
maximum likelihood, with a weak prior (one virtual draw per pair) so an agent that never
loses still gets a finite rating; their 95% intervals come from bootstrapping the games.
A round robin's ratings have mean 0 unless ``anchor`` names an agent rated 0.

``fit_against_fixed`` rates one agent against opponents whose ratings are held fixed (the
reference pool, ``trinity_env.evaluation.anchored``): the one-dimensional maximum-likelihood
Elo, with the same prior, and its 95% robust interval (``ROBUST``: the likelihood ratio's, widened
where the results against each opponent vary more than the model predicts), or the likelihood-ratio
interval alone where asked for (``LIKELIHOOD``, which trusts the model).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

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


SHARE_KEYS = ("hits", "total", "share", "low", "high")
"""A ``Share``'s JSON fields, in the order written."""


@dataclass(frozen=True)
class Share:
    """``hits`` of ``total``, with its 95% Wilson interval: a win rate (a draw is half a hit, so ``hits`` may hold
    halves), a share of moves or puzzles. A whole ``hits`` is kept as an ``int`` (``12.0`` and ``12`` are one share).

    Its JSON is ``{"hits", "total", "share", "low", "high"}``; with nothing counted (``total`` 0) the last three are
    ``null``. ``from_json`` reads it back strictly: every field there, no other, each of its type, and the three
    figures the ones ``hits`` and ``total`` give."""

    hits: float
    total: int

    def __post_init__(self) -> None:
        total, hits = self.total, self.hits
        if isinstance(total, bool) or not isinstance(total, numbers.Integral) or total < 0:
            raise ValueError(f"a share's total must be a whole number >= 0, got {total!r}")
        if isinstance(hits, bool) or not isinstance(hits, numbers.Real) or not 0 <= hits <= total:
            raise ValueError(f"a share's hits must be a number from 0 to its total {int(total)}, got {hits!r}")
        object.__setattr__(self, "total", int(total))
        object.__setattr__(self, "hits", int(hits) if float(hits).is_integer() else float(hits))

    @property
    def value(self) -> float:
        """``hits / total`` (NaN when nothing was counted)."""
        return self.hits / self.total if self.total else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval (``wilson_interval``; ``(0, 1)`` when nothing was counted)."""
        return wilson_interval(self.hits, self.total)

    def text(self) -> str:
        """``"61.5% [55.0%, 67.6%]"``, or ``"-"`` when nothing was counted."""
        if not self.total:
            return "-"
        low, high = self.interval
        return f"{self.value:.1%} [{low:.1%}, {high:.1%}]"

    def to_json(self) -> dict[str, Any]:
        if not self.total:
            return {"hits": self.hits, "total": 0, "share": None, "low": None, "high": None}
        low, high = self.interval
        return {"hits": self.hits, "total": self.total, "share": self.value, "low": low, "high": high}

    @classmethod
    def from_json(cls, data: object, where: str = "share") -> Share:
        """The share ``to_json`` wrote; ``ValueError`` in one line (prefixed ``where``) for anything else."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object with {', '.join(SHARE_KEYS)}, got {type(data).__name__}")
        missing = [key for key in SHARE_KEYS if key not in data]
        extra = sorted(str(key) for key in data if key not in SHARE_KEYS)
        if missing or extra:
            said = [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown {', '.join(extra)}"] * bool(extra)
            raise ValueError(f"{where}: {'; '.join(said)} (a share has {', '.join(SHARE_KEYS)})")
        for key in ("hits", "total"):
            if isinstance(data[key], bool) or not isinstance(data[key], int | float):
                raise ValueError(f"{where}: {key} must be a number, got {data[key]!r}")
        if isinstance(data["total"], float):
            raise ValueError(f"{where}: total must be a whole number, got {data['total']!r}")
        try:
            share = cls(data["hits"], data["total"])
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        for key, expected in zip(SHARE_KEYS[2:], list(share.to_json().values())[2:]):
            given = data[key]
            if expected is None:
                ok = given is None
            else:
                number = isinstance(given, int | float) and not isinstance(given, bool)
                ok = number and math.isclose(given, expected, rel_tol=1e-9, abs_tol=1e-12)
            if not ok:
                raise ValueError(f"{where}: {key} is {given!r}, but {share.hits} of {share.total} gives {expected!r}")
        return share


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


ROBUST = "robust"
"""``fit_against_fixed``'s default interval: the likelihood-ratio interval widened by the results' overdispersion
(quasi-likelihood): the ratings whose log-likelihood is within ``phi * z**2 / 2`` of the maximum, where ``phi`` is
the variance of the points the games show (against opponent ``m``, ``n_m p_m (1 - p_m)``, ``p_m`` the share of
points it gave, the prior's half point in one more game included) over the variance the model predicts at the
fitted rating (``n_m E_m (1 - E_m)``), at least 1. Each game is one draw; what it does not assume is that the model
fits: a policy that wins half its games against weak and strong alike (or a deterministic policy against
deterministic opponents, which meet in a handful of distinct games, beating some strong ones and losing to weak
ones) has results that vary far more from seed to seed than the model predicts, and this interval widens with them
(``benchmarks/rating_coverage.py`` measures how often it covers on real games, ``benchmarks/rating_interval.py``
where the true results are known). This is the sandwich (Huber-White) variance of the maximum-likelihood rating,
right for any shape of results while the games are independent draws, as each game with its own seed is. Where the
model fits, it is the likelihood ratio's."""
LIKELIHOOD = "likelihood"
"""The likelihood-ratio (profile likelihood) interval: right when the model fits, too narrow when it does not."""


def fit_against_fixed(
    fixed: np.ndarray, score: np.ndarray, games: np.ndarray, z: float = Z95, interval: str = ROBUST
) -> tuple[float, float, float]:
    """The Elo of one agent that scored ``score[m]`` points in ``games[m]`` games against opponents rated
    ``fixed[m]``, those ratings held fixed: ``(rating, low, high)``.

    ``rating`` maximises the Bradley-Terry log-likelihood (draws count half a win), with ``fit_elo``'s prior (one
    virtual draw against each opponent played) so that winning every game still gives a finite rating; ``low`` and
    ``high`` bound its 95% interval: ``ROBUST`` (the default), or ``LIKELIHOOD``, the ratings whose log-likelihood is
    within ``z**2 / 2`` of the maximum (one parameter, so this is the profile likelihood). The opponents' own
    uncertainty is in neither.
    """
    if interval not in (ROBUST, LIKELIHOOD):
        raise ValueError(f"interval must be {ROBUST!r} or {LIKELIHOOD!r}, got {interval!r}")
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
    drop = z * z / 2 * (_overdispersion(best, fixed, score, games) if interval == ROBUST else 1.0)

    def excess(r: float) -> float:  # > 0 inside the interval
        return _log_likelihood(r, fixed, score, games) - (top - drop)

    lower = _root(lambda r: -excess(r), best - ELO_SCALE, best)
    upper = _root(excess, best, best + ELO_SCALE)
    return best, lower, upper


def _overdispersion(best: float, fixed: np.ndarray, score: np.ndarray, games: np.ndarray) -> float:
    """``ROBUST``'s factor: the variance of the points the games show over the variance the model predicts at
    ``best`` (``score`` and ``games`` with the prior in them), at least 1."""
    shares = score / games
    p = 0.5 * (1.0 + np.tanh((best - fixed) / (2 * ELO_SCALE)))
    return max(1.0, float((games * shares * (1.0 - shares)).sum()) / float((games * p * (1.0 - p)).sum()))
